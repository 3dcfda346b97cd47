package main

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pulselog/pulse/wsapi/wsclient"
)

// startSpec is where a tail starts (-o / --from): kcat's beginning, end,
// an absolute offset N, -N (N records before each partition's end) or @ts
// (Unix ms), and the websocket API's earliest / latest.
type startSpec struct {
	from   string // the subscribe "from", when it is the same for every partition
	before int64  // > 0: start this many records before each partition's HWM
}

func parseStart(v string) (startSpec, error) {
	switch v {
	case "beginning", "earliest":
		return startSpec{from: "earliest"}, nil
	case "end", "latest", "":
		return startSpec{from: "latest"}, nil
	}
	if ts, ok := strings.CutPrefix(v, "@"); ok {
		if n, err := strconv.ParseInt(ts, 10, 64); err == nil && n >= 0 {
			return startSpec{from: "@" + ts}, nil
		}
	} else if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return startSpec{before: -n}, nil
		}
		if strings.HasPrefix(v, "-") { // -0: the last none of each partition
			return startSpec{from: "latest"}, nil
		}
		return startSpec{from: strconv.FormatInt(n, 10)}, nil
	}
	return startSpec{}, fmt.Errorf("offset %q: want beginning, end, N, -N or @unix-ms", v)
}

// recordFormat is a compiled kcat -f format: literal text and tokens.
type recordFormat []formatPart

type formatPart struct {
	lit string
	tok byte // 0: lit
}

// parseFormat compiles a kcat format: %t topic, %p partition, %o offset,
// %k key, %K key length (-1 for none), %s or %v value, %S value length (-1
// for a tombstone), %T timestamp (Unix ms), %h headers (k=v,k=v), %%, and
// the escapes \n \r \t \\ \xHH.
func parseFormat(f string) (recordFormat, error) {
	var out recordFormat
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, formatPart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '%' && i+1 < len(f):
			i++
			switch t := f[i]; t {
			case '%':
				lit.WriteByte('%')
			case 't', 'p', 'o', 'k', 'K', 's', 'v', 'S', 'T', 'h':
				flush()
				out = append(out, formatPart{tok: t})
			default:
				return nil, fmt.Errorf("format %q: unknown token %%%c (want %%t %%p %%o %%k %%K %%s %%v %%S %%T %%h)", f, t)
			}
		case c == '\\' && i+1 < len(f):
			b, n, err := kcatEscape(f, i)
			if err != nil {
				return nil, fmt.Errorf("format %q: %w", f, err)
			}
			lit.WriteString(b)
			i += n - 1
		case c == '%':
			return nil, fmt.Errorf("format %q ends in a lone %%", f)
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

// kcatEscape reads the kcat escape at s[i], a backslash with a character
// after it: \n \r \t \\ \xHH. It returns what the escape stands for and
// its length; a backslash before any other character stands for both.
func kcatEscape(s string, i int) (string, int, error) {
	switch e := s[i+1]; e {
	case 'n':
		return "\n", 2, nil
	case 'r':
		return "\r", 2, nil
	case 't':
		return "\t", 2, nil
	case '\\':
		return "\\", 2, nil
	case 'x':
		if i+4 > len(s) {
			return "", 0, errors.New("\\x needs two hex digits")
		}
		b, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
		if err != nil {
			return "", 0, fmt.Errorf("\\x%s is not a hex byte", s[i+2:i+4])
		}
		return string([]byte{byte(b)}), 4, nil
	default:
		return s[i : i+2], 2, nil
	}
}

// kcatUnescape reads the kcat escapes in s (kcatEscape), as -K takes them.
func kcatUnescape(s string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out.WriteByte(s[i])
			continue
		}
		b, n, err := kcatEscape(s, i)
		if err != nil {
			return "", err
		}
		out.WriteString(b)
		i += n - 1
	}
	return out.String(), nil
}

// write writes r in the format; keys and values are written as stored, as
// kcat does.
func (rf recordFormat) write(w *bufio.Writer, topic string, r wsclient.Record) {
	length := func(b []byte) string {
		if b == nil {
			return "-1"
		}
		return strconv.Itoa(len(b))
	}
	for _, p := range rf {
		switch p.tok {
		case 0:
			w.WriteString(p.lit)
		case 't':
			w.WriteString(topic)
		case 'p':
			w.WriteString(strconv.Itoa(r.Partition))
		case 'o':
			w.WriteString(strconv.FormatInt(r.Offset, 10))
		case 'k':
			w.Write(r.Key)
		case 'K':
			w.WriteString(length(r.Key))
		case 's', 'v':
			w.Write(r.Value)
		case 'S':
			w.WriteString(length(r.Value))
		case 'T':
			w.WriteString(strconv.FormatInt(r.Timestamp, 10))
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					w.WriteByte(',')
				}
				w.WriteString(h.Key)
				w.WriteByte('=')
				w.Write(h.Value)
			}
		}
	}
}
