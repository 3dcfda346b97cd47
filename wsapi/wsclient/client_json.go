package wsclient

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// The client's fast parsers of the server's replies, pushes and records:
// each reads the messages of one shape exactly as the server writes them
// and refuses anything else, which the client then decodes with
// encoding/json. They use the strict reader of package wire.

// fastAcks parses the reply the server sends for a batch produce,
// {"id":N,"acks":[{"partition":P,"offset":O,"timestamp":T},...]}, exactly as
// the server writes it. Anything else reports ok == false (and the caller
// uses encoding/json).
func fastAcks(msg []byte, env *envelope) (ok bool) {
	p := wire.NewParser(msg)
	lit := p.Lit
	num := func() (int64, bool) { return p.Integer(64) }
	if !lit(`{"id":`) {
		return false
	}
	id, ok := num()
	if !ok || !lit(`,"acks":[`) {
		return false
	}
	acks := make([]engine.Ack, 0, 128)
	for {
		var a engine.Ack
		var part int64
		if !lit(`{"partition":`) {
			return false
		}
		if part, ok = num(); !ok || !lit(`,"offset":`) {
			return false
		}
		if a.Offset, ok = num(); !ok || !lit(`,"timestamp":`) {
			return false
		}
		if a.Timestamp, ok = num(); !ok || !lit("}") {
			return false
		}
		a.Partition = int(part)
		acks = append(acks, a)
		if lit(",") {
			continue
		}
		if !lit("]}") || !p.Done() {
			return false
		}
		env.ID = &id
		env.Acks = acks
		return true
	}
}

// fastReply parses the other messages a producing or tailing client
// receives by the thousand: the ack of a single-record produce,
// {"id":N,"partition":P,"offset":O,"timestamp":T}, and a push,
// {"sub":S,"partition":P,"next":N,"skipped":K,"records":[...]}, whose
// records are kept as raw slices of msg for DecodeRecord. Anything else
// (errors, replies of other ops, unusual spellings) reports ok == false and
// leaves env alone, for encoding/json.
func fastReply(msg []byte, env *envelope) (ok bool) {
	p := wire.NewParser(msg)
	var e envelope
	ok = p.ObjectFields(func(key []byte) bool {
		if placed, ok := placeField(&p, key, &e.Partition, &e.Offset, &e.Timestamp); placed {
			return ok
		}
		var n int64
		var ok bool
		switch string(key) {
		case "id":
			n, ok = p.Integer(64)
			e.ID = &n
		case "sub":
			e.Sub, ok = p.Integer(64)
		case "next":
			e.Next, ok = p.Integer(64)
		case "skipped":
			e.Skipped, ok = p.Integer(64)
		case "records":
			e.Records, ok = p.RawArray()
		case "value_lens":
			_, ok = p.Value() // fastPush's business
		}
		return ok
	})
	p.SkipWS()
	if !ok || !p.Done() {
		return false
	}
	*env = e
	return true
}

// placeField reads the partition, offset and timestamp fields that acks,
// pushes and records share; placed is false for any other key.
func placeField(p *wire.Parser, key []byte, partition *int, offset, timestamp *int64) (placed, ok bool) {
	switch string(key) {
	case "partition":
		n, ok := p.Integer(strconv.IntSize)
		*partition = int(n)
		return true, ok
	case "offset":
		*offset, ok = p.Integer(64)
		return true, ok
	case "timestamp":
		*timestamp, ok = p.Integer(64)
		return true, ok
	}
	return false, false
}

// fastRecord parses a record as the server writes it (wire.AppendRecordJSON)
// when it has only the common fields: partition, offset, timestamp, a plain
// key, a value that is JSON or a plain string, or a tombstone, and headers
// with plain names and values. Anything else reports ok == false, for
// encoding/json.
func fastRecord(raw []byte) (r Record, ok bool) {
	p := wire.NewParser(raw)
	if !record(&p, &r, -1) {
		return Record{}, false
	}
	p.SkipWS()
	if !p.Done() {
		return Record{}, false
	}
	r.Raw = json.RawMessage(raw)
	return r, true
}

// record reads one record object at p's position as fastRecord does, leaving p after
// it; r.Raw is the object's bytes. vlen is the record's entry of its
// push's value_lens, or -1 when there is none: then every value is checked
// (Parser.Value). With vlen, an embedded object or array is found by its
// length (Parser.ValueOfLen), and the record must agree with vlen: a value
// field of exactly vlen bytes, or none and vlen 0.
func record(p *wire.Parser, r *Record, vlen int) bool {
	start := p.Pos()
	var value []byte
	var tomb bool
	hasValue := false
	ok := p.ObjectFields(func(key []byte) bool {
		if placed, ok := placeField(p, key, &r.Partition, &r.Offset, &r.Timestamp); placed {
			return ok
		}
		var ok bool
		switch string(key) {
		case "key":
			// Plain strings are their bytes: sub-slices of the message,
			// like Raw (the read loop reads each message into a buffer
			// of its own).
			r.Key, ok = p.PlainBytes()
			r.Key = r.Key[:len(r.Key):len(r.Key)]
		case "value":
			hasValue = true
			at := p.Pos()
			switch {
			case p.Peek() == '"':
				value, ok = p.PlainBytes()
				value = value[:len(value):len(value)]
				ok = ok && (vlen < 0 || p.Pos()-at == vlen)
			case vlen >= 0:
				value, ok = p.ValueOfLen(vlen)
			default:
				value, ok = p.Value()
			}
		case "tombstone":
			tomb, ok = p.Boolean()
		case "headers", "headers_b64":
			ok = headerFields(p, r, string(key) == "headers_b64")
		}
		return ok
	})
	if !ok || !hasValue && vlen > 0 {
		return false
	}
	if !tomb {
		r.Value = value
	}
	if len(r.Headers) > 1 {
		// In their names' order, as encoding/json's maps give them
		// (decodeRecordJSON).
		slices.SortFunc(r.Headers, func(a, b engine.Header) int { return strings.Compare(a.Key, b.Key) })
	}
	r.Raw = json.RawMessage(p.Since(start))
	return true
}

// headerFields reads a record's "headers" (text values) or "headers_b64"
// (base64 values) object into r.Headers: plain names and values (no
// escapes: otherwise encoding/json's), each name once across both objects
// (a repeated one is encoding/json's too, which keeps the last). Text
// values are sub-slices of the message, as keys are.
func headerFields(p *wire.Parser, r *Record, b64 bool) bool {
	return p.ObjectFields(func(name []byte) bool {
		v, ok := p.PlainBytes()
		if !ok {
			return false
		}
		if b64 {
			d := make([]byte, base64.StdEncoding.DecodedLen(len(v)))
			n, err := base64.StdEncoding.Decode(d, v)
			if err != nil {
				return false
			}
			v = d[:n]
		} else {
			v = v[:len(v):len(v)]
		}
		for _, h := range r.Headers {
			if h.Key == string(name) {
				return false
			}
		}
		r.Headers = append(r.Headers, engine.Header{Key: string(name), Value: v})
		return true
	})
}

// fastPush parses a push as the server writes it,
// {"sub":S,"partition":P,"next":N[,"skipped":K],"records":[...],"value_lens":[...]},
// reading each record as fastRecord does in the same pass (so that no
// record is scanned twice), except that an embedded object or array value
// is found by its value_lens length rather than checked again
// (wire.FindValueLens; a push without value_lens, from an older server, is
// checked in full). Anything else, or any record fastRecord would refuse,
// reports ok == false and leaves env alone, for fastReply.
func fastPush(msg []byte, env *envelope) (recs []Record, ok bool) {
	lensAt, lens, hinted := wire.FindValueLens(msg)
	p := wire.NewParser(msg)
	var e envelope
	lensSeen := false
	ok = p.ObjectFields(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "sub":
			e.Sub, ok = p.Integer(64)
		case "partition":
			var n int64
			n, ok = p.Integer(strconv.IntSize)
			e.Partition = int(n)
		case "next":
			e.Next, ok = p.Integer(64)
		case "skipped":
			e.Skipped, ok = p.Integer(64)
		case "records":
			if hinted {
				recs = make([]Record, 0, lens.Count())
			}
			_, ok = p.Elements(func() bool {
				vlen := -1
				if hinted {
					n, ok := lens.Next()
					if !ok {
						return false
					}
					vlen = n
				}
				recs = append(recs, Record{})
				return record(&p, &recs[len(recs)-1], vlen)
			})
			e.Records = make([]json.RawMessage, len(recs))
			for i := range recs {
				e.Records[i] = recs[i].Raw
			}
		case "value_lens":
			// Read already, when it ends the push as the server writes
			// it and right after the records.
			lensSeen = true
			ok = hinted && p.Pos() == lensAt+len(`,"value_lens":`) && lens.Done() && p.SkipTo(len(msg)-1)
		}
		return ok // any other key (id, error): not a push
	})
	p.SkipWS()
	if !ok || !p.Done() || e.Sub == 0 || e.Records == nil || hinted != lensSeen {
		return nil, false
	}
	*env = e
	return recs, true
}

// binaryPush decodes a binary push (wire.ParseBinaryPush) into env and
// returns its records: their keys, values and header values are
// sub-slices of msg, which the client never reuses (each message is read
// into a buffer of its own), so they stay valid as long as a caller keeps
// them, and keep msg alive as long. A message without a push header leaves
// env.Sub 0; a header followed by malformed records sets env.Error, so
// that the subscription reports it.
func binaryPush(msg []byte, env *envelope) []Record {
	h, err := wire.ParseBinaryPush(msg)
	if err != nil {
		return nil
	}
	*env = envelope{Sub: h.Sub, Partition: h.Partition, Next: h.Next, Skipped: h.Skipped}
	recs := make([]Record, h.Count)
	err = h.Each(func(n int, r *engine.Record) {
		recs[n] = Record{Partition: h.Partition, Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers}
	})
	if err != nil {
		env.Error = wire.Errorf(wire.CodeInternal, "binary push from server: %v", err)
		return nil
	}
	return recs
}
