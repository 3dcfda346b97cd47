package wsapi

import (
	"encoding/binary"
	"encoding/json"
	"strconv"

	"github.com/pulselog/pulse/engine"
)

// fastDecode parses the common shape of a request in one pass over msg,
// without reflection: a JSON object whose keys are spelled exactly as in the
// protocol, with string, integer, boolean and object fields of the right
// types, and record values kept as sub-slices of msg. Anything else (escaped
// keys, other spellings, nulls, config objects, numbers that need
// conversion, invalid JSON) reports ok == false, and the caller decodes with
// encoding/json, which is authoritative: when ok is true the result is the
// one json.Unmarshal would give (FuzzFastDecode checks it).
func fastDecode(msg []byte, req *request) (ok bool) {
	p := fastParser{b: msg}
	p.ws()
	if !p.objectFields(func(key []byte) bool { return p.requestField(key, req) }) {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

// validJSON is json.Valid, answered by the one-pass skipper when it can
// (most values) and by encoding/json otherwise (FuzzValidJSON checks they
// agree).
func validJSON(b []byte) bool {
	p := fastParser{b: b}
	p.ws()
	if p.skip(0) {
		p.ws()
		if p.i == len(b) {
			return true
		}
	}
	return json.Valid(b)
}

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

// fastParser is a strict, minimal JSON reader over b.
type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// objectFields reads an object, calling field for each key with p placed
// at the value; field must consume the value. A repeated key fails (its
// merging rules are encoding/json's business).
func (p *fastParser) objectFields(field func(key []byte) bool) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.peek() == '}' {
		p.i++
		return true
	}
	var seen [16][]byte
	n := 0
	for {
		p.ws()
		k, ok := p.plainBytes()
		if !ok || n == len(seen) {
			return false
		}
		for _, s := range seen[:n] {
			if string(s) == string(k) {
				return false
			}
		}
		seen[n] = k
		n++
		p.ws()
		if p.peek() != ':' {
			return false
		}
		p.i++
		p.ws()
		if !field(k) {
			return false
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// plainString reads a string without escapes, control characters or
// non-ASCII bytes (the ones whose decoding needs care: those fall back).
func (p *fastParser) plainString() (string, bool) {
	b, ok := p.plainBytes()
	return string(b), ok
}

// plainBytes is plainString returning the bytes inside the quotes.
func (p *fastParser) plainBytes() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		switch {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// value skips one JSON value, checking its syntax, and returns its bytes.
func (p *fastParser) value() ([]byte, bool) {
	start := p.i
	if !p.skip(0) {
		return nil, false
	}
	return p.b[start:p.i], true
}

// maxFastDepth bounds nesting: deeper values take the slow path.
const maxFastDepth = 64

func (p *fastParser) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch c := p.peek(); {
	case c == '{':
		p.i++
		p.ws()
		if p.peek() == '}' {
			p.i++
			return true
		}
		for {
			p.ws()
			if !p.skipString() {
				return false
			}
			p.ws()
			if p.peek() != ':' {
				return false
			}
			p.i++
			p.ws()
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case '}':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		p.i++
		p.ws()
		if p.peek() == ']' {
			p.i++
			return true
		}
		for {
			p.ws()
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return p.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.skipNumber()
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				return true
			}
		}
		return false
	}
}

// skipString skips a string, checking its escapes (bytes >= 0x80 are taken
// as they are, as encoding/json's scanner does). Runs of plain bytes are
// skipped eight at a time.
func (p *fastParser) skipString() bool {
	if p.peek() != '"' {
		return false
	}
	b := p.b
	for j := p.i + 1; j < len(b); j++ {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			if hasLess(x, 0x20) || hasZero(x^(ones*'"')) || hasZero(x^(ones*'\\')) {
				break
			}
			j += 8
		}
		if j >= len(b) {
			return false
		}
		c := b[j]
		switch {
		case c == '"':
			p.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j++
			if j >= len(b) {
				return false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return false
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return false
					}
				}
				j += 4
			default:
				return false
			}
		}
	}
	return false
}

// Word-at-a-time byte tests (the bit-twiddling classics): ones has 0x01 in
// every byte, highs 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasZero reports whether a byte of x is zero.
func hasZero(x uint64) bool { return (x-ones)&^x&highs != 0 }

// hasLess reports whether a byte of x is below n (n <= 128).
func hasLess(x, n uint64) bool { return (x-ones*n)&^x&highs != 0 }

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber skips a number with JSON's grammar.
func (p *fastParser) skipNumber() bool {
	b, i := p.b, p.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	p.i = i
	return true
}

// integer reads a plain integer (no fraction, exponent or leading zeros
// beyond "0") that fits in bits.
func (p *fastParser) integer(bits int) (int64, bool) {
	start := p.i
	if !p.skipNumber() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, bits)
	return n, err == nil
}

func (p *fastParser) boolean() (bool, bool) {
	switch {
	case len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "true":
		p.i += 4
		return true, true
	case len(p.b)-p.i >= 5 && string(p.b[p.i:p.i+5]) == "false":
		p.i += 5
		return false, true
	}
	return false, false
}

// stringMap reads an object of plain strings into a fresh map, as
// encoding/json does for a nil map (and into the existing one otherwise).
func (p *fastParser) stringMap(m *map[string]string) bool {
	if *m == nil {
		*m = map[string]string{}
	}
	return p.objectFields(func(k []byte) bool {
		v, ok := p.plainString()
		(*m)[string(k)] = v
		return ok
	})
}

// requestField reads one field of a request object.
func (p *fastParser) requestField(key []byte, req *request) bool {
	switch string(key) {
	case "op":
		s, ok := p.plainString()
		req.Op = s
		return ok
	case "id":
		if p.peek() == 'n' { // null: encoding/json keeps the literal too, but keep it simple
			return false
		}
		v, ok := p.value()
		req.ID = json.RawMessage(v)
		return ok
	case "topic":
		s, ok := p.plainString()
		req.Topic = s
		return ok
	case "partition":
		n, ok := p.integer(strconv.IntSize)
		v := int(n)
		req.Partition = &v
		return ok
	case "records":
		if p.peek() != '[' {
			return false
		}
		p.i++
		p.ws()
		req.Records = req.Records[:0]
		if p.peek() == ']' {
			p.i++
			return false // an empty array: let encoding/json decide its shape
		}
		for {
			p.ws()
			req.Records = append(req.Records, RecordIn{})
			r := &req.Records[len(req.Records)-1]
			if !p.objectFields(func(k []byte) bool { return p.recordField(k, r) }) {
				return false
			}
			p.ws()
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case "consumer":
		s, ok := p.plainString()
		req.Consumer = s
		return ok
	case "sub":
		n, ok := p.integer(64)
		req.Sub = n
		return ok
	case "offset":
		n, ok := p.integer(64)
		req.Offset = &n
		return ok
	case "from":
		v, ok := p.value()
		req.From = json.RawMessage(v)
		return ok
	}
	return p.recordField(key, &req.RecordIn)
}

// recordField reads one field of a record object.
func (p *fastParser) recordField(key []byte, r *RecordIn) bool {
	switch string(key) {
	case "key":
		s, ok := p.plainString()
		r.Key = &s
		return ok
	case "key_b64":
		s, ok := p.plainString()
		r.KeyB64 = &s
		return ok
	case "value":
		if p.peek() == 'n' {
			return false // null
		}
		v, ok := p.value()
		r.Value = json.RawMessage(v)
		return ok
	case "value_b64":
		s, ok := p.plainString()
		r.ValueB64 = &s
		return ok
	case "tombstone":
		b, ok := p.boolean()
		r.Tombstone = b
		return ok
	case "headers":
		return p.stringMap(&r.Headers)
	case "headers_b64":
		return p.stringMap(&r.HeadersB64)
	case "partition":
		n, ok := p.integer(strconv.IntSize)
		v := int(n)
		r.Partition = &v
		return ok
	}
	return false // unknown or differently spelled key: slow path
}
