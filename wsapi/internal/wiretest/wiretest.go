// Package wiretest holds what the tests of the websocket server (wsapi),
// its client (wsclient) and their shared wire form (wire) use alike: the
// fuzz seeds of wsapi/testdata and a generator of in-scope messages.
//
// The fast parsers on both sides may refuse anything and fall back to
// encoding/json, so a differential check alone passes even when a fast path
// refuses everything. Gen builds, from a fuzz input, messages inside each
// fast path's documented scope; the tests write them with the server's own
// writers where they exist (package wire's AppendReply, AppendAcks,
// AppendRecordJSON): the fast path must accept them, read what
// encoding/json reads, and give back what was written.
package wiretest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// AddSeeds adds every file of wsapi/testdata/dir/*.json to f's corpus.
func AddSeeds(f *testing.F, dir string) {
	f.Helper()
	for _, b := range Files(f, dir, "*.json") {
		f.Add(b)
	}
}

// Files returns the contents of the files of wsapi/testdata/dir matching
// pattern, failing tb when there are none.
func Files(tb testing.TB, dir, pattern string) [][]byte {
	tb.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("wiretest: cannot find wsapi/testdata")
	}
	root := filepath.Join(filepath.Dir(here), "..", "..", "testdata", dir)
	names, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no seeds in %s: %v", root, err)
	}
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// Gen generates messages from the bytes of a fuzz input.
type Gen struct {
	b []byte
	i int
}

// NewGen returns a generator reading in.
func NewGen(in []byte) *Gen { return &Gen{b: in} }

// Next returns the next byte of the input (a made-up one past its end,
// or for an empty input).
func (g *Gen) Next() byte {
	if len(g.b) == 0 {
		g.i++
		return byte(g.i * 37)
	}
	c := g.b[g.i%len(g.b)] + byte(g.i/len(g.b))
	g.i++
	return c
}

// Num returns a number in [0, n).
func (g *Gen) Num(n int64) int64 {
	var v uint64
	for range 6 {
		v = v<<8 | uint64(g.Next())
	}
	return int64(v % uint64(n))
}

// Plain returns a string of up to max printable ASCII bytes that need no
// escape (a "plain" string of the strict reader, wire.Parser).
func (g *Gen) Plain(max int) string {
	n := int(g.Num(int64(max + 1)))
	b := make([]byte, n)
	for i := range b {
		c := 0x20 + g.Next()%0x5f // 0x20..0x7e
		if c == '"' || c == '\\' {
			c = 'x'
		}
		b[i] = c
	}
	return string(b)
}

// JSONValue returns a record value the fast paths read whole: a number, a
// quoted plain string, or a small object.
func (g *Gen) JSONValue() []byte {
	switch g.Next() % 4 {
	case 0:
		return strconv.AppendInt(nil, g.Num(1<<50)-1<<49, 10)
	case 1:
		return strconv.AppendQuote(nil, g.Plain(12))
	case 2:
		return fmt.Appendf(nil, `{"%s":[%d,true,null,%q],"n":-1.5e3}`, g.Plain(6), g.Num(1000), g.Plain(6))
	}
	return []byte(`[]`)
}

// Request returns a request frame of a shape the server's fastDecode
// reads.
func (g *Gen) Request() []byte {
	id, topic := g.Num(1<<40), g.Plain(20)
	switch g.Next() % 4 {
	case 0: // batch produce
		b := fmt.Appendf(nil, `{"op":"produce","id":%d,"topic":%q,"records":[`, id, topic)
		for i := range 1 + g.Num(3) {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"key":%q,"value":%s,"headers":{%q:%q},"partition":%d}`, g.Plain(8), g.JSONValue(), g.Plain(5), g.Plain(5), g.Num(64))
		}
		return append(b, "]}"...)
	case 1: // single produce
		return fmt.Appendf(nil, `{"op":"produce","id":%d,"topic":%q,"partition":%d,"key":%q,"value":%s}`, id, topic, g.Num(64), g.Plain(8), g.JSONValue())
	case 2:
		return fmt.Appendf(nil, `{"op":"commit","id":%d,"consumer":%q,"topic":%q,"partition":%d,"offset":%d}`, id, g.Plain(10), topic, g.Num(64), g.Num(1<<50))
	}
	return fmt.Appendf(nil, `{"op":"subscribe","id":%d,"topic":%q,"consumer":%q,"from":%q}`, id, topic, g.Plain(10), "earliest")
}

// Record returns a record the client's fastRecord reads: a plain key (or none) and a
// value that is JSON, plain text, or a tombstone.
func (g *Gen) Record() engine.Record {
	r := engine.Record{Offset: g.Num(1 << 50), Timestamp: g.Num(1 << 42)}
	if g.Next()%4 != 0 {
		r.Key = []byte(g.Plain(10))
	}
	switch g.Next() % 4 {
	case 0: // tombstone
	case 1:
		r.Value = []byte("text " + g.Plain(10)) // not JSON: written as a string
	default:
		r.Value = g.JSONValue()
	}
	// Up to three headers of distinct names, in name order (as a JSON
	// produce stores them); a value that is not UTF-8 is written in
	// headers_b64.
	for i := range g.Num(4) {
		v := []byte(g.Plain(6))
		if g.Next()%3 == 0 {
			v = []byte{0xff, g.Next()}
		}
		r.Headers = append(r.Headers, engine.Header{Key: fmt.Sprintf("h%d%s", i, g.Plain(4)), Value: v})
	}
	return r
}

// Acks returns n acks.
func (g *Gen) Acks(n int) []engine.Ack {
	a := make([]engine.Ack, n)
	for i := range a {
		a[i] = engine.Ack{Partition: int(g.Num(1000)), Offset: g.Num(1 << 50), Timestamp: g.Num(1 << 42)}
	}
	return a
}
