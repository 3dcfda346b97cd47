package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// commitObserver records the strict appends each sync pass acknowledged.
type commitObserver struct {
	mu      sync.Mutex
	passes  int
	appends int
}

func (o *commitObserver) ObserveFsync(string, int, time.Duration) {}
func (o *commitObserver) ObserveCommit(_ string, _ int, _ int64, appends int) {
	o.mu.Lock()
	o.passes++
	o.appends += appends
	o.mu.Unlock()
}

func (o *commitObserver) take() (passes, appends int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	passes, appends = o.passes, o.appends
	o.passes, o.appends = 0, 0
	return passes, appends
}

func produceN(t *testing.T, e *Engine, topic string, partition, n, size int) []Ack {
	t.Helper()
	var acks []Ack
	for i := range n {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		a, err := e.Produce(context.Background(), topic, partition, []Record{{Key: fmt.Appendf(nil, "k%d", i), Value: v}})
		if err != nil {
			t.Fatalf("produce %d to %s: %v", i, topic, err)
		}
		acks = append(acks, a...)
	}
	return acks
}

// waitVisible waits until partition p of topic shows offset end.
func waitVisible(t *testing.T, e *Engine, topic string, p int, end int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		info, err := e.Describe(topic)
		if err != nil {
			t.Fatal(err)
		}
		if info.Partitions[p].HWM >= end {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%d: HWM %d never reached %d", topic, p, info.Partitions[p].HWM, end)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A smaller segment size set after creation rolls the active segment at
// the next batch; the new size survives a reopen.
func TestAlterSegmentSizeAppliesAtNextBatch(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	cfg := TopicConfig{Codec: "none", SegmentMaxBytes: 64 << 20}
	if err := e.CreateTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	produceN(t, e, "logs", 0, 24, 100<<10) // 2.4 MB: one segment at 64 MiB
	if segs, _ := e.Segments("logs", 0); len(segs) != 1 {
		t.Fatalf("before the alter: %d segments, want 1", len(segs))
	}
	cfg.SegmentMaxBytes = 1 << 20
	if err := e.AlterTopic("logs", cfg); err != nil {
		t.Fatalf("alter segment size: %v", err)
	}
	produceN(t, e, "logs", 0, 24, 100<<10)
	segs, _ := e.Segments("logs", 0)
	if len(segs) < 3 {
		t.Fatalf("after the alter: %d segments, want the 2.4 MB written since in 1 MiB segments", len(segs))
	}
	for _, s := range segs[1 : len(segs)-1] {
		if s.Bytes > 1<<20 {
			t.Errorf("segment %d: %d bytes, past the new 1 MiB limit", s.Base, s.Bytes)
		}
	}
	if segs[0].Bytes < 2<<20 {
		t.Errorf("the segment sealed by the alter holds %d bytes, want the 2.4 MB written before", segs[0].Bytes)
	}
	e.Close()

	e = openEngine(t, dir)
	defer e.Close()
	info, err := e.Describe("logs")
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.SegmentMaxBytes != 1<<20 {
		t.Fatalf("segment size after reopen: %d", info.Config.SegmentMaxBytes)
	}
	if n := info.Partitions[0].HWM; n != 48 {
		t.Fatalf("HWM after reopen: %d, want 48", n)
	}
}

// The sync mode changes for the next append: interval-mode appends are
// acked on write (no sync pass acknowledges them), every-write appends
// only by the sync pass that made them durable; records become visible in
// both, and the mode is stored.
func TestAlterSyncModeAppliesToNextAppend(t *testing.T) {
	dir := t.TempDir()
	obs := &commitObserver{}
	opts := DefaultOptions(dir)
	opts.Observer = obs
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := TopicConfig{SyncMode: SyncEveryWrite}
	if err := e.CreateTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	produceN(t, e, "orders", 0, 5, 10)
	if _, appends := obs.take(); appends != 5 {
		t.Fatalf("every-write: sync passes acked %d appends, want 5", appends)
	}

	cfg.SyncMode = SyncInterval
	if err := e.AlterTopic("orders", cfg); err != nil {
		t.Fatalf("alter sync mode: %v", err)
	}
	produceN(t, e, "orders", 0, 5, 10)
	waitVisible(t, e, "orders", 0, 10)
	if passes, appends := obs.take(); passes == 0 || appends != 0 {
		t.Fatalf("interval: %d sync passes acked %d appends, want passes that ack none", passes, appends)
	}

	cfg.SyncMode = SyncEveryWrite
	if err := e.AlterTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	produceN(t, e, "orders", 0, 3, 10)
	if _, appends := obs.take(); appends != 3 {
		t.Fatalf("every-write again: sync passes acked %d appends, want 3", appends)
	}
	cfg.SyncMode = SyncInterval
	if err := e.AlterTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e = openEngine(t, dir)
	defer e.Close()
	info, _ := e.Describe("orders")
	if info.Config.SyncMode != SyncInterval || info.Partitions[0].HWM != 13 {
		t.Fatalf("after reopen: sync mode %q, HWM %d", info.Config.SyncMode, info.Partitions[0].HWM)
	}
	cfg.SyncMode = "sometimes"
	if err := e.AlterTopic("orders", cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("unknown sync mode: %v, want ErrInvalidConfig", err)
	}
}

// Partitions grow at once (produce, read, describe), are recorded in
// meta.db and survive a reopen; shrinking, a codec change and growing past
// the engine's partition cap are refused and change nothing.
func TestAlterGrowsPartitions(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions(dir)
	opts.MaxPartitions = 6
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := TopicConfig{Partitions: 2}
	if err := e.CreateTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	produceN(t, e, "orders", 0, 3, 10)
	produceN(t, e, "orders", 1, 2, 10)

	changed, err := e.PartitionsChangedC("orders")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Partitions = 4
	if err := e.AlterTopic("orders", cfg); err != nil {
		t.Fatalf("grow to 4: %v", err)
	}
	select {
	case <-changed:
	default:
		t.Fatal("PartitionsChangedC taken before the grow is still open")
	}
	if again, _ := e.PartitionsChangedC("orders"); isClosed(again) {
		t.Fatal("PartitionsChangedC after the grow is already closed")
	}
	info, _ := e.Describe("orders")
	if len(info.Partitions) != 4 || info.Config.Partitions != 4 {
		t.Fatalf("after grow: %d partitions, config says %d", len(info.Partitions), info.Config.Partitions)
	}
	a := produceN(t, e, "orders", 3, 2, 10)
	if a[0].Partition != 3 || a[0].Offset != 0 || a[1].Offset != 1 {
		t.Fatalf("acks on the new partition: %+v", a)
	}
	r, err := e.Read("orders", 3, 0, 10, 1<<20)
	if err != nil || len(r.Records) != 2 {
		t.Fatalf("read the new partition: %d records, %v", len(r.Records), err)
	}
	// Keyless records now spread over all four.
	seen := map[int]bool{}
	for range 8 {
		acks, err := e.Produce(context.Background(), "orders", -1, []Record{{Value: []byte("x")}})
		if err != nil {
			t.Fatal(err)
		}
		seen[acks[0].Partition] = true
	}
	if len(seen) != 4 {
		t.Fatalf("keyless records went to partitions %v, want all four", seen)
	}
	mt, err := e.Meta().GetTopic("orders")
	if err != nil || mt.Partitions != 4 {
		t.Fatalf("meta.db: %d partitions, %v", mt.Partitions, err)
	}
	if ps, err := e.Meta().Partitions("orders"); err != nil || len(ps) != 4 {
		t.Fatalf("meta.db partition records: %d, %v", len(ps), err)
	}

	for _, bad := range []struct {
		name string
		cfg  TopicConfig
		want error
	}{
		{"shrink", TopicConfig{Partitions: 3}, ErrInvalidConfig},
		{"codec", TopicConfig{Partitions: 4, Codec: "none"}, ErrInvalidConfig},
		{"past the cap", TopicConfig{Partitions: 7}, ErrTooManyTopics},
	} {
		if err := e.AlterTopic("orders", bad.cfg); !errors.Is(err, bad.want) {
			t.Errorf("%s: %v, want %v", bad.name, err, bad.want)
		}
	}
	if info, _ := e.Describe("orders"); len(info.Partitions) != 4 {
		t.Fatalf("refused alters changed the count to %d", len(info.Partitions))
	}
	if _, err := os.Stat(e.partitionDir("orders", 4)); !os.IsNotExist(err) {
		t.Fatalf("a refused grow left partition directory 4: %v", err)
	}
	e.Close()

	e = openEngine(t, dir)
	defer e.Close()
	if p := e.Problems(); len(p) > 0 {
		t.Fatalf("reopen found problems: %v", p)
	}
	info, _ = e.Describe("orders")
	want := []int64{3, 2, 0, 2}
	total := int64(0)
	for p, pi := range info.Partitions {
		total += pi.HWM
		if p < len(want) && pi.HWM < want[p] {
			t.Errorf("partition %d: HWM %d after reopen, want at least %d", p, pi.HWM, want[p])
		}
	}
	if len(info.Partitions) != 4 || total != 3+2+2+8 {
		t.Fatalf("after reopen: %d partitions holding %d records", len(info.Partitions), total)
	}
}

// A directory where a new partition would go that holds files meta.db
// does not know is not adopted: the grow is refused, nothing changes.
func TestAlterGrowRefusesForeignPartitionDir(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	defer e.Close()
	if err := e.CreateTopic("orders", TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	foreign := e.partitionDir("orders", 1)
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "00000000000000000000.log"), []byte("not pulse"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := e.AlterTopic("orders", TopicConfig{Partitions: 2})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("grow over a foreign directory: %v, want ErrInvalidConfig", err)
	}
	if mt, _ := e.Meta().GetTopic("orders"); mt.Partitions != 1 {
		t.Fatalf("meta.db has %d partitions after the refused grow", mt.Partitions)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "00000000000000000000.log")); string(b) != "not pulse" {
		t.Fatalf("the foreign file changed: %q", b)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
