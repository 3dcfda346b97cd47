package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// errDiskFull is the failure the fault backend injects.
var errDiskFull = errors.New("write p00001/00000000000000000000.log: no space left on device")

// faultBackend is a real engine whose appends to one partition fail, and
// which behaves as engine.Produce documents for records spread over
// partitions: the other partitions store theirs, and the error is an
// *engine.PartialError naming exactly what was stored. Records with
// partition -1 go to the partition named by their key ("p0", "p1"), a
// stand-in for the partitioner that the test can predict.
type faultBackend struct {
	*engine.Engine
	failPartition int

	mu    sync.Mutex
	calls int
	gate  chan struct{} // when set, the first Produce waits for it to close
}

func (f *faultBackend) Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	f.mu.Lock()
	f.calls++
	first := f.calls == 1
	f.mu.Unlock()
	if first && f.gate != nil {
		<-f.gate
	}
	if partition >= 0 {
		if partition == f.failPartition {
			return nil, fmt.Errorf("topic %s partition %d: %w", topic, partition, errDiskFull)
		}
		return f.Engine.Produce(ctx, topic, partition, recs)
	}
	acks := make([]engine.Ack, len(recs))
	stored := make([]bool, len(recs))
	groups := map[int][]int{}
	for i, r := range recs {
		p := int(r.Key[1] - '0')
		groups[p] = append(groups[p], i)
	}
	var failure error
	for p, idx := range groups {
		if p == f.failPartition {
			failure = fmt.Errorf("topic %s partition %d: %w", topic, p, errDiskFull)
			continue
		}
		batch := make([]engine.Record, len(idx))
		for k, i := range idx {
			batch[k] = recs[i]
		}
		a, err := f.Engine.Produce(ctx, topic, p, batch)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			acks[i], stored[i] = a[k], true
		}
	}
	switch {
	case failure == nil:
		return acks, nil
	case len(groups) == 1:
		return nil, failure
	}
	return nil, &engine.PartialError{Acks: acks, Stored: stored, Err: failure}
}

// storedRecords reads every record of topic's partitions.
func storedRecords(t *testing.T, e *engine.Engine, topic string, parts int) map[[2]int64]string {
	t.Helper()
	out := map[[2]int64]string{}
	for p := 0; p < parts; p++ {
		res, err := e.Read(topic, p, 0, 100000, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			out[[2]int64{int64(p), r.Offset}] = string(r.Value)
		}
	}
	return out
}

func faultServer(t *testing.T, gate chan struct{}) (*testServer, *faultBackend) {
	t.Helper()
	e, dir := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	if err := e.CreateTopic("multi", cfg); err != nil {
		t.Fatal(err)
	}
	fb := &faultBackend{Engine: e, failPartition: 1, gate: gate}
	l := serveBackend(t, fb, dir, DefaultOptions())
	l.eng = e
	return l, fb
}

// A request whose records go to two partitions, one of which fails: the
// error reply names the record that was stored, with its ack, and the one
// that was not.
func TestProducePartlyStoredNamesWhatWasStored(t *testing.T) {
	ts, _ := faultServer(t, nil)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "produce", "topic": "multi", "records": []any{
		map[string]any{"key": "p0", "value": "zero", "partition": 0},
		map[string]any{"key": "p1", "value": "one", "partition": 1},
	}})
	if errCode(r) != wire.CodeInternal {
		t.Fatalf("reply %v, want an internal error", r)
	}
	acks, ok := r["acks"].([]any)
	if !ok || len(acks) != 2 || acks[1] != nil {
		t.Fatalf("reply %v: want acks [ack, null]", r)
	}
	a := acks[0].(map[string]any)
	got := storedRecords(t, ts.eng, "multi", 2)
	if len(got) != 1 || got[[2]int64{num(t, a, "partition"), num(t, a, "offset")}] != "zero" {
		t.Fatalf("stored %v, reply acked %v", got, a)
	}

	// The Go client hands the acks of what was stored to its caller.
	cl := dialClient(t, ts.addr)
	k0, k1, v0, v1, p0, p1 := "p0", "p1", json.RawMessage(`"two"`), json.RawMessage(`"three"`), 0, 1
	_, err := cl.Produce(testCtx(t), "multi", -1, []wire.RecordIn{{Key: &k0, Value: v0, Partition: &p0}, {Key: &k1, Value: v1, Partition: &p1}})
	var pe *wire.Error
	if !errors.As(err, &pe) || len(pe.Stored) != 2 || pe.Stored[0] == nil || pe.Stored[1] != nil || pe.Stored[0].Offset != 1 {
		t.Fatalf("client: %v, stored %v", err, pe)
	}
	if got := storedRecords(t, ts.eng, "multi", 2); len(got) != 2 || got[[2]int64{0, 1}] != "two" {
		t.Fatalf("stored %v after the client's request", got)
	}

	// Keyed records over both partitions in one engine call: the same.
	r = c.call(2, map[string]any{"op": "produce", "topic": "multi", "records": []any{
		map[string]any{"key": "p1", "value": "x"}, map[string]any{"key": "p0", "value": "y"},
	}})
	if acks, _ := r["acks"].([]any); errCode(r) != wire.CodeInternal || len(acks) != 2 || acks[0] != nil || acks[1] == nil {
		t.Fatalf("reply %v: want an error with acks [null, ack]", r)
	}
	if got := storedRecords(t, ts.eng, "multi", 2); len(got) != 3 {
		t.Fatalf("stored %v after the last request", got)
	}
}

// Ten single-record requests merged into one engine call that fails
// part-way: every record stored is acked exactly once and every ack names a
// stored record; nothing is stored twice (no request is run again).
func TestMergedProduceFailureStoresNothingTwice(t *testing.T) {
	gate := make(chan struct{})
	ts, _ := faultServer(t, gate)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	const n = 10
	for i := range n {
		c.send(map[string]any{"op": "produce", "id": i, "topic": "multi", "key": fmt.Sprintf("p%d", i%2), "value": fmt.Sprintf("v%d", i)})
	}
	// The first request holds the engine; wait until the other nine are
	// queued behind it, so that they are merged into one call.
	waitInflight(t, ts.Server, n)
	close(gate)

	acked := map[[2]int64]string{}
	for range n {
		m := c.waitFor(func(m map[string]any) bool { return m["id"] != nil })
		id := num(t, m, "id")
		switch errCode(m) {
		case "":
			acked[[2]int64{num(t, m, "partition"), num(t, m, "offset")}] = fmt.Sprintf("v%d", id)
		case wire.CodeInternal:
			if id%2 == 0 {
				t.Errorf("request %d for the healthy partition failed: %v", id, m)
			}
		default:
			t.Errorf("request %d: %v", id, m)
		}
	}
	stored := storedRecords(t, ts.eng, "multi", 2)
	if len(stored) != len(acked) {
		t.Errorf("%d records stored, %d acked: %v vs %v", len(stored), len(acked), stored, acked)
	}
	for k, v := range acked {
		if stored[k] != v {
			t.Errorf("ack %v names %q, stored %q", k, v, stored[k])
		}
	}
	if len(acked) != n/2 {
		t.Errorf("%d acks, want the %d records of the healthy partition", len(acked), n/2)
	}
}

// waitInflight waits until one connection of s has n requests accepted and
// unanswered.
func waitInflight(t *testing.T, s *Server, n int64) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		for c := range s.conns {
			if c.inflight.Load() >= n {
				s.mu.Unlock()
				return
			}
		}
		s.mu.Unlock()
	}
	t.Fatalf("no connection reached %d requests in flight", n)
}
