package wsapi

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// burstBackend is a real engine that lets a test line up a burst of
// requests behind one produce, and watch the engine calls they become.
//   - A produce to topic "gate" closes entered and waits for gate, so that
//     the connection's worker is busy while the test queues the burst.
//   - Produces to topics "left" and "right" each wait until the other one
//     has started: they complete only when they run at the same time.
//   - A produce to partition 1 of topic "fail" fails as a full disk does.
type burstBackend struct {
	*engine.Engine
	entered chan struct{}
	gate    chan struct{}

	mu    sync.Mutex
	calls []burstCall // every Produce after the gate's, in the order they started
	met   map[string]chan struct{}
}

// burstCall is one Produce the engine was asked for.
type burstCall struct {
	topic     string
	partition int
	records   int
}

func newBurstBackend(e *engine.Engine) *burstBackend {
	return &burstBackend{
		Engine:  e,
		entered: make(chan struct{}),
		gate:    make(chan struct{}),
		met:     map[string]chan struct{}{"left": make(chan struct{}), "right": make(chan struct{})},
	}
}

func (b *burstBackend) Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	switch topic {
	case "gate":
		close(b.entered)
		<-b.gate
		return b.Engine.Produce(ctx, topic, partition, recs)
	case "left", "right":
		other := map[string]string{"left": "right", "right": "left"}[topic]
		close(b.met[topic])
		select {
		case <-b.met[other]:
		case <-time.After(hangGuard):
			return nil, fmt.Errorf("produce to %s: the produce to %s never ran beside it", topic, other)
		}
	case "fail":
		if partition == 1 {
			b.record(topic, partition, len(recs))
			return nil, fmt.Errorf("topic %s partition %d: %w", topic, partition, errDiskFull)
		}
	}
	b.record(topic, partition, len(recs))
	return b.Engine.Produce(ctx, topic, partition, recs)
}

func (b *burstBackend) record(topic string, partition, records int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, burstCall{topic, partition, records})
}

// burstServer serves a burstBackend with opts and creates topics (name →
// partitions; sync mode every-write, so that an ack means visible).
func burstServer(t *testing.T, opts Options, topics map[string]int) (*testServer, *burstBackend) {
	t.Helper()
	e, dir := openEngine(t)
	for name, parts := range topics {
		cfg := engine.DefaultTopicConfig()
		cfg.Partitions = parts
		if err := e.CreateTopic(name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	b := newBurstBackend(e)
	ts := serveBackend(t, b, dir, opts)
	ts.eng = e
	return ts, b
}

// holdWorker sends a produce to "gate" (id "gate") and returns once the
// connection's worker is inside it; release lets it finish.
func holdWorker(t *testing.T, c *rawConn, b *burstBackend) (release func()) {
	t.Helper()
	c.sendText(`{"op":"produce","id":"gate","topic":"gate","value":0}`)
	select {
	case <-b.entered:
	case <-time.After(hangGuard):
		t.Fatal("the produce to gate never reached the engine")
	}
	return func() {
		close(b.gate)
		if m := c.waitFor(func(m map[string]any) bool { return m["id"] == "gate" }); errCode(m) != "" {
			t.Fatalf("gate produce: %v", m)
		}
	}
}

// replies reads n replies (messages with an id; pushes are kept in
// pending) and fails unless their ids are want, in that order.
func replies(t *testing.T, c *rawConn, want []string) []map[string]any {
	t.Helper()
	var got []map[string]any
	for len(got) < len(want) {
		m := c.waitFor(func(m map[string]any) bool { return m["id"] != nil })
		if id := fmt.Sprint(m["id"]); id != want[len(got)] {
			t.Fatalf("reply %d has id %s, want %s: %v", len(got), id, want[len(got)], m)
		}
		got = append(got, m)
	}
	return got
}

// ackList returns the (partition, offset) of every ack of a produce reply.
func ackList(t *testing.T, m map[string]any) [][2]int64 {
	t.Helper()
	if errCode(m) != "" {
		t.Fatalf("produce failed: %v", m)
	}
	if acks, ok := m["acks"].([]any); ok {
		var out [][2]int64
		for _, a := range acks {
			a := a.(map[string]any)
			out = append(out, [2]int64{num(t, a, "partition"), num(t, a, "offset")})
		}
		return out
	}
	return [][2]int64{{num(t, m, "partition"), num(t, m, "offset")}}
}

// Produce requests queued together for interleaved topics and partitions
// (explicit, and chosen by the engine) are stored in request order within
// every partition, answered in request order, and become one engine call
// per topic and partition.
func TestBurstKeepsPartitionOrder(t *testing.T) {
	topics := map[string]int{"gate": 1, "a": 3, "b": 1, "c": 2, "pick": 2}
	ts, b := burstServer(t, DefaultOptions(), topics)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	release := holdWorker(t, c, b)

	type sent struct {
		topic     string
		partition int // -1: the engine's choice
		values    []string
	}
	var reqs []sent
	var ids []string
	names := []string{"a", "b", "c", "a", "pick"}
	for i := range 60 {
		r := sent{topic: names[i%len(names)], partition: (i / len(names)) % topics[names[i%len(names)]]}
		req := map[string]any{"op": "produce", "id": i, "topic": r.topic}
		if r.topic == "pick" && i%2 == 0 {
			r.partition = -1
		} else {
			req["partition"] = r.partition
		}
		if i%4 == 0 {
			r.values = []string{fmt.Sprintf("r%d", i)}
			req["value"] = r.values[0]
		} else {
			var recs []any
			for k := range 1 + i%3 {
				v := fmt.Sprintf("r%d.%d", i, k)
				r.values = append(r.values, v)
				recs = append(recs, map[string]any{"value": v})
			}
			req["records"] = recs
		}
		c.send(req)
		reqs = append(reqs, r)
		ids = append(ids, fmt.Sprint(i))
	}
	waitInflight(t, ts.Server, int64(len(reqs))+1)
	release()

	// Offsets follow request order in every partition; each ack names
	// the partition asked for.
	next := map[string]int64{}
	want := map[string][]string{} // "topic/partition" → values in order
	for i, m := range replies(t, c, ids) {
		acks := ackList(t, m)
		if len(acks) != len(reqs[i].values) {
			t.Fatalf("reply %d: %d acks for %d records: %v", i, len(acks), len(reqs[i].values), m)
		}
		for k, a := range acks {
			if p := reqs[i].partition; p >= 0 && a[0] != int64(p) {
				t.Fatalf("reply %d: ack on partition %d, asked for %d", i, a[0], p)
			}
			tp := fmt.Sprintf("%s/%d", reqs[i].topic, a[0])
			if a[1] != next[tp] {
				t.Fatalf("reply %d: %s offset %d, want %d (request order)", i, tp, a[1], next[tp])
			}
			next[tp]++
			want[tp] = append(want[tp], reqs[i].values[k])
		}
	}
	for topic, parts := range topics {
		if topic == "gate" {
			continue
		}
		for p := range parts {
			res, err := ts.eng.Read(topic, p, 0, 1000, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			tp := fmt.Sprintf("%s/%d", topic, p)
			var got []string
			for _, r := range res.Records {
				got = append(got, string(r.Value))
			}
			if fmt.Sprint(got) != fmt.Sprint(want[tp]) {
				t.Errorf("%s stored %v, want %v", tp, got, want[tp])
			}
		}
	}

	// One call per topic and explicit partition; "pick" mixes the
	// engine's choice with explicit partitions, so only consecutive
	// requests of it merge, in one lane.
	b.mu.Lock()
	defer b.mu.Unlock()
	perPart := map[string]int{}
	for _, call := range b.calls {
		if call.topic != "pick" {
			perPart[fmt.Sprintf("%s/%d", call.topic, call.partition)]++
		}
	}
	for tp, n := range perPart {
		if n != 1 {
			t.Errorf("%s: %d engine calls for one burst, want 1 (calls %v)", tp, n, b.calls)
		}
	}
	if len(perPart) != 3+1+2 {
		t.Errorf("engine calls %v: want one for each of the 6 partitions of a, b and c", b.calls)
	}
}

// Two produces for different topics queued together run at the same time:
// each of them completes only while the other one is running.
func TestBurstRunsPartitionsConcurrently(t *testing.T) {
	ts, b := burstServer(t, DefaultOptions(), map[string]int{"gate": 1, "left": 1, "right": 1})
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	release := holdWorker(t, c, b)
	c.sendText(`{"op":"produce","id":1,"topic":"left","value":"l"}`)
	c.sendText(`{"op":"produce","id":2,"topic":"right","value":"r"}`)
	waitInflight(t, ts.Server, 3)
	release()
	for _, m := range replies(t, c, []string{"1", "2"}) {
		if a := ackList(t, m); len(a) != 1 || a[0] != [2]int64{0, 0} {
			t.Errorf("reply %v: want one ack at partition 0 offset 0", m)
		}
	}
}

// Requests other than a produce, and a produce spanning partitions, are
// barriers in a burst: what was accepted before them is stored before they
// run, and nothing accepted after them starts before they ran.
func TestBurstBarriers(t *testing.T) {
	ts, b := burstServer(t, DefaultOptions(), map[string]int{"gate": 1, "b": 1, "c": 2})
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	release := holdWorker(t, c, b)
	reqs := []string{
		`{"op":"produce","id":1,"topic":"fresh","value":"v0"}`, // auto-created
		`{"op":"describe","id":2,"topic":"fresh"}`,
		`{"op":"subscribe","id":3,"topic":"fresh","from":"earliest"}`,
		`{"op":"produce","id":4,"topic":"fresh","value":"v1"}`,
		`{"op":"produce","id":5,"topic":"b","value":"old"}`,
		`{"op":"delete_topic","id":6,"topic":"b"}`,
		`{"op":"produce","id":7,"topic":"b","value":"new"}`, // auto-created again
		`{"op":"produce","id":8,"topic":"c","partition":0,"value":"c0"}`,
		`{"op":"produce","id":9,"topic":"c","records":[{"value":"c1","partition":0},{"value":"c2","partition":1}]}`,
		`{"op":"produce","id":10,"topic":"c","partition":0,"value":"c3"}`,
	}
	for _, r := range reqs {
		c.sendText(r)
	}
	waitInflight(t, ts.Server, int64(len(reqs))+1)
	release()
	got := replies(t, c, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"})
	for _, i := range []int{1, 2, 5} {
		if errCode(got[i]) != "" {
			t.Fatalf("reply %d: %v", i+1, got[i])
		}
	}
	if parts := got[1]["topic"].(map[string]any)["partitions"].([]any); parts[0].(map[string]any)["hwm"] != float64(1) {
		t.Errorf("describe after the first produce to fresh: %v", got[1])
	}
	for i, want := range map[int][][2]int64{0: {{0, 0}}, 3: {{0, 1}}, 6: {{0, 0}}, 7: {{0, 0}}, 8: {{0, 1}, {1, 0}}, 9: {{0, 2}}} {
		if a := ackList(t, got[i]); fmt.Sprint(a) != fmt.Sprint(want) {
			t.Errorf("reply %d acks %v, want %v", i+1, a, want)
		}
	}
	// The subscription, made between the two produces to fresh, delivers
	// both.
	var pushed []string
	for len(pushed) < 2 {
		m := c.waitFor(func(m map[string]any) bool { return m["sub"] != nil })
		for _, r := range m["records"].([]any) {
			pushed = append(pushed, r.(map[string]any)["value"].(string))
		}
	}
	if fmt.Sprint(pushed) != "[v0 v1]" {
		t.Errorf("subscription pushed %v, want [v0 v1]", pushed)
	}
	// b holds only what was produced after it was deleted.
	res, err := ts.eng.Read("b", 0, 0, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 || string(res.Records[0].Value) != "new" {
		t.Errorf("b holds %v after delete and produce, want only \"new\"", res.Records)
	}
}

// A burst with failing produces among good ones: every request is answered
// in order with exactly its outcome, and the good ones are stored, once.
func TestBurstFailuresAnsweredEach(t *testing.T) {
	opts := DefaultOptions()
	opts.AutoCreate = false
	ts, b := burstServer(t, opts, map[string]int{"gate": 1, "ok": 1, "fail": 2, "one": 1})
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	release := holdWorker(t, c, b)
	reqs := []string{
		`{"op":"produce","id":1,"topic":"ok","value":"A"}`,
		`{"op":"produce","id":2,"topic":"fail","partition":1,"value":"B"}`,
		`{"op":"produce","id":3,"topic":"ok","records":[{"value":"C"},{"value":"C2"}]}`,
		`{"op":"produce","id":4,"topic":"missing","value":"D"}`,
		`{"op":"produce","id":5,"topic":"one","partition":5,"value":"E"}`,
		`{"op":"produce","id":6,"topic":"fail","partition":0,"value":"F"}`,
		`{"op":"produce","id":7,"topic":"fail","partition":1,"records":[{"value":"B2"}]}`,
		`{"op":"produce","id":8,"topic":"ok","value":"G"}`,
	}
	for _, r := range reqs {
		c.sendText(r)
	}
	waitInflight(t, ts.Server, int64(len(reqs))+1)
	release()
	got := replies(t, c, []string{"1", "2", "3", "4", "5", "6", "7", "8"})
	for i, code := range map[int]string{1: wire.CodeInternal, 3: wire.CodeTopicNotFound, 4: wire.CodePartitionOutOfRange, 6: wire.CodeInternal} {
		if errCode(got[i]) != code {
			t.Errorf("reply %d: %v, want error %s", i+1, got[i], code)
		}
		if got[i]["acks"] != nil {
			t.Errorf("reply %d acks records though none of it was stored: %v", i+1, got[i])
		}
	}
	for i, want := range map[int][][2]int64{0: {{0, 0}}, 2: {{0, 1}, {0, 2}}, 5: {{0, 0}}, 7: {{0, 3}}} {
		if a := ackList(t, got[i]); fmt.Sprint(a) != fmt.Sprint(want) {
			t.Errorf("reply %d acks %v, want %v", i+1, a, want)
		}
	}
	for topic, want := range map[string]string{"ok": `["A" "C" "C2" "G"]`, "fail": `["F"]`, "one": `[]`} {
		got := storedRecords(t, ts.eng, topic, map[string]int{"ok": 1, "fail": 2, "one": 1}[topic])
		var vals []string
		for p := int64(0); p < 2; p++ {
			for o := int64(0); o < int64(len(got)); o++ {
				if v, ok := got[[2]int64{p, o}]; ok {
					vals = append(vals, v)
				}
			}
		}
		if s := fmt.Sprintf("%q", vals); s != want && !(want == `[]` && len(vals) == 0) {
			t.Errorf("%s stores %s, want %s", topic, s, want)
		}
	}
	if _, err := ts.eng.Describe("missing"); err == nil {
		t.Error(`topic "missing" exists after a refused produce`)
	}
}
