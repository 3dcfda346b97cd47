package wsapi

import (
	"encoding/json"
	"strconv"

	"github.com/pulselog/pulse/engine"
)

// The client's fast parsers of the server's replies, pushes and records:
// each reads the messages of one shape exactly as the server writes them
// and refuses anything else, which the client then decodes with
// encoding/json. They use the strict reader of fastjson.go.

// fastAcks parses the reply the server sends for a batch produce,
// {"id":N,"acks":[{"partition":P,"offset":O,"timestamp":T},...]}, exactly as
// the server writes it. Anything else reports ok == false (and the caller
// uses encoding/json).
func fastAcks(msg []byte, env *envelope) (ok bool) {
	p := fastParser{b: msg}
	lit := func(s string) bool {
		if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
			return false
		}
		p.i += len(s)
		return true
	}
	num := func() (int64, bool) { return p.integer(64) }
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
		if !lit("]}") || p.i != len(p.b) {
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
	p := fastParser{b: msg}
	var e envelope
	ok = p.objectFields(func(key []byte) bool {
		if placed, ok := p.placeField(key, &e.Partition, &e.Offset, &e.Timestamp); placed {
			return ok
		}
		var n int64
		var ok bool
		switch string(key) {
		case "id":
			n, ok = p.integer(64)
			e.ID = &n
		case "sub":
			e.Sub, ok = p.integer(64)
		case "next":
			e.Next, ok = p.integer(64)
		case "skipped":
			e.Skipped, ok = p.integer(64)
		case "records":
			e.Records, ok = p.rawArray()
		}
		return ok
	})
	p.ws()
	if !ok || p.i != len(msg) {
		return false
	}
	*env = e
	return true
}

// placeField reads the partition, offset and timestamp fields that acks,
// pushes and records share; placed is false for any other key.
func (p *fastParser) placeField(key []byte, partition *int, offset, timestamp *int64) (placed, ok bool) {
	switch string(key) {
	case "partition":
		n, ok := p.integer(strconv.IntSize)
		*partition = int(n)
		return true, ok
	case "offset":
		*offset, ok = p.integer(64)
		return true, ok
	case "timestamp":
		*timestamp, ok = p.integer(64)
		return true, ok
	}
	return false, false
}

// rawArray reads an array of values, returning each value's bytes (slices
// of p.b). An empty array is an empty, non-nil slice, as encoding/json
// makes it.
func (p *fastParser) rawArray() ([]json.RawMessage, bool) {
	out := []json.RawMessage{}
	_, ok := p.elements(func() bool {
		v, ok := p.value()
		out = append(out, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// elements reads an array, calling item with p placed at each element;
// item must consume it. It returns the number of elements.
func (p *fastParser) elements(item func() bool) (int, bool) {
	if p.peek() != '[' {
		return 0, false
	}
	p.i++
	p.ws()
	if p.peek() == ']' {
		p.i++
		return 0, true
	}
	for n := 1; ; n++ {
		p.ws()
		if !item() {
			return n, false
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return n, true
		default:
			return n, false
		}
	}
}

// fastRecord parses a record as the server writes it (appendRecordJSON)
// when it has only the common fields: partition, offset, timestamp, a plain
// key, a value that is JSON or a plain string, or a tombstone. Anything
// else reports ok == false, for encoding/json.
func fastRecord(raw []byte) (r Record, ok bool) {
	p := fastParser{b: raw}
	if !p.record(&r) {
		return Record{}, false
	}
	p.ws()
	if p.i != len(raw) {
		return Record{}, false
	}
	r.Raw = json.RawMessage(raw)
	return r, true
}

// record reads one record object at p.i as fastRecord does, leaving p after
// it; r.Raw is the object's bytes.
func (p *fastParser) record(r *Record) bool {
	start := p.i
	var value []byte
	var tomb bool
	ok := p.objectFields(func(key []byte) bool {
		if placed, ok := p.placeField(key, &r.Partition, &r.Offset, &r.Timestamp); placed {
			return ok
		}
		var ok bool
		switch string(key) {
		case "key":
			var k []byte
			k, ok = p.plainBytes()
			r.Key = append([]byte{}, k...)
		case "value":
			if p.peek() == '"' {
				var v []byte
				v, ok = p.plainBytes()
				value = append([]byte{}, v...)
			} else {
				value, ok = p.value()
			}
		case "tombstone":
			tomb, ok = p.boolean()
		}
		return ok
	})
	if !ok {
		return false
	}
	if !tomb {
		r.Value = value
	}
	r.Raw = json.RawMessage(p.b[start:p.i])
	return true
}

// fastPush parses a push as the server writes it,
// {"sub":S,"partition":P,"next":N[,"skipped":K],"records":[...]}, reading
// each record as fastRecord does in the same pass (so that no record is
// scanned twice). Anything else, or any record fastRecord would refuse,
// reports ok == false and leaves env alone, for fastReply.
func fastPush(msg []byte, env *envelope) (recs []Record, ok bool) {
	p := fastParser{b: msg}
	var e envelope
	ok = p.objectFields(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "sub":
			e.Sub, ok = p.integer(64)
		case "partition":
			var n int64
			n, ok = p.integer(strconv.IntSize)
			e.Partition = int(n)
		case "next":
			e.Next, ok = p.integer(64)
		case "skipped":
			e.Skipped, ok = p.integer(64)
		case "records":
			recs, e.Records = nil, []json.RawMessage{}
			_, ok = p.elements(func() bool {
				var r Record
				if !p.record(&r) {
					return false
				}
				recs = append(recs, r)
				e.Records = append(e.Records, r.Raw)
				return true
			})
		}
		return ok // any other key (id, error): not a push
	})
	p.ws()
	if !ok || p.i != len(msg) || e.Sub == 0 || e.Records == nil {
		return nil, false
	}
	*env = e
	return recs, true
}
