package wsapi

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
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

// skip skips one JSON value, checking its syntax.
func (p *fastParser) skip(depth int) bool {
	i, ok := skipValue(p.b, p.i, maxFastDepth-depth)
	p.i = i
	return ok
}

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value at b[i:], checking its syntax
// without recursion; nesting deeper than maxDepth fails.
func skipValue(b []byte, i int, maxDepth int) (int, bool) {
	var stack [maxFastDepth]byte // the open containers, '{' or '['
	depth := 0
	for {
		// A value starts at i.
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		ok := true
		switch c := b[i]; {
		case c == '{' || c == '[':
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			if j := skipWS(b, i+1); j < len(b) && b[j] == end {
				i = j + 1
				break // an empty container is a whole value
			}
			if depth >= maxDepth || depth == len(stack) {
				return i, false
			}
			stack[depth] = c
			depth++
			i++
			if c == '{' {
				if i, ok = objectKey(b, i); !ok {
					return i, false
				}
			}
			continue
		case c == '"':
			i, ok = skipStr(b, i)
		case c == '-' || (c >= '0' && c <= '9'):
			i, ok = skipNum(b, i)
		case c == 't':
			i, ok = skipLit(b, i, "true")
		case c == 'f':
			i, ok = skipLit(b, i, "false")
		case c == 'n':
			i, ok = skipLit(b, i, "null")
		default:
			return i, false
		}
		if !ok {
			return i, false
		}
		// After a value: close containers, or go on to the next element.
	after:
		for {
			if depth == 0 {
				return i, true
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			top := stack[depth-1]
			switch {
			case b[i] == ',':
				i++
				if top == '{' {
					if i, ok = objectKey(b, i); !ok {
						return i, false
					}
				}
				break after
			case (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']'):
				i++
				depth--
			default:
				return i, false
			}
		}
	}
}

// objectKey skips `"key" :` (with whitespace) and returns where the value
// starts.
func objectKey(b []byte, i int) (int, bool) {
	i, ok := skipStr(b, skipWS(b, i))
	if !ok {
		return i, false
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return i + 1, true
}

func skipLit(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// skipStr returns the end of the string at b[i:], checking its escapes
// (bytes >= 0x80 are taken as they are, as encoding/json's scanner does).
// Plain bytes are skipped eight at a time: the lowest flagged byte of a
// word is where the run ends.
func skipStr(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	j := i + 1
	for {
		j = plainRun(b, j)
		if j >= len(b) {
			return i, false
		}
		switch b[j] {
		case '"':
			return j + 1, true
		case '\\':
			j++
			if j >= len(b) {
				return i, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return i, false
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return i, false
					}
				}
				j += 4
			default:
				return i, false
			}
			j++
		default: // a control character
			return i, false
		}
	}
}

// plainRun returns the index of the first byte at or after j that is a
// quote, a backslash or a control character (len(b) when there is none).
func plainRun(b []byte, j int) int {
	for j+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[j:])
		if m := zeroBytes(x^(ones*'"')) | zeroBytes(x^(ones*'\\')) | lessBytes(x, 0x20); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		j += 8
	}
	for j < len(b) && b[j] >= 0x20 && b[j] != '"' && b[j] != '\\' {
		j++
	}
	return j
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber skips a number (see skipNum).
func (p *fastParser) skipNumber() bool {
	i, ok := skipNum(p.b, p.i)
	p.i = i
	return ok
}

// skipNum returns the end of the number at b[i:], with JSON's grammar.
func skipNum(b []byte, i int) (int, bool) {
	start := i
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
		return start, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return start, false
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
			return start, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, true
}

// Word-at-a-time byte tests (the bit-twiddling classics): ones has 0x01 in
// every byte, highs 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroBytes sets the high bit of the bytes of x that are zero. Bytes above
// (more significant than) a zero byte may be flagged too, but the lowest
// flagged byte is always exact: borrows only travel upwards.
func zeroBytes(x uint64) uint64 { return (x - ones) &^ x & highs }

// lessBytes sets the high bit of the bytes of x below n (n <= 128), with
// zeroBytes's guarantee for the lowest flagged byte.
func lessBytes(x, n uint64) uint64 { return (x - ones*n) &^ x & highs }

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
		req.Records = req.Records[:0]
		n, ok := p.elements(func() bool {
			req.Records = append(req.Records, RecordIn{})
			r := &req.Records[len(req.Records)-1]
			return p.objectFields(func(k []byte) bool { return p.recordField(k, r) })
		})
		return ok && n > 0 // an empty array: let encoding/json decide its shape
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
