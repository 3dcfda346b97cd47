package wsclient

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/internal/wiretest"
	"github.com/pulselog/pulse/wsapi/wire"
)

// The client's fast parsers may refuse anything and fall back to
// encoding/json, so a differential check alone passes even when a fast path
// refuses everything: wiretest.Gen builds messages inside each one's
// documented scope, written by the server's own writers (package wire's),
// and the fast path must accept them, read what encoding/json reads, and
// give back what was written.

// ackReply is the server's reply frame to a produce of len(acks) records
// (single: one inline record), with id, written by the writers the server's
// produceReply and reply use (wire.AppendReply, AppendAcks,
// AppendAckFields).
func ackReply(t *testing.T, id int64, acks []engine.Ack, single bool) []byte {
	t.Helper()
	var f []byte
	if single {
		f = wire.AppendAckFields(nil, acks[0].Partition, acks[0].Offset, acks[0].Timestamp)
	} else {
		f = wire.AppendAcks(nil, acks)
	}
	return wire.AppendReply(nil, strconv.AppendInt(nil, id, 10), f, nil)
}

// push is a push frame of sub for partition p holding recs, in the form
// docs/websocket.md gives, written by the writers subscribe.go uses
// (wire.AppendJSONPushHead, AppendRecordJSONLen, AppendJSONPushTail).
func push(sub int64, p int, next, skipped int64, recs []engine.Record) []byte {
	b := wire.AppendJSONPushHead(nil, sub, p, next, skipped)
	lens := make([]int32, len(recs))
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		var n int
		b, n = wire.AppendRecordJSONLen(b, p, &recs[i])
		lens[i] = int32(n)
	}
	return wire.AppendJSONPushTail(b, lens)
}

// oldPush is push as a server before value_lens wrote it.
func oldPush(sub int64, p int, next, skipped int64, recs []engine.Record) []byte {
	b := wire.AppendJSONPushHead(nil, sub, p, next, skipped)
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendRecordJSON(b, p, &recs[i])
	}
	return append(b, "]}"...)
}

// genPush returns a push of 0..3 generated records and those records.
func genPush(g *wiretest.Gen) ([]byte, []engine.Record) {
	recs := make([]engine.Record, g.Num(4))
	for i := range recs {
		recs[i] = g.Record()
	}
	sub, p, next, skipped := 1+g.Num(1<<30), int(g.Num(64)), g.Num(1<<50), g.Num(3)
	if g.Num(4) == 0 {
		return oldPush(sub, p, next, skipped, recs), recs
	}
	return push(sub, p, next, skipped, recs), recs
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
		checkFastAcksScope(t, in)
		checkFastReplyScope(t, in)
		checkFastPushScope(t, in)
		checkFastRecordScope(t, in)
	}
}

func checkFastAcksScope(t *testing.T, in []byte) {
	t.Helper()
	g := wiretest.NewGen(in)
	id, acks := g.Num(1<<40), g.Acks(1+int(g.Num(5)))
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
	g := wiretest.NewGen(in)
	id, acks := g.Num(1<<40), g.Acks(1)
	single := ackReply(t, id, acks, true)
	pushMsg, _ := genPush(g)
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
	g := wiretest.NewGen(in)
	msg, want := genPush(g)
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
	g := wiretest.NewGen(in)
	rec, p := g.Record(), int(g.Num(64))
	raw := wire.AppendRecordJSON(nil, p, &rec)
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

// TestFastPushTakesValuesByLength shows what value_lens changes: an object
// value is taken as the announced bytes without checking inside them (the
// server checked them), where a push without value_lens checks it; and
// lengths that do not fit the push send it to the full check
// (fastReply), which reads what the bytes say.
func TestFastPushTakesValuesByLength(t *testing.T) {
	const rec = `{"partition":0,"offset":1,"timestamp":2,"value":{"a":}}`
	head := `{"sub":1,"partition":0,"next":2,"records":[` + rec + `]`
	var env envelope
	recs, ok := fastPush([]byte(head+`,"value_lens":[6]}`), &env)
	if !ok || len(recs) != 1 || string(recs[0].Value) != `{"a":}` || string(recs[0].Raw) != rec {
		t.Fatalf("push with value_lens: %v %+v", ok, recs)
	}
	if _, ok := fastPush([]byte(head+`}`), &envelope{}); ok {
		t.Fatal("a push without value_lens was not checked in full")
	}
	good := `{"sub":1,"partition":0,"next":3,"records":[{"partition":0,"offset":1,"timestamp":2,"value":{"a":1}},` +
		`{"partition":0,"offset":2,"timestamp":2,"tombstone":true}]`
	for _, lens := range []string{`[8,0]`, `[6,0]`, `[7]`, `[7,0,0]`, `[7,1]`, `[0,0]`, `[100,0]`, `[07,0]`} {
		msg := []byte(good + `,"value_lens":` + lens + `}`)
		if _, ok := fastPush(msg, &envelope{}); ok {
			t.Errorf("fastPush accepted value_lens %s that do not fit %s", lens, msg)
		}
		var env envelope
		if json.Valid(msg) && (!fastReply(msg, &env) || len(env.Records) != 2) {
			t.Fatalf("fastReply refused %s", msg)
		}
	}
	recs, ok = fastPush([]byte(good+`,"value_lens":[7,0]}`), &envelope{})
	if !ok || len(recs) != 2 || string(recs[0].Value) != `{"a":1}` || recs[1].Offset != 2 || recs[1].Value != nil {
		t.Fatalf("the true lengths: %v %+v", ok, recs)
	}
}
