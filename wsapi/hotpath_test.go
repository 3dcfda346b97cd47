package wsapi

import (
	"encoding/json"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
)

// TestJSONValueBitFromIngest produces the same kinds of values every way the
// API takes them and reads the stored records back from the engine: a value
// the server parsed as JSON carries codec.AttrJSONValue, a JSON string
// AttrTextValue, and bytes nobody checked (a binary frame) neither; every one
// reads back over a subscription as it always did.
func TestJSONValueBitFromIngest(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialClient(t, ts.addr)
	ctx := testCtx(t)
	topic := "attrs"
	if _, err := c.Produce(ctx, topic, 0, []wire.RecordIn{
		{Value: json.RawMessage(`{"a":[1,2,{"b":null}]}`)},
		{Value: json.RawMessage(`"text"`)},
		{Value: json.RawMessage(`42`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProduceBytes(ctx, topic, 0, []engine.Record{{Value: []byte(`{"bin":2}`)}, {Value: []byte(`{"bin":`)}}); err != nil {
		t.Fatal(err)
	}
	pc := dialRaw(t, ts.addr, "/v1/topics/"+topic+"/produce?partition=0", nil)
	pc.sendText(`{"plain":3}`)
	if m := pc.next(); errCode(m) != "" {
		t.Fatalf("plain produce: %v", m)
	}
	pc.sendText(`plain text`)
	if m := pc.next(); errCode(m) != "" {
		t.Fatalf("plain produce: %v", m)
	}

	res, err := ts.eng.Read(topic, 0, 0, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		attrs uint8
		value string // as a push shows it
	}{
		{codec.AttrJSONValue, `"value":{"a":[1,2,{"b":null}]}`},
		{codec.AttrTextValue, `"value":"text"`},
		{codec.AttrJSONValue, `"value":42`},
		{0, `"value":{"bin":2}`},
		{0, `"value":"{\"bin\":"`},
		{codec.AttrJSONValue, `"value":{"plain":3}`},
		{codec.AttrTextValue, `"value":"plain text"`},
	}
	if len(res.Records) != len(want) {
		t.Fatalf("read %d records, want %d", len(res.Records), len(want))
	}
	for i, w := range want {
		if got := res.Records[i].Attributes; got != w.attrs {
			t.Errorf("record %d: attributes 0x%02x, want 0x%02x", i, got, w.attrs)
		}
	}

	sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: 0, From: "earliest"})
	if err != nil {
		t.Fatal(err)
	}
	var got []wsclient.Record
	for len(got) < len(want) {
		select {
		case p, ok := <-sub.C():
			if !ok || p.Err != nil {
				t.Fatalf("subscription ended: %v %v", sub.Err(), p.Err)
			}
			got = append(got, p.Records...)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
	for i, w := range want {
		if !strings.Contains(string(got[i].Raw), w.value) {
			t.Errorf("record %d pushed as %s, want it to hold %s", i, got[i].Raw, w.value)
		}
	}
}

// TestManyPipelinedRepliesInOrder sends many single-record produces without
// waiting, so that the server finds many acks queued at once and writes
// them together: every ack must arrive, once, in request order, with the
// offsets in order.
func TestManyPipelinedRepliesInOrder(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialClient(t, ts.addr)
	ctx := testCtx(t)
	const n, window = 2000, 200
	ps := make([]*wsclient.Pending, 0, n)
	check := func(i int) {
		t.Helper()
		acks, err := ps[i].Wait(ctx)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if len(acks) != 1 || acks[0].Offset != int64(i) {
			t.Fatalf("request %d: acks %+v, want offset %d", i, acks, i)
		}
	}
	for i := 0; i < n; i++ {
		if i >= window { // stay under MaxInflight
			check(i - window)
		}
		p, err := c.ProduceRecordAsync("pipelined", 0, wire.RecordIn{Value: json.RawMessage(`{"i":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for i := n - window; i < n; i++ {
		check(i)
	}
}
