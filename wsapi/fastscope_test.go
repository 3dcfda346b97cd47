package wsapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// The fast parsers of fastjson.go may refuse anything and fall back to
// encoding/json, so a differential check alone passes even when a fast path
// refuses everything. scopeGen builds, from a fuzz input, messages inside
// each fast path's documented scope, written by the server's own writers
// where they exist (appendReply, produceReply, appendRecordJSON): the fast
// path must accept them, read what encoding/json reads, and give back what
// was written.
type scopeGen struct {
	b []byte
	i int
}

func (g *scopeGen) next() byte {
	if len(g.b) == 0 {
		g.i++
		return byte(g.i * 37)
	}
	c := g.b[g.i%len(g.b)] + byte(g.i/len(g.b))
	g.i++
	return c
}

// num returns a number in [0, n).
func (g *scopeGen) num(n int64) int64 {
	var v uint64
	for range 6 {
		v = v<<8 | uint64(g.next())
	}
	return int64(v % uint64(n))
}

// plain returns a string of up to max printable ASCII bytes that need no
// escape (a "plain" string of fastjson.go).
func (g *scopeGen) plain(max int) string {
	n := int(g.num(int64(max + 1)))
	b := make([]byte, n)
	for i := range b {
		c := 0x20 + g.next()%0x5f // 0x20..0x7e
		if c == '"' || c == '\\' {
			c = 'x'
		}
		b[i] = c
	}
	return string(b)
}

// jsonValue returns a record value the fast paths read whole: a number, a
// quoted plain string, or a small object.
func (g *scopeGen) jsonValue() []byte {
	switch g.next() % 4 {
	case 0:
		return strconv.AppendInt(nil, g.num(1<<50)-1<<49, 10)
	case 1:
		return strconv.AppendQuote(nil, g.plain(12))
	case 2:
		return fmt.Appendf(nil, `{"%s":[%d,true,null,%q],"n":-1.5e3}`, g.plain(6), g.num(1000), g.plain(6))
	}
	return []byte(`[]`)
}

// request returns a request frame of a shape fastDecode reads.
func (g *scopeGen) request() []byte {
	id, topic := g.num(1<<40), g.plain(20)
	switch g.next() % 4 {
	case 0: // batch produce
		b := fmt.Appendf(nil, `{"op":"produce","id":%d,"topic":%q,"records":[`, id, topic)
		for i := range 1 + g.num(3) {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"key":%q,"value":%s,"headers":{%q:%q},"partition":%d}`, g.plain(8), g.jsonValue(), g.plain(5), g.plain(5), g.num(64))
		}
		return append(b, "]}"...)
	case 1: // single produce
		return fmt.Appendf(nil, `{"op":"produce","id":%d,"topic":%q,"partition":%d,"key":%q,"value":%s}`, id, topic, g.num(64), g.plain(8), g.jsonValue())
	case 2:
		return fmt.Appendf(nil, `{"op":"commit","id":%d,"consumer":%q,"topic":%q,"partition":%d,"offset":%d}`, id, g.plain(10), topic, g.num(64), g.num(1<<50))
	}
	return fmt.Appendf(nil, `{"op":"subscribe","id":%d,"topic":%q,"consumer":%q,"from":%q}`, id, topic, g.plain(10), "earliest")
}

// record returns a record fastRecord reads: a plain key (or none) and a
// value that is JSON, plain text, or a tombstone.
func (g *scopeGen) record() engine.Record {
	r := engine.Record{Offset: g.num(1 << 50), Timestamp: g.num(1 << 42)}
	if g.next()%4 != 0 {
		r.Key = []byte(g.plain(10))
	}
	switch g.next() % 4 {
	case 0: // tombstone
	case 1:
		r.Value = []byte("text " + g.plain(10)) // not JSON: written as a string
	default:
		r.Value = g.jsonValue()
	}
	return r
}

// acks returns n acks.
func (g *scopeGen) acks(n int) []engine.Ack {
	a := make([]engine.Ack, n)
	for i := range a {
		a[i] = engine.Ack{Partition: int(g.num(1000)), Offset: g.num(1 << 50), Timestamp: g.num(1 << 42)}
	}
	return a
}

// ackReply is the server's reply frame to a produce of len(acks) records
// (single: one inline record), with id.
func ackReply(t *testing.T, id int64, acks []engine.Ack, single bool) []byte {
	t.Helper()
	j := &produceJob{id: strconv.AppendInt(nil, id, 10), single: single, units: []produceUnit{{partition: -1, recs: make([]engine.Record, len(acks))}}}
	stored := make([]bool, len(acks))
	for i := range stored {
		stored[i] = true
	}
	f, e, _ := produceReply(j, acks, stored, nil)
	if e != nil {
		t.Fatalf("produceReply: %v", e)
	}
	return appendReply(nil, j.id, f, nil)
}

// push is a push frame of sub for partition p holding recs, in the form
// docs/websocket.md gives (subscribe.go writes it).
func push(sub int64, p int, next, skipped int64, recs []engine.Record) []byte {
	b := fmt.Appendf(nil, `{"sub":%d,"partition":%d,"next":%d`, sub, p, next)
	if skipped > 0 {
		b = fmt.Appendf(b, `,"skipped":%d`, skipped)
	}
	b = append(b, `,"records":[`...)
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRecordJSON(b, p, &recs[i])
	}
	return append(b, "]}"...)
}

// genPush returns a push of 0..3 generated records and those records.
func (g *scopeGen) push() ([]byte, []engine.Record) {
	recs := make([]engine.Record, g.num(4))
	for i := range recs {
		recs[i] = g.record()
	}
	return push(1+g.num(1<<30), int(g.num(64)), g.num(1<<50), g.num(3), recs), recs
}

// sameRecord fails unless got reads back what want wrote.
func sameRecord(t *testing.T, raw []byte, got Record, p int, want engine.Record) {
	t.Helper()
	if v := want.Value; len(v) > 0 && v[0] == '"' {
		// A JSON string comes back as its text (docs/websocket.md).
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			t.Fatalf("generated value %s: %v", v, err)
		}
		want.Value = []byte(s)
	}
	if got.Partition != p || got.Offset != want.Offset || got.Timestamp != want.Timestamp ||
		(got.Key == nil) != (want.Key == nil) || string(got.Key) != string(want.Key) ||
		(got.Value == nil) != (want.Value == nil) || string(got.Value) != string(want.Value) {
		t.Fatalf("record %s read back as %+v, want %+v", raw, got, want)
	}
}

// TestFastPathsAcceptTheirScope runs the in-scope checks of the fuzz
// targets on fixed inputs, so that `go test` alone catches a fast path that
// stopped accepting what it is for.
func TestFastPathsAcceptTheirScope(t *testing.T) {
	for i := range 300 {
		in := []byte(strconv.Itoa(i * 7919))
		checkFastDecodeScope(t, in)
		checkFastAcksScope(t, in)
		checkFastReplyScope(t, in)
		checkFastPushScope(t, in)
		checkFastRecordScope(t, in)
	}
}

func checkFastDecodeScope(t *testing.T, in []byte) {
	t.Helper()
	g := scopeGen{b: in}
	msg := g.request()
	var fast, slow request
	if !fastDecode(msg, &fast) {
		t.Fatalf("fastDecode refused %s, a request of its shape", msg)
	}
	if err := json.Unmarshal(msg, &slow); err != nil {
		t.Fatalf("encoding/json refuses the generated %s: %v", msg, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast and slow decoders differ on %s:\nfast %+v\nslow %+v", msg, fast, slow)
	}
}

func checkFastAcksScope(t *testing.T, in []byte) {
	t.Helper()
	g := scopeGen{b: in}
	id, acks := g.num(1<<40), g.acks(1+int(g.num(5)))
	msg := ackReply(t, id, acks, false)
	var fast, slow envelope
	if !fastAcks(msg, &fast) {
		t.Fatalf("fastAcks refused the server's reply %s", msg)
	}
	if err := json.Unmarshal(msg, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fastAcks and encoding/json differ on %s (%v):\n%+v\n%+v", msg, err, fast, slow)
	}
	if fast.ID == nil || *fast.ID != id || !reflect.DeepEqual(fast.Acks, acks) {
		t.Fatalf("reply %s read back as id %v acks %+v, want %d %+v", msg, fast.ID, fast.Acks, id, acks)
	}
}

func checkFastReplyScope(t *testing.T, in []byte) {
	t.Helper()
	g := scopeGen{b: in}
	id, acks := g.num(1<<40), g.acks(1)
	single := ackReply(t, id, acks, true)
	pushMsg, _ := g.push()
	for _, msg := range [][]byte{single, pushMsg} {
		var fast, slow envelope
		if !fastReply(msg, &fast) {
			t.Fatalf("fastReply refused the server's %s", msg)
		}
		if err := json.Unmarshal(msg, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fastReply and encoding/json differ on %s (%v):\n%+v\n%+v", msg, err, fast, slow)
		}
	}
	var env envelope
	fastReply(single, &env)
	if env.ID == nil || *env.ID != id || env.Partition != acks[0].Partition || env.Offset != acks[0].Offset || env.Timestamp != acks[0].Timestamp {
		t.Fatalf("single ack %s read back as %+v, want id %d %+v", single, env, id, acks[0])
	}
}

func checkFastPushScope(t *testing.T, in []byte) {
	t.Helper()
	g := scopeGen{b: in}
	msg, want := g.push()
	var env envelope
	recs, ok := fastPush(msg, &env)
	if !ok {
		t.Fatalf("fastPush refused the push %s", msg)
	}
	if len(recs) != len(want) {
		t.Fatalf("fastPush read %d records of %s, want %d", len(recs), msg, len(want))
	}
	for i := range recs {
		sameRecord(t, msg, recs[i], env.Partition, want[i])
	}
}

func checkFastRecordScope(t *testing.T, in []byte) {
	t.Helper()
	g := scopeGen{b: in}
	rec, p := g.record(), int(g.num(64))
	raw := appendRecordJSON(nil, p, &rec)
	fast, ok := fastRecord(raw)
	if !ok {
		t.Fatalf("fastRecord refused the server's record %s", raw)
	}
	slow, err := decodeRecordJSON(raw)
	if err != nil || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fastRecord and encoding/json differ on %s (%v):\n%+v\n%+v", raw, err, fast, slow)
	}
	sameRecord(t, raw, fast, p, rec)
}
