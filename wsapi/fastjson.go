package wsapi

import (
	"encoding/json"
	"strconv"

	"github.com/pulselog/pulse/wsapi/wire"
)

// fastDecode parses, with the strict reader of package wire, the common shape of a request in one pass over msg,
// without reflection: a JSON object whose keys are spelled exactly as in the
// protocol, with string, integer, boolean and object fields of the right
// types, and record values kept as sub-slices of msg. Anything else (escaped
// keys, other spellings, nulls, config objects, numbers that need
// conversion, invalid JSON) reports ok == false, and the caller decodes with
// encoding/json, which is authoritative: when ok is true the result is the
// one json.Unmarshal would give (FuzzFastDecode checks it).
func fastDecode(msg []byte, req *request) (ok bool) {
	p := wire.NewParser(msg)
	p.SkipWS()
	if !p.ObjectFields(func(key []byte) bool { return requestField(&p, key, req) }) {
		return false
	}
	p.SkipWS()
	return p.Done()
}

// requestField reads one field of a request object.
func requestField(p *wire.Parser, key []byte, req *request) bool {
	switch string(key) {
	case "op":
		b, ok := p.PlainBytes()
		req.Op = opName(b)
		return ok
	case "id":
		if p.Peek() == 'n' { // null: encoding/json keeps the literal too, but keep it simple
			return false
		}
		v, ok := p.Value()
		req.ID = json.RawMessage(v)
		return ok
	case "topic":
		b, ok := p.PlainBytes()
		if req.Topic = req.lastTopic; string(b) != req.Topic {
			req.Topic = string(b)
		}
		return ok
	case "partition":
		n, ok := p.Integer(strconv.IntSize)
		v := int(n)
		req.Partition = &v
		return ok
	case "records":
		req.Records = req.spare[:0]
		n, ok := p.Elements(func() bool {
			req.Records = append(req.Records, wire.RecordIn{})
			r := &req.Records[len(req.Records)-1]
			return p.ObjectFields(func(k []byte) bool { return recordField(p, k, r) })
		})
		return ok && n > 0 // an empty array: let encoding/json decide its shape
	case "consumer":
		s, ok := p.PlainString()
		req.Consumer = s
		return ok
	case "sub":
		n, ok := p.Integer(64)
		req.Sub = n
		return ok
	case "offset":
		n, ok := p.Integer(64)
		req.Offset = &n
		return ok
	case "format":
		s, ok := p.PlainString()
		req.Format = s
		return ok
	case "from":
		v, ok := p.Value()
		req.From = json.RawMessage(v)
		return ok
	}
	return recordField(p, key, &req.RecordIn)
}

// opName is string(b), without allocating for the ops of the protocol.
func opName(b []byte) string {
	switch string(b) {
	case "produce":
		return "produce"
	case "subscribe":
		return "subscribe"
	case "unsubscribe":
		return "unsubscribe"
	case "commit":
		return "commit"
	}
	return string(b)
}

// recordField reads one field of a record object.
func recordField(p *wire.Parser, key []byte, r *wire.RecordIn) bool {
	switch string(key) {
	case "key":
		s, ok := p.PlainString()
		r.Key = &s
		return ok
	case "key_b64":
		s, ok := p.PlainString()
		r.KeyB64 = &s
		return ok
	case "value":
		if p.Peek() == 'n' {
			return false // null
		}
		v, ok := p.Value()
		r.Value = json.RawMessage(v)
		return ok
	case "value_b64":
		s, ok := p.PlainString()
		r.ValueB64 = &s
		return ok
	case "tombstone":
		b, ok := p.Boolean()
		r.Tombstone = b
		return ok
	case "headers":
		return p.StringMap(&r.Headers)
	case "headers_b64":
		return p.StringMap(&r.HeadersB64)
	case "partition":
		n, ok := p.Integer(strconv.IntSize)
		v := int(n)
		r.Partition = &v
		return ok
	}
	return false // unknown or differently spelled key: slow path
}
