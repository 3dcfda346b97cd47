package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pulselog/pulse/wsapi/internal/wiretest"
)

// FuzzValidJSON checks ValidJSON against json.Valid.
func FuzzValidJSON(f *testing.F) {
	wiretest.AddSeeds(f, "requests")
	wiretest.AddSeeds(f, "records")
	f.Add([]byte(`[1e5, -0.5, "\ud800", {"a":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ValidJSON(b) != json.Valid(b) {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid says %v", b, ValidJSON(b), json.Valid(b))
		}
	})
}

// TestValidJSONEveryPosition puts each special byte at every position of a
// string around the eight-byte word boundaries of skipStrFrom's scan.
func TestValidJSONEveryPosition(t *testing.T) {
	specials := []string{`"`, `\`, `\"`, `\u00e9`, `\x`, "\x00", "\x1f", "\x20", "\x7f", "\x80", "\xff", "é"}
	for pos := range 40 {
		for tail := range 12 {
			for _, sp := range specials {
				s := `"` + strings.Repeat("a", pos) + sp + strings.Repeat("b", tail) + `"`
				for _, doc := range []string{s, "[" + s + "]", `{"k":` + s + `}`} {
					if got, want := ValidJSON([]byte(doc)), json.Valid([]byte(doc)); got != want {
						t.Fatalf("ValidJSON(%q) = %v, json.Valid %v", doc, got, want)
					}
				}
			}
		}
	}
}

// TestValidJSONStructures compares ValidJSON with json.Valid on structural
// edge cases, nesting around the fast path's depth limit included.
func TestValidJSONStructures(t *testing.T) {
	docs := []string{
		`[1,]`, `{"a":1,}`, `{"a" 1}`, `[}`, `{]`, `[[]]`, `{"a":{}}`, ` [ 1 , 2 ] `, `{"a":[{"b":[]}]}`,
		`-`, `-01`, `1.`, `1e`, `1e+`, `1.5e-3`, `tru`, `nulll`, `[true,false,null]`, `{"a":1}{}`, `{,}`,
		`[1 2]`, `{"a":1 "b":2}`, `{"a"}`, `{1:2}`, `""`, `"\u12"`, `"\uzzzz"`, `[-]`, `0`, ` `, ``,
		// integers read inline, and what follows them
		`12`, `[12,3]`, `{"a":12}`, `[12.]`, `[12.5]`, `[12e]`, `[12E5]`, `[12e+5]`, `[120]`, `[1x]`, `[9-]`,
		`[12 ]`, `{"a":12 ,"b":3}`, `[1]]`, `{"a":"b" : 1}`, `{"a" :1}`, `{"a": [ ] , "b" : { } }`,
	}
	for _, n := range []int{1, 62, 63, 64, 65, 100} {
		docs = append(docs, strings.Repeat("[", n)+strings.Repeat("]", n), strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n),
			strings.Repeat("[", n)+strings.Repeat("]", n-1))
	}
	for _, d := range docs {
		if got, want := ValidJSON([]byte(d)), json.Valid([]byte(d)); got != want {
			t.Errorf("ValidJSON(%q) = %v, json.Valid %v", d, got, want)
		}
	}
}

// TestPlainRun checks the word-at-a-time scan of string bytes against a
// byte loop: every stop byte at every position of runs of every filler,
// including bytes >= 0x80 and the neighbours of the stop bytes.
func TestPlainRun(t *testing.T) {
	slow := func(b []byte, j int) int {
		for j < len(b) && b[j] >= 0x20 && b[j] != '"' && b[j] != '\\' {
			j++
		}
		return j
	}
	fillers := []byte{' ', '!', '#', '[', ']', 'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	stops := []byte{'"', '\\', 0, 0x1f, '\n'}
	for n := 0; n <= 20; n++ {
		for _, f := range fillers {
			b := bytes.Repeat([]byte{f}, n)
			for start := 0; start <= n; start++ {
				if got, want := plainRun(b, start), slow(b, start); got != want {
					t.Fatalf("plainRun(%q, %d) = %d, want %d", b, start, got, want)
				}
			}
			for pos := range n {
				for _, s := range stops {
					c := bytes.Clone(b)
					c[pos] = s
					if pos+1 < n {
						c[pos+1] = s ^ 0x80 // a byte that only differs in its high bit
					}
					for start := 0; start <= n; start++ {
						if got, want := plainRun(c, start), slow(c, start); got != want {
							t.Fatalf("plainRun(%q, %d) = %d, want %d", c, start, got, want)
						}
					}
				}
			}
		}
	}
}

// BenchmarkValidJSON measures the value check both the client and the
// server run on every JSON record value.
func BenchmarkValidJSON(b *testing.B) {
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"structured", structuredValue()},
		{"long_string", fmt.Appendf(nil, `{"id":%d,"type":"order.created","pad":"%s"}`, 0, strings.Repeat("x", 950))}, // wsapi's benchRecords
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.v)))
			for range b.N {
				if !ValidJSON(tc.v) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// structuredValue is a ~1 KiB JSON value shaped like pulse bench's records:
// many short strings and numbers.
func structuredValue() []byte {
	b := []byte(`{"id":12345,"type":"order.created","user":"user-4711","ts":1764000012345,"amount":123.45,"tags":["a","b"],"items":[`)
	for j := 0; len(b) < 1000; j++ {
		b = fmt.Appendf(b, `{"sku":"SKU-%05d","qty":%d},`, j*7919%100000, 1+j%9)
	}
	b[len(b)-1] = ']'
	return append(b, '}')
}
