package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// recordFilter is a parsed "/" filter of the tail:
//
//	text            key, value or a header contains text (any case)
//	key:text        the key contains text
//	h:name=text     header name's value contains text (h:name: the header is there)
//	.a.b[0] OP lit  the JSON value's field compares to lit: OP is == != < <= > >=,
//	                lit a number, "string", true, false or null
type recordFilter struct {
	raw   string
	match func(r tailRec) bool
}

// parseFilter reads a filter; an error says what is wrong with it.
func parseFilter(f string) (recordFilter, error) {
	rf := recordFilter{raw: f}
	switch {
	case strings.HasPrefix(f, "key:"):
		want := strings.ToLower(strings.TrimPrefix(f, "key:"))
		rf.match = func(r tailRec) bool { return r.Key != nil && containsFold(r.Key, want) }
	case strings.HasPrefix(f, "h:"):
		name, val, hasVal := strings.Cut(strings.TrimPrefix(f, "h:"), "=")
		if name == "" {
			return rf, fmt.Errorf("%w: filter %q: want h:NAME or h:NAME=TEXT", ErrBadInput, f)
		}
		val = strings.ToLower(val)
		rf.match = func(r tailRec) bool {
			for _, h := range r.Headers {
				if h.Key == name && (!hasVal || containsFold(h.Value, val)) {
					return true
				}
			}
			return false
		}
	case strings.HasPrefix(f, "."):
		m, err := parseJSONPath(f)
		if err != nil {
			return rf, err
		}
		rf.match = m
	default:
		want := strings.ToLower(f)
		rf.match = func(r tailRec) bool {
			if containsFold(r.Key, want) || containsFold(r.Value, want) {
				return true
			}
			for _, h := range r.Headers {
				if strings.Contains(strings.ToLower(h.Key), want) || containsFold(h.Value, want) {
					return true
				}
			}
			return false
		}
	}
	return rf, nil
}

func containsFold(b []byte, lower string) bool {
	return bytes.Contains(bytes.ToLower(b), []byte(lower))
}

// pathStep is one step of a JSON path: a field name or an array index.
type pathStep struct {
	field string
	index int // -1: a field
}

// parseJSONPath reads ".a.b[2] OP literal".
func parseJSONPath(f string) (func(tailRec) bool, error) {
	bad := func(why string) error { return fmt.Errorf("%w: filter %q: %s", ErrBadInput, f, why) }
	var op string
	var path, lit string
	// The operator is the first one in f (a literal may hold "==" or "<"),
	// the two-character one where "<=" and "<" start at the same place.
	at := -1
	for _, o := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if i := strings.Index(f, o); i > 0 && (at < 0 || i < at) {
			at, op = i, o
		}
	}
	if op != "" {
		path, lit = strings.TrimSpace(f[:at]), strings.TrimSpace(f[at+len(op):])
	}
	if op == "" {
		return nil, bad("want .path OP value, e.g. .user.id == 42")
	}
	var steps []pathStep
	for rest := path; rest != ""; {
		switch {
		case rest[0] == '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			if n == 0 {
				return nil, bad("empty field name in the path")
			}
			steps = append(steps, pathStep{field: rest[:n], index: -1})
			rest = rest[n:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:max(end, 1)])
			if end < 0 || err != nil || i < 0 {
				return nil, bad("array index must be [N]")
			}
			steps = append(steps, pathStep{index: i})
			rest = rest[end+1:]
		default:
			return nil, bad("the path is .field, .field.sub or .list[N]")
		}
	}
	var want any
	if err := json.Unmarshal([]byte(lit), &want); err != nil {
		return nil, bad(fmt.Sprintf("%q is not a JSON number, string, true, false or null", lit))
	}
	if _, isNum := want.(float64); !isNum && op != "==" && op != "!=" {
		return nil, bad(op + " compares numbers")
	}
	return func(r tailRec) bool {
		if len(r.Value) == 0 || (r.Value[0] != '{' && r.Value[0] != '[') {
			return false
		}
		var v any
		if json.Unmarshal(r.Value, &v) != nil {
			return false
		}
		for _, s := range steps {
			switch x := v.(type) {
			case map[string]any:
				if s.index >= 0 {
					return false
				}
				var ok bool
				if v, ok = x[s.field]; !ok {
					return op == "!="
				}
			case []any:
				if s.index < 0 || s.index >= len(x) {
					return op == "!="
				}
				v = x[s.index]
			default:
				return op == "!="
			}
		}
		return compareJSON(v, op, want)
	}, nil
}

func compareJSON(got any, op string, want any) bool {
	if wn, ok := want.(float64); ok {
		gn, ok := got.(float64)
		if !ok {
			return op == "!="
		}
		switch op {
		case "==":
			return gn == wn
		case "!=":
			return gn != wn
		case "<":
			return gn < wn
		case "<=":
			return gn <= wn
		case ">":
			return gn > wn
		case ">=":
			return gn >= wn
		}
	}
	eq := reflect.DeepEqual(got, want)
	if op == "!=" {
		return !eq
	}
	return eq
}
