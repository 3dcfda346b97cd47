package wsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
)

// produceAll produces recs to topic on c in one request and waits for the ack.
func produceAll(t *testing.T, c *rawConn, id int, topic string, recs []map[string]any) {
	t.Helper()
	if r := c.call(id, map[string]any{"op": "produce", "topic": topic, "records": recs}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
}

// subscribeAll subscribes to topic from earliest on a new connection and
// returns the records pushed until the push whose next is end.
func subscribeAll(t *testing.T, addr, topic string, end int64) []any {
	t.Helper()
	c := dialRaw(t, addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "subscribe", "topic": topic, "from": "earliest", "value_lens": true}); errCode(r) != "" {
		t.Fatalf("subscribe: %v", r)
	}
	var got []any
	for {
		c.ws.SetReadDeadline(time.Now().Add(hangGuard))
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("server sent non-JSON %q: %v", b, err)
		}
		if m["sub"] == nil {
			continue
		}
		checkValueLens(t, b)
		recs, _ := m["records"].([]any)
		got = append(got, recs...)
		if num(t, m, "next") >= end {
			c.ws.Close()
			return got
		}
	}
}

func fanRecords(tag string, n int) []map[string]any {
	var recs []map[string]any
	for i := range n {
		r := map[string]any{"key": fmt.Sprintf("k%d", i%7)}
		switch i % 5 {
		case 0:
			r["value"] = map[string]any{"tag": tag, "i": i, "s": "quote \" and \\ and é"}
		case 1:
			r["value"] = fmt.Sprintf("%s text %d", tag, i)
		case 2:
			r["value_b64"] = "AAEC/w=="
		case 3:
			r["value"] = nil // tombstone
		case 4:
			r["value"] = []any{tag, i}
			r["headers"] = map[string]string{"h": tag}
		}
		recs = append(recs, r)
	}
	return recs
}

// TestPushesEncodeOnce: subscribers that push the same records share one
// encoding of each record, and each receives exactly what the first one
// received. A topic deleted and created again with other
// records at the same offsets gets the new records, never the old
// encoding.
func TestPushesEncodeOnce(t *testing.T) {
	ts := startServer(t, Options{})
	p := dialRaw(t, ts.addr, "/v1/ws", nil)
	const n = 300
	create := func(id int) {
		t.Helper()
		if r := p.call(id, map[string]any{"op": "create_topic", "topic": "fan"}); errCode(r) != "" {
			t.Fatalf("create: %v", r)
		}
	}
	// watch keeps a subscription on the topic that gets nothing (from
	// the log end) so that the partition is shared by every subscriber
	// below and this one.
	watch := func(id int) {
		t.Helper()
		if r := p.call(id, map[string]any{"op": "subscribe", "topic": "fan", "from": "latest"}); errCode(r) != "" {
			t.Fatalf("subscribe: %v", r)
		}
	}
	create(10)
	produceAll(t, p, 1, "fan", fanRecords("first1", n))
	watch(12)
	before := ts.pushes.encoded.Load()
	first := subscribeAll(t, ts.addr, "fan", n)
	if len(first) != n {
		t.Fatalf("first subscriber: %d records, want %d", len(first), n)
	}
	if enc := ts.pushes.encoded.Load() - before; enc != n {
		t.Fatalf("first subscriber: %d records encoded, want %d", enc, n)
	}
	for i := range 7 {
		got := subscribeAll(t, ts.addr, "fan", n)
		if !reflect.DeepEqual(got, first) {
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(first)
			t.Fatalf("subscriber %d got other records:\n%s\nwant\n%s", i+2, a, b)
		}
	}
	if enc := ts.pushes.encoded.Load() - before; enc != n {
		t.Fatalf("8 subscribers: %d records encoded, want %d (once each)", enc, n)
	}

	if r := p.call(2, map[string]any{"op": "delete_topic", "topic": "fan"}); errCode(r) != "" {
		t.Fatalf("delete: %v", r)
	}
	create(11)
	produceAll(t, p, 3, "fan", fanRecords("second", n))
	watch(13)
	subscribeAll(t, ts.addr, "fan", n)
	again := subscribeAll(t, ts.addr, "fan", n)
	for i, r := range again {
		m := r.(map[string]any)
		if i%5 == 0 && m["value"].(map[string]any)["tag"] != "second" {
			t.Fatalf("record %d after the topic was created again: %v", i, m)
		}
		if i%5 == 1 && m["value"] != fmt.Sprintf("second text %d", i) {
			t.Fatalf("record %d after the topic was created again: %v", i, m)
		}
	}
	if len(again) != n {
		t.Fatalf("after the topic was created again: %d records, want %d", len(again), n)
	}
}

// TestPushCacheMatchesMemory: an entry serves only the very records it was
// encoded from. Equal bytes elsewhere in memory (another read of a batch
// the read cache let go, a topic created again) are other records.
func TestPushCacheMatchesMemory(t *testing.T) {
	pc := newPushCache()
	pc.join("t", 0)
	pc.join("t", 0)
	val := []byte(`{"a":1}`)
	recs := []engine.Record{{Offset: 5, Timestamp: 9, Value: val}, {Offset: 6, Timestamp: 9, Value: val[:0:0]}}
	pc.store("t", 0, false, &encodedRun{recs: recs, ends: []int{10, 20}, data: make([]byte, 20)})
	if shared, e, k := pc.lookup("t", 0, false, recs); !shared || e == nil || k != 2 {
		t.Fatalf("same records: shared %v, %d matched, want 2", shared, k)
	}
	copied := []engine.Record{{Offset: 5, Timestamp: 9, Value: bytes.Clone(val)}, recs[1]}
	if _, _, k := pc.lookup("t", 0, false, copied); k != 0 {
		t.Fatalf("equal bytes at other memory: %d matched, want 0", k)
	}
	later := []engine.Record{recs[0], {Offset: 6, Timestamp: 10, Value: val[:0:0]}}
	if _, _, k := pc.lookup("t", 0, false, later); k != 1 {
		t.Fatalf("second record with another timestamp: %d matched, want 1", k)
	}
	pc.leave("t", 0)
	if shared, _, _ := pc.lookup("t", 0, false, recs); shared {
		t.Fatal("one subscriber left: still shared")
	}
	pc.store("t", 0, false, &encodedRun{recs: recs, ends: []int{10, 20}, data: make([]byte, 20)})
	pc.leave("t", 0)
	if len(pc.m) != 0 || pc.bytes != 0 || len(pc.subs) != 0 {
		t.Fatalf("after the last subscriber: %d entries, %d bytes, %d partitions", len(pc.m), pc.bytes, len(pc.subs))
	}
}
