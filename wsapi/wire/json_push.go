package wire

// ValueOfLen reads the JSON value of n bytes at p's position that a JSON
// push's value_lens announces (FindValueLens), without checking the bytes
// between its brackets: the server checked them. It checks what is cheap:
// the n bytes lie within b, an object starts with '{' and ends with '}', an
// array with '[' and ']', and the byte after them ends a value in a record
// (',' or '}', or whitespace: a value stored as bytes is embedded with the
// whitespace around it, which value_lens does not count). A value of any other kind (a string, number, true, false,
// null) is short or already scanned elsewhere: it is read by Value, and
// must be n bytes long.
func (p *Parser) ValueOfLen(n int) ([]byte, bool) {
	start, end := p.i, p.i+n
	if n < 2 || end >= len(p.b) || end < start {
		return p.valueOfLen(n)
	}
	if c := p.b[end]; c != ',' && c != '}' && !isWS(c) {
		return nil, false
	}
	switch p.b[start] {
	case '{':
		if p.b[end-1] != '}' {
			return nil, false
		}
	case '[':
		if p.b[end-1] != ']' {
			return nil, false
		}
	default:
		return p.valueOfLen(n)
	}
	p.i = end
	return p.b[start:end], true
}

// valueOfLen is ValueOfLen for a value it checks.
func (p *Parser) valueOfLen(n int) ([]byte, bool) {
	v, ok := p.Value()
	return v, ok && len(v) == n
}

// SkipTo moves p to position i of b, at or after its position.
func (p *Parser) SkipTo(i int) bool {
	if i < p.i || i > len(p.b) {
		return false
	}
	p.i = i
	return true
}
