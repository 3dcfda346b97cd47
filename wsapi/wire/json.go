package wire

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The strict JSON reader both sides use for their fast paths: the server
// for requests (wsapi's fastDecode), the client for replies, pushes and
// records (wsclient's fastAcks, fastReply, fastPush, fastRecord). Each fast
// path reads one shape exactly and reports ok == false for anything else,
// which its caller then decodes with encoding/json.

// ValidJSON is json.Valid, answered by the one-pass skipper when it can
// (most values) and by encoding/json otherwise (FuzzValidJSON checks they
// agree).
func ValidJSON(b []byte) bool {
	p := Parser{b: b}
	p.SkipWS()
	if p.skip(0) {
		p.SkipWS()
		if p.i == len(b) {
			return true
		}
	}
	return json.Valid(b)
}

// Parser is a strict, minimal JSON reader over b: each method reads one
// thing at the current position and reports false, leaving the position
// undefined, when the bytes there are not exactly what it reads.
type Parser struct {
	b []byte
	i int
}

// NewParser returns a Parser at the start of b.
func NewParser(b []byte) Parser { return Parser{b: b} }

// Pos is the current position in b.
func (p *Parser) Pos() int { return p.i }

// Done reports whether the whole of b has been read.
func (p *Parser) Done() bool { return p.i == len(p.b) }

// Since returns b from start to the current position.
func (p *Parser) Since(start int) []byte { return p.b[start:p.i] }

// Lit reads the exact bytes of s.
func (p *Parser) Lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// SkipWS skips whitespace.

func (p *Parser) SkipWS() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *Parser) Peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// ObjectFields reads an object, calling field for each key with p placed
// at the value; field must consume the value. A repeated key fails (its
// merging rules are encoding/json's business).
func (p *Parser) ObjectFields(field func(key []byte) bool) bool {
	if p.Peek() != '{' {
		return false
	}
	p.i++
	p.SkipWS()
	if p.Peek() == '}' {
		p.i++
		return true
	}
	var seen [16][]byte
	n := 0
	for {
		p.SkipWS()
		k, ok := p.PlainBytes()
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
		p.SkipWS()
		if p.Peek() != ':' {
			return false
		}
		p.i++
		p.SkipWS()
		if !field(k) {
			return false
		}
		p.SkipWS()
		switch p.Peek() {
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

// PlainString reads a string without escapes, control characters or
// non-ASCII bytes (the ones whose decoding needs care: those fall back).
func (p *Parser) PlainString() (string, bool) {
	b, ok := p.PlainBytes()
	return string(b), ok
}

// PlainBytes is PlainString returning the bytes inside the quotes.
func (p *Parser) PlainBytes() ([]byte, bool) {
	if p.Peek() != '"' {
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

// Value skips one JSON value, checking its syntax, and returns its bytes.
func (p *Parser) Value() ([]byte, bool) {
	start := p.i
	if !p.skip(0) {
		return nil, false
	}
	return p.b[start:p.i], true
}

// maxFastDepth bounds nesting: deeper values take the slow path.
const maxFastDepth = 64

// skip skips one JSON value, checking its syntax.
func (p *Parser) skip(depth int) bool {
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
// without recursion; nesting deeper than maxDepth fails. It is one state
// machine (a value, what follows a value, an object key), with the common
// case of compact JSON (no whitespace) and short strings tested first: it
// runs on every JSON record value on both sides of a produce. Record
// values are dense with short tokens (`{"sku":"SKU-01234","qty":3},`), so
// the first byte of a value picks its kind from a table, and strings are
// scanned with one table lookup a byte (strPlain) before the word-at-a-time
// scan takes over.
func skipValue(b []byte, i int, maxDepth int) (int, bool) {
	var stack [maxFastDepth]byte // the open containers, '{' or '['
	depth := 0
	var c byte
	var ok, isKey bool
value: // a value starts at i
	if i >= len(b) {
		return i, false
	}
	c = b[i]
	switch valueKind[c] {
	case kindString:
		isKey = false
		goto str
	case kindNumber:
		if c != '-' && c != '0' {
			// The usual integer, read here; anything else is skipNum's.
			j := i + 1
			for j < len(b) && b[j]-'0' < 10 {
				j++
			}
			if j == len(b) || (b[j] != '.' && b[j]|0x20 != 'e') {
				i = j
				break
			}
		}
		if i, ok = skipNum(b, i); !ok {
			return i, false
		}
	case kindOpen:
		i++
		if i < len(b) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		if i < len(b) && b[i] == c+2 { // '{'+2 is '}', '['+2 is ']'
			i++
			break // an empty container is a whole value
		}
		if depth >= maxDepth || depth == len(stack) {
			return i, false
		}
		stack[depth] = c
		depth++
		if c == '{' {
			goto key
		}
		goto value
	case kindSpace:
		if i = skipWS(b, i); i >= len(b) {
			return i, false
		}
		goto value
	case kindTrue:
		if i, ok = skipLit(b, i, "true"); !ok {
			return i, false
		}
	case kindFalse:
		if i, ok = skipLit(b, i, "false"); !ok {
			return i, false
		}
	case kindNull:
		if i, ok = skipLit(b, i, "null"); !ok {
			return i, false
		}
	default:
		return i, false
	}
after: // after a value: close containers, or go on to the next element
	if depth == 0 {
		return i, true
	}
	if i >= len(b) {
		return i, false
	}
	c = b[i]
	if c <= ' ' {
		if i = skipWS(b, i); i >= len(b) {
			return i, false
		}
		c = b[i]
	}
	switch {
	case c == ',':
		i++
		if stack[depth-1] == '{' {
			goto key
		}
		goto value
	case c == stack[depth-1]+2:
		i++
		depth--
		goto after
	}
	return i, false
key: // `"key" :` (with whitespace), then a value
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	isKey = true
str: // the string at b[i] (a quote), then the key's colon or what follows a value
	{
		j := i + 1
		if j < len(b) {
			ahead := b[j:min(len(b), j+plainAhead)]
			k := 0
			for k < len(ahead) && strPlain[ahead[k]] {
				k++
			}
			j += k
		}
		if j < len(b) && b[j] == '"' {
			i = j + 1
		} else if i, ok = skipStrFrom(b, i, j); !ok {
			return i, false
		}
	}
	if !isKey {
		goto after
	}
	if i < len(b) && b[i] == ':' {
		i++
		goto value
	}
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	i++
	goto value
}

// The kinds of value a first byte starts (valueKind).
const (
	kindInvalid = iota
	kindString
	kindNumber
	kindOpen // '{' or '['
	kindSpace
	kindTrue
	kindFalse
	kindNull
)

// valueKind is the kind of value each byte starts.
var valueKind = func() (t [256]uint8) {
	t['"'] = kindString
	t['-'] = kindNumber
	for c := '0'; c <= '9'; c++ {
		t[c] = kindNumber
	}
	t['{'], t['['] = kindOpen, kindOpen
	t[' '], t['\t'], t['\n'], t['\r'] = kindSpace, kindSpace, kindSpace, kindSpace
	t['t'], t['f'], t['n'] = kindTrue, kindFalse, kindNull
	return t
}()

// strPlain flags the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainAhead is how many bytes of a string skipValue reads one at a time
// (with strPlain) before skipStrFrom's word-at-a-time scan: most keys and
// values of records are short, shorter than that scan's setup.
const plainAhead = 16

func skipLit(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// skipStrFrom returns the end of the string at b[i:], whose bytes before j
// are known to be plain, checking its escapes (bytes >= 0x80 are taken as
// they are, as encoding/json's scanner does). Plain bytes are skipped eight
// at a time: the lowest flagged byte of a word is where the run ends.
func skipStrFrom(b []byte, i, j int) (int, bool) {
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
func (p *Parser) skipNumber() bool {
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

// Integer reads a plain integer (no fraction, exponent or leading zeros
// beyond "0") that fits in bits.
func (p *Parser) Integer(bits int) (int64, bool) {
	start := p.i
	if !p.skipNumber() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, bits)
	return n, err == nil
}

func (p *Parser) Boolean() (bool, bool) {
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

// StringMap reads an object of plain strings into a fresh map, as
// encoding/json does for a nil map (and into the existing one otherwise).
func (p *Parser) StringMap(m *map[string]string) bool {
	if *m == nil {
		*m = map[string]string{}
	}
	return p.ObjectFields(func(k []byte) bool {
		v, ok := p.PlainString()
		(*m)[string(k)] = v
		return ok
	})
}

// RawArray reads an array of values, returning each value's bytes (slices
// of p.b). An empty array is an empty, non-nil slice, as encoding/json
// makes it.
func (p *Parser) RawArray() ([]json.RawMessage, bool) {
	out := []json.RawMessage{}
	_, ok := p.Elements(func() bool {
		v, ok := p.Value()
		out = append(out, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// Elements reads an array, calling item with p placed at each element;
// item must consume it. It returns the number of elements.
func (p *Parser) Elements(item func() bool) (int, bool) {
	if p.Peek() != '[' {
		return 0, false
	}
	p.i++
	p.SkipWS()
	if p.Peek() == ']' {
		p.i++
		return 0, true
	}
	for n := 1; ; n++ {
		p.SkipWS()
		if !item() {
			return n, false
		}
		p.SkipWS()
		switch p.Peek() {
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

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string. Invalid UTF-8 sequences are
// replaced by U+FFFD (callers pass valid UTF-8 except for header keys).
func AppendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
