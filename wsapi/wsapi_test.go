package wsapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
)

// collect reads pushes of sub until n records arrived, checking offset order
// per partition on the way.
func collect(t *testing.T, c *rawConn, sub int64, n int) []map[string]any {
	t.Helper()
	var recs []map[string]any
	last := map[int64]int64{}
	for len(recs) < n {
		m := c.waitFor(func(m map[string]any) bool { return m["id"] == nil && m["sub"] == float64(sub) })
		if code := errCode(m); code != "" {
			t.Fatalf("subscription error: %v", m)
		}
		p := num(t, m, "partition")
		rs, _ := m["records"].([]any)
		if len(rs) == 0 {
			t.Fatalf("push without records: %v", m)
		}
		for _, r := range rs {
			rec := r.(map[string]any)
			off := num(t, rec, "offset")
			if prev, ok := last[p]; ok && off <= prev {
				t.Fatalf("partition %d: offset %d after %d", p, off, prev)
			}
			last[p] = off
			recs = append(recs, rec)
		}
		if next := num(t, m, "next"); next != last[p]+1 {
			t.Fatalf("push next = %d, last offset %d", next, last[p])
		}
	}
	return recs
}

func TestProduceAckTailRoundTrip(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)

	r := c.call(1, map[string]any{"op": "produce", "topic": "orders", "key": "user-1",
		"value": map[string]any{"n": 1}, "headers": map[string]string{"trace": "t1"}})
	if errCode(r) != "" || num(t, r, "partition") != 0 || num(t, r, "offset") != 0 || num(t, r, "timestamp") <= 0 {
		t.Fatalf("single produce reply: %v", r)
	}
	b64 := base64.StdEncoding.EncodeToString
	r = c.call(2, map[string]any{"op": "produce", "topic": "orders", "records": []any{
		map[string]any{"value": "plain text"},
		map[string]any{"value_b64": b64([]byte{0xff, 0x00, 0x01})},
		map[string]any{"key": "user-1", "tombstone": true},
		map[string]any{"key_b64": b64([]byte{0xfe}), "value": 42},
		map[string]any{"value": "", "headers_b64": map[string]string{"bin": b64([]byte{0xff})}},
		map[string]any{"key": "user-2", "value": nil},
	}})
	acks, _ := r["acks"].([]any)
	if errCode(r) != "" || len(acks) != 6 {
		t.Fatalf("batch produce reply: %v", r)
	}
	for i, a := range acks {
		if off := num(t, a.(map[string]any), "offset"); off != int64(i+1) {
			t.Fatalf("ack %d has offset %d", i, off)
		}
	}

	// What the engine stored, byte for byte.
	res, err := ts.eng.Read("orders", 0, 0, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key, value []byte
	}{
		{[]byte("user-1"), []byte(`{"n":1}`)},
		{nil, []byte("plain text")},
		{nil, []byte{0xff, 0x00, 0x01}},
		{[]byte("user-1"), nil},
		{[]byte{0xfe}, []byte("42")},
		{nil, []byte{}},
		{[]byte("user-2"), nil},
	}
	if len(res.Records) != len(want) {
		t.Fatalf("engine holds %d records, want %d", len(res.Records), len(want))
	}
	for i, w := range want {
		got := res.Records[i]
		if !bytes.Equal(got.Key, w.key) || (got.Key == nil) != (w.key == nil) {
			t.Errorf("record %d key %q, want %q", i, got.Key, w.key)
		}
		if !bytes.Equal(got.Value, w.value) || (got.Value == nil) != (w.value == nil) {
			t.Errorf("record %d value %q (nil %v), want %q (nil %v)", i, got.Value, got.Value == nil, w.value, w.value == nil)
		}
	}
	if h := res.Records[0].Headers; len(h) != 1 || h[0].Key != "trace" || string(h[0].Value) != "t1" {
		t.Errorf("record 0 headers %v", h)
	}

	s := c.call(3, map[string]any{"op": "subscribe", "topic": "orders", "from": "earliest"})
	if errCode(s) != "" {
		t.Fatalf("subscribe: %v", s)
	}
	sub := num(t, s, "sub")
	recs := collect(t, c, sub, 7)
	check := func(i int, field string, want any) {
		t.Helper()
		if got := fmt.Sprint(recs[i][field]); got != fmt.Sprint(want) {
			t.Errorf("pushed record %d %s = %s, want %v (record %v)", i, field, got, want, recs[i])
		}
	}
	check(0, "key", "user-1")
	check(0, "value", map[string]any{"n": float64(1)})
	check(0, "headers", map[string]any{"trace": "t1"})
	check(1, "value", "plain text")
	check(2, "value_b64", "/wAB")
	check(3, "tombstone", true)
	check(3, "value", nil)
	check(4, "key_b64", "/g==")
	check(4, "value", 42)
	check(5, "value", "")
	check(5, "headers_b64", map[string]any{"bin": "/w=="})
	check(6, "tombstone", true)
	for i, rec := range recs {
		if num(t, rec, "offset") != int64(i) || num(t, rec, "partition") != 0 || num(t, rec, "timestamp") <= 0 {
			t.Errorf("pushed record %d: %v", i, rec)
		}
	}

	// A record produced now reaches the parked subscription.
	r = c.call(4, map[string]any{"op": "produce", "topic": "orders", "value": "live"})
	live := collect(t, c, sub, 1)
	if live[0]["value"] != "live" || num(t, live[0], "offset") != num(t, r, "offset") {
		t.Fatalf("live push %v for ack %v", live[0], r)
	}

	// Unsubscribe: no more pushes for sub.
	if u := c.call(5, map[string]any{"op": "unsubscribe", "sub": sub}); errCode(u) != "" || u["ok"] != true {
		t.Fatalf("unsubscribe: %v", u)
	}
	c.call(6, map[string]any{"op": "produce", "topic": "orders", "value": "after"})
	if d := c.call(7, map[string]any{"op": "describe", "topic": "orders"}); errCode(d) != "" {
		t.Fatalf("describe: %v", d)
	}
	for _, m := range c.pending {
		if m["sub"] != nil {
			if rs, _ := m["records"].([]any); len(rs) > 0 && rs[0].(map[string]any)["value"] == "after" {
				t.Fatalf("push after unsubscribe: %v", m)
			}
		}
	}
}

func TestSubscribeFromForms(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	produce := func(id int, vals ...string) []int64 {
		var recs []any
		for _, v := range vals {
			recs = append(recs, map[string]any{"value": v})
		}
		r := c.call(id, map[string]any{"op": "produce", "topic": "t", "records": recs})
		acks, _ := r["acks"].([]any)
		if len(acks) != len(vals) {
			t.Fatalf("produce: %v", r)
		}
		var tss []int64
		for _, a := range acks {
			tss = append(tss, num(t, a.(map[string]any), "timestamp"))
		}
		return tss
	}
	first := produce(1, "a0", "a1", "a2", "a3", "a4")
	// Let the wall clock pass the first batch's commit time, so the second
	// batch is committed at a later millisecond.
	for time.Now().UnixMilli() <= first[len(first)-1] {
		time.Sleep(time.Millisecond)
	}
	second := produce(2, "b0", "b1", "b2", "b3", "b4")

	cases := []struct {
		from      any
		wantFirst int64
	}{
		{"earliest", 0},
		{map[string]any{"offset": 3}, 3},
		{map[string]any{"offset": 10}, 10}, // the log end: waits for the next record
		{map[string]any{"timestamp": second[0]}, 5},
		{map[string]any{"timestamp": 0}, 0},
		{"latest", 10},
		{nil, 10}, // no from: latest
	}
	subs := make([]int64, len(cases))
	for i, tc := range cases {
		req := map[string]any{"op": "subscribe", "topic": "t"}
		if tc.from != nil {
			req["from"] = tc.from
		}
		r := c.call(10+i, req)
		if errCode(r) != "" {
			t.Fatalf("from %v: %v", tc.from, r)
		}
		subs[i] = num(t, r, "sub")
		parts := r["partitions"].([]any)
		if got := num(t, parts[0].(map[string]any), "from"); got != tc.wantFirst {
			t.Errorf("from %v: starts at %d, want %d", tc.from, got, tc.wantFirst)
		}
	}
	produce(3, "c0")
	for i, tc := range cases {
		recs := collect(t, c, subs[i], int(11-tc.wantFirst))
		if got := num(t, recs[0], "offset"); got != tc.wantFirst {
			t.Errorf("from %v: first pushed offset %d, want %d", tc.from, got, tc.wantFirst)
		}
		if last := recs[len(recs)-1]; last["value"] != "c0" {
			t.Errorf("from %v: last pushed record %v, want c0", tc.from, last)
		}
	}

	// The same forms on the tail endpoint.
	tailCases := []struct {
		query     string
		wantFirst int64
	}{
		{"from=earliest", 0},
		{"from=7", 7},
		{fmt.Sprintf("from=@%d", second[0]), 5},
		{"from=latest", 11},
		{"", 11},
	}
	tails := make([]*rawConn, len(tailCases))
	for i, tc := range tailCases {
		tails[i] = dialRaw(t, ts.addr, "/v1/topics/t/tail?"+tc.query, nil)
	}
	// A tail connection subscribes during the handshake's aftermath: make
	// sure every one has started before producing the next record, by
	// waiting for the server to count their subscriptions.
	waitUntil(t, func() bool { return ts.Stats().Subscriptions >= len(cases)+len(tailCases) }, "tail subscriptions to start")
	produce(4, "d0")
	for i, tc := range tailCases {
		for off := tc.wantFirst; off <= 11; off++ {
			m := tails[i].next()
			if got := num(t, m, "offset"); got != off {
				t.Fatalf("tail %q: got offset %d, want %d (%v)", tc.query, got, off, m)
			}
		}
	}
}

// waitUntil polls cond until it holds; the bound only guards against a hang.
func waitUntil(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestCursorResumeAfterReconnect(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	ctx := testCtx(t)
	c1 := dialClient(t, ts.addr)
	var recs []wire.RecordIn
	for i := range 10 {
		v := fmt.Sprintf(`{"i":%d}`, i)
		recs = append(recs, wire.RecordIn{Value: []byte(v)})
	}
	if _, err := c1.Produce(ctx, "jobs", -1, recs); err != nil {
		t.Fatal(err)
	}
	sub, err := c1.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "jobs", Partition: -1, From: "earliest", Consumer: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < 10 {
		p := <-sub.C()
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		got += len(p.Records)
	}
	// The worker processed offsets 0..5: it commits 6, the next it wants.
	if err := sub.Commit(ctx, 0, 6); err != nil {
		t.Fatal(err)
	}
	if off, ok, err := ts.eng.Cursor("worker", "jobs", 0); err != nil || !ok || off != 6 {
		t.Fatalf("engine cursor = %d %v %v, want 6", off, ok, err)
	}
	c1.Close()

	c2 := dialClient(t, ts.addr)
	if _, err := c2.Produce(ctx, "jobs", -1, []wire.RecordIn{{Value: []byte(`"new"`)}}); err != nil {
		t.Fatal(err)
	}
	// "from" says latest, but the consumer's cursor wins.
	sub2, err := c2.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "jobs", Partition: -1, From: "latest", Consumer: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub2.Starts) != 1 || sub2.Starts[0].From != 6 {
		t.Fatalf("resumed at %v, want offset 6", sub2.Starts)
	}
	var offs []int64
	for len(offs) < 5 {
		p := <-sub2.C()
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		for _, r := range p.Records {
			offs = append(offs, r.Offset)
		}
	}
	if fmt.Sprint(offs) != "[6 7 8 9 10]" {
		t.Fatalf("resumed offsets %v", offs)
	}
	// A consumer without a cursor uses from.
	sub3, err := c2.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "jobs", Partition: -1, From: "earliest", Consumer: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	if sub3.Starts[0].From != 0 {
		t.Fatalf("fresh consumer starts at %v", sub3.Starts)
	}
}

func TestConcurrentProducersAndTailers(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	ctx := testCtx(t)
	admin := dialClient(t, ts.addr)
	if _, err := admin.CreateTopic(ctx, "conc", wire.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	const producers, requests, perReq, tailers = 6, 25, 4, 4
	const total = producers * requests * perReq

	type seen struct {
		producer, seq int
		partition     int
		offset        int64
	}
	tailOut := make([][]seen, tailers)
	var tailWG sync.WaitGroup
	for i := range tailers {
		tc := dialClient(t, ts.addr)
		from := "earliest"
		sub, err := tc.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "conc", Partition: -1, From: from})
		if err != nil {
			t.Fatal(err)
		}
		tailWG.Add(1)
		go func() {
			defer tailWG.Done()
			for len(tailOut[i]) < total {
				p, ok := <-sub.C()
				if !ok || p.Err != nil {
					t.Errorf("tailer %d: subscription ended: %v %v", i, sub.Err(), p.Err)
					return
				}
				for _, r := range p.Records {
					var pr, sq int
					fmt.Sscanf(string(r.Value), `{"p":%d,"seq":%d}`, &pr, &sq)
					tailOut[i] = append(tailOut[i], seen{pr, sq, r.Partition, r.Offset})
				}
			}
		}()
	}

	acked := make([][]engine.Ack, producers)
	var prodWG sync.WaitGroup
	for p := range producers {
		pc := dialClient(t, ts.addr)
		prodWG.Add(1)
		go func() {
			defer prodWG.Done()
			var pend []*wsclient.Pending
			for r := range requests {
				var recs []wire.RecordIn
				for k := range perReq {
					key := fmt.Sprintf("producer-%d", p)
					recs = append(recs, wire.RecordIn{Key: &key, Value: []byte(fmt.Sprintf(`{"p":%d,"seq":%d}`, p, r*perReq+k))})
				}
				pd, err := pc.ProduceAsync("conc", -1, recs)
				if err != nil {
					t.Error(err)
					return
				}
				pend = append(pend, pd)
			}
			for _, pd := range pend {
				a, err := pd.Wait(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				acked[p] = append(acked[p], a...)
			}
		}()
	}
	prodWG.Wait()
	tailWG.Wait()
	if t.Failed() {
		return
	}

	// Acks: each producer's records on one partition, offsets increasing
	// with the sequence number (a connection's requests keep their order).
	where := map[[2]int]engine.Ack{}
	for p, acks := range acked {
		if len(acks) != requests*perReq {
			t.Fatalf("producer %d: %d acks", p, len(acks))
		}
		for i, a := range acks {
			if a.Partition != acks[0].Partition {
				t.Fatalf("producer %d: records on partitions %d and %d (one key)", p, acks[0].Partition, a.Partition)
			}
			if i > 0 && a.Offset <= acks[i-1].Offset {
				t.Fatalf("producer %d: seq %d at offset %d after %d", p, i, a.Offset, acks[i-1].Offset)
			}
			where[[2]int{p, i}] = a
		}
	}
	// Tailers: every record once, offsets contiguous per partition, and
	// each one where its ack said.
	for i, out := range tailOut {
		if len(out) != total {
			t.Fatalf("tailer %d saw %d records, want %d", i, len(out), total)
		}
		next := map[int]int64{}
		for _, s := range out {
			if s.offset != next[s.partition] {
				t.Fatalf("tailer %d: partition %d offset %d, want %d", i, s.partition, s.offset, next[s.partition])
			}
			next[s.partition]++
			if a := where[[2]int{s.producer, s.seq}]; a.Partition != s.partition || a.Offset != s.offset {
				t.Fatalf("tailer %d: producer %d seq %d at %d/%d, acked at %d/%d", i, s.producer, s.seq, s.partition, s.offset, a.Partition, a.Offset)
			}
		}
	}
}

func TestPlainProduceEndpoint(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/topics/clicks/produce?key=k1", nil)
	vals := []string{`{"x":1}`, "hello", ""}
	for _, v := range vals {
		c.sendText(v)
	}
	if err := c.ws.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		m := c.next()
		if errCode(m) != "" || num(t, m, "offset") != int64(i) || num(t, m, "partition") != 0 {
			t.Fatalf("ack %d: %v", i, m)
		}
	}
	res, err := ts.eng.Read("clicks", 0, 0, 10, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := append(vals, "\x00\x01\x02")
	for i, r := range res.Records {
		if string(r.Value) != want[i] || r.Value == nil || string(r.Key) != "k1" {
			t.Errorf("record %d = %q key %q, want %q", i, r.Value, r.Key, want[i])
		}
	}
	if len(res.Records) != 4 {
		t.Fatalf("stored %d records", len(res.Records))
	}
}

func TestClientProduceForms(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	ctx := testCtx(t)
	c := dialClient(t, ts.addr)
	if _, err := c.CreateTopic(ctx, "forms", wire.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	k := "key-é"
	b64 := "/wAB"
	p, err := c.ProduceRecordAsync("forms", 1, wire.RecordIn{Key: &k, Value: []byte(`{"a":[1,2]}`), Headers: map[string]string{"h": "v\n"}})
	if err != nil {
		t.Fatal(err)
	}
	acks, err := p.Wait(ctx)
	if err != nil || len(acks) != 1 || acks[0].Partition != 1 || acks[0].Offset != 0 {
		t.Fatalf("ProduceRecordAsync: %v %v", acks, err)
	}
	acks, err = c.Produce(ctx, "forms", 1, []wire.RecordIn{{ValueB64: &b64}, {Tombstone: true, Key: &k}, {Value: []byte(`"text"`)}})
	if err != nil || len(acks) != 3 || acks[2].Offset != 3 {
		t.Fatalf("Produce: %v %v", acks, err)
	}
	// A value that is not JSON could smuggle records into the request: the
	// client refuses it before sending anything.
	if _, err := c.ProduceAsync("forms", 1, []wire.RecordIn{{Value: []byte(`1},{"value":2`)}}); err == nil {
		t.Fatal("ProduceAsync sent an invalid JSON value")
	}
	if _, err := c.ProduceRecordAsync("forms", 1, wire.RecordIn{Value: []byte(`1,"key":"x"`)}); err == nil {
		t.Fatal("ProduceRecordAsync sent an invalid JSON value")
	}
	res, err := ts.eng.Read("forms", 1, 0, 10, 1<<20)
	if err != nil || len(res.Records) != 4 {
		t.Fatalf("stored %v %v", res.Records, err)
	}
	r := res.Records
	if string(r[0].Key) != k || string(r[0].Value) != `{"a":[1,2]}` || len(r[0].Headers) != 1 || string(r[0].Headers[0].Value) != "v\n" {
		t.Errorf("record 0: %+v", r[0])
	}
	if string(r[1].Value) != "\xff\x00\x01" || r[2].Value != nil || string(r[3].Value) != "text" {
		t.Errorf("records 1-3: %q %v %q", r[1].Value, r[2].Value, r[3].Value)
	}
}

// TestPushesStayBounded: values whose JSON is six times their size (control
// characters) still make pushes of about 2×PushBytes, and every record
// arrives once, in order.
func TestPushesStayBounded(t *testing.T) {
	opts := DefaultOptions()
	opts.PushBytes = 4 << 10
	ts := startServer(t, opts)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	val := strings.Repeat("\x01", 1000)
	var recs []any
	for range 20 {
		recs = append(recs, map[string]any{"value": val})
	}
	if r := c.call(1, map[string]any{"op": "produce", "topic": "ctl", "records": recs}); errCode(r) != "" {
		t.Fatal(r)
	}
	c.send(map[string]any{"op": "subscribe", "id": 2, "topic": "ctl", "from": "earliest"})
	next, pushes := int64(0), 0
	for next < 20 {
		c.ws.SetReadDeadline(time.Now().Add(hangGuard))
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), `{"sub":`) {
			continue // the subscribe reply
		}
		recJSON := len(wire.AppendRecordJSON(nil, 0, &engine.Record{Offset: 19, Timestamp: 1 << 40, Value: []byte(val)}))
		if len(b) > 2*opts.PushBytes+recJSON+128 {
			t.Fatalf("push of %d bytes, bound %d", len(b), 2*opts.PushBytes+recJSON+128)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for _, r := range m["records"].([]any) {
			rec := r.(map[string]any)
			if num(t, rec, "offset") != next || rec["value"] != val {
				t.Fatalf("record %v, want offset %d", rec["offset"], next)
			}
			next++
		}
		if num(t, m, "next") != next {
			t.Fatalf("push next %v after offset %d", m["next"], next-1)
		}
		pushes++
	}
	if pushes < 5 {
		t.Fatalf("20 records of 6 KB JSON came in %d pushes", pushes)
	}
}
