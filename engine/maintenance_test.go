package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a maintenance clock the test moves forward.
type fakeClock struct{ shift atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Now().Add(time.Duration(c.shift.Load())) }
func (c *fakeClock) advance(d time.Duration) { c.shift.Add(int64(d)) }
func maintOptions(dir string, c *fakeClock) Options {
	o := DefaultOptions(dir)
	o.RetentionInterval, o.CompactionInterval = 0, 0 // passes run by hand
	o.Now = c.now
	return o
}

func openWith(t *testing.T, o Options) *Engine {
	t.Helper()
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// readPartition reads all of partition p from its log start.
func readPartition(t *testing.T, e *Engine, topic string, p int) []Record {
	t.Helper()
	var out []Record
	from := int64(0)
	for {
		r, err := e.Read(topic, p, from, 1000, 1<<20)
		if err != nil {
			t.Fatalf("read %s/%d from %d: %v", topic, p, from, err)
		}
		if len(r.Records) == 0 {
			return out
		}
		for _, rec := range r.Records {
			rec.Key, rec.Value = bytes.Clone(rec.Key), bytes.Clone(rec.Value)
			out = append(out, rec)
		}
		from = r.Next
	}
}

// kvModel is the reference for the engine-level compaction test.
type kvModel struct {
	recs   map[int64]Record
	newest map[string]int64
	cutoff int64 // tombstones committed at or before it may be gone (Unix ms)
}

func (m *kvModel) check(t *testing.T, got []Record) {
	t.Helper()
	last := map[string]Record{}
	prev := int64(-1)
	for _, r := range got {
		want, ok := m.recs[r.Offset]
		if r.Offset <= prev || !ok || !bytes.Equal(r.Key, want.Key) || !bytes.Equal(r.Value, want.Value) || (r.Value == nil) != (want.Value == nil) {
			t.Fatalf("offset %d (after %d): read %q=%q, the model has %q=%q", r.Offset, prev, r.Key, r.Value, want.Key, want.Value)
		}
		prev = r.Offset
		last[string(r.Key)] = r
	}
	for k, off := range m.newest {
		want := m.recs[off]
		got, ok := last[k]
		switch {
		case ok && got.Offset != off:
			t.Fatalf("key %s: last read at offset %d, newest at %d (tombstone %v): resurrected or lost", k, got.Offset, off, want.Value == nil)
		case !ok && want.Value != nil:
			t.Fatalf("key %s: newest value at offset %d missing", k, off)
		case !ok && want.Timestamp > m.cutoff:
			t.Fatalf("key %s: tombstone at offset %d gone before its retention", k, off)
		}
	}
}

func TestEngineCompactionAgainstModelWithReopens(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{}
	o := maintOptions(dir, clock)
	e := openWith(t, o)
	defer func() { e.Close() }()
	if err := e.CreateTopic("profiles", TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20, Cleanup: CleanupCompact}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("events", TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := e.RunCompaction("events"); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("compaction of a delete topic: %v, want ErrInvalidConfig", err)
	}
	rng := rand.New(rand.NewPCG(42, 7))
	m := &kvModel{recs: map[int64]Record{}, newest: map[string]int64{}, cutoff: -1 << 62}
	produce := func(n int) {
		recs := make([]Record, n)
		for i := range recs {
			recs[i].Key = []byte(fmt.Sprintf("user-%03d", rng.IntN(300)))
			if rng.IntN(100) >= 12 {
				recs[i].Value = make([]byte, 300+rng.IntN(200))
				for j := range recs[i].Value {
					recs[i].Value[j] = byte(rng.Uint32())
				}
			}
		}
		acks, err := e.Produce(context.Background(), "profiles", 0, recs)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range acks {
			r := recs[i]
			r.Offset, r.Timestamp = a.Offset, a.Timestamp
			m.recs[a.Offset] = r
			m.newest[string(r.Key)] = a.Offset
		}
	}
	compacted := 0
	for round := 0; round < 6; round++ {
		for i := 0; i < 6; i++ {
			produce(200)
		}
		if round == 4 {
			clock.advance(25 * time.Hour) // every tombstone so far expires
			m.cutoff = clock.now().Add(-24 * time.Hour).UnixMilli()
		}
		if err := e.RunCompaction("profiles"); err != nil {
			t.Fatal(err)
		}
		st, err := e.MaintenanceStatus("profiles", 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.LastCompaction == nil || st.Compaction.Runs != int64(round+1-roundsBeforeReopen(round)) {
			t.Fatalf("round %d: status %+v", round, st)
		}
		if st.LastCompaction.Outcome == "compacted" {
			compacted++
		}
		m.check(t, readPartition(t, e, "profiles", 0))
		if round%2 == 1 {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e = openWith(t, o)
			m.check(t, readPartition(t, e, "profiles", 0))
			// The last run survives the restart through meta.db.
			st, err := e.MaintenanceStatus("profiles", 0)
			if err != nil || st.LastCompaction == nil || st.Compaction.Runs != 0 {
				t.Fatalf("status after reopen: %+v %v", st, err)
			}
		}
	}
	if compacted == 0 {
		t.Fatal("no compaction run compacted anything")
	}
	data, ok, err := e.Meta().GetReport(ReportCompaction, "profiles", 0)
	var stored MaintenanceRun
	if err != nil || !ok || json.Unmarshal(data, &stored) != nil || stored.Kind != ReportCompaction || stored.Outcome == "" {
		t.Fatalf("stored compaction report %s: %v %v", data, ok, err)
	}
	info, err := e.Describe("profiles")
	if err != nil || info.Partitions[0].Compacting {
		t.Fatalf("describe after the passes: %+v %v", info, err)
	}
}

// roundsBeforeReopen is how many compaction runs the engine of round r did
// not count because they happened before its last reopen (after odd rounds).
func roundsBeforeReopen(r int) int {
	if r < 2 {
		return 0
	}
	return r - r%2
}

func TestEngineRetentionBySizeAgeAndCursor(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{}
	e := openWith(t, maintOptions(dir, clock))
	defer e.Close()
	cfg := TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20}
	if err := e.CreateTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	var next int64
	for i := 0; i < 50; i++ { // about 5 MiB: five or six segments
		recs := make([]Record, 100)
		for j := range recs {
			recs[j] = Record{Key: []byte(fmt.Sprintf("k%d", next+int64(j))), Value: make([]byte, 1000)}
		}
		acks, err := e.Produce(context.Background(), "logs", 0, recs)
		if err != nil {
			t.Fatal(err)
		}
		next = acks[len(acks)-1].Offset + 1
	}
	segs, err := e.Segments("logs", 0)
	if err != nil || len(segs) < 5 {
		t.Fatalf("%d segments, %v", len(segs), err)
	}
	checkSuffix := func(from int64) {
		t.Helper()
		got := readPartition(t, e, "logs", 0)
		if len(got) == 0 || got[0].Offset != from || got[len(got)-1].Offset != next-1 || int64(len(got)) != next-from {
			t.Fatalf("read %d records from %d, want [%d, %d)", len(got), got[0].Offset, from, next)
		}
		for _, r := range got {
			if string(r.Key) != fmt.Sprintf("k%d", r.Offset) {
				t.Fatalf("offset %d holds key %s", r.Offset, r.Key)
			}
		}
	}

	// No limits: nothing happens.
	if err := e.RunRetention("logs"); err != nil {
		t.Fatal(err)
	}
	st, _ := e.MaintenanceStatus("logs", 0)
	if st.LastRetention == nil || st.LastRetention.Outcome != "nothing to do" {
		t.Fatalf("status without limits: %+v", st.LastRetention)
	}

	// Size: keep about three segments.
	cfg.RetentionMaxBytes = 3 << 20
	if err := e.AlterTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	if err := e.RunRetention("logs"); err != nil {
		t.Fatal(err)
	}
	st, _ = e.MaintenanceStatus("logs", 0)
	after, _ := e.Segments("logs", 0)
	size := st.RetentionDeleted["size"]
	if size.Segments == 0 || int(size.Segments) != len(segs)-len(after) || size.Records != after[0].Base || st.LastRetention.BytesAfter > 3<<20 {
		t.Fatalf("size retention: counters %+v, %d -> %d segments, last %+v", size, len(segs), len(after), st.LastRetention)
	}
	checkSuffix(after[0].Base)

	// A consumer cursor in the oldest surviving segment protects it.
	if err := e.CommitCursor("slow", "logs", 0, after[0].Base+5); err != nil {
		t.Fatal(err)
	}
	cfg.RetentionMaxAge, cfg.ProtectCursors = time.Hour, true
	if err := e.AlterTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	clock.advance(2 * time.Hour)
	if err := e.RunRetention("logs"); err != nil {
		t.Fatal(err)
	}
	if st, _ = e.MaintenanceStatus("logs", 0); st.LastRetention.Outcome != "kept by a consumer cursor" {
		t.Fatalf("protected run: %+v", st.LastRetention)
	}
	checkSuffix(after[0].Base)

	// Without protection, age takes every sealed segment, never the active one.
	cfg.ProtectCursors = false
	if err := e.AlterTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	if err := e.RunRetention("logs"); err != nil {
		t.Fatal(err)
	}
	st, _ = e.MaintenanceStatus("logs", 0)
	last, _ := e.Segments("logs", 0)
	if len(last) != 1 || last[0].Sealed || st.RetentionDeleted["age"].Segments != int64(len(after)-1) {
		t.Fatalf("age retention: %d segments left, counters %+v", len(last), st.RetentionDeleted)
	}
	checkSuffix(last[0].Base)
	info, _ := e.Describe("logs")
	if info.Partitions[0].LogStart != last[0].Base {
		t.Fatalf("log start %d, want %d", info.Partitions[0].LogStart, last[0].Base)
	}
	data, ok, err := e.Meta().GetReport(ReportRetention, "logs", 0)
	if err != nil || !ok || !bytes.Contains(data, []byte(`"reason":"age"`)) {
		t.Fatalf("stored retention report %s %v %v", data, ok, err)
	}
}

func TestSweeperRunsRetentionAndCompaction(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{}
	o := maintOptions(dir, clock)
	o.RetentionInterval, o.CompactionInterval = 20*time.Millisecond, 30*time.Millisecond
	e := openWith(t, o) // Open starts the sweeper, Close stops it
	defer e.Close()
	if err := e.CreateTopic("kv", TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20, Cleanup: CleanupCompact, RetentionMaxBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ { // the same 50 keys over and over: 3 MiB
		recs := make([]Record, 100)
		for j := range recs {
			recs[j] = Record{Key: []byte(fmt.Sprintf("k%d", j%50)), Value: make([]byte, 1000)}
		}
		if _, err := e.Produce(context.Background(), "kv", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	var st MaintenanceStatus
	for {
		var err error
		st, err = e.MaintenanceStatus("kv", 0)
		if err != nil {
			t.Fatal(err)
		}
		if st.LastRetention != nil && st.Compaction.Compacted > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond) // waiting on the sweeper; the test's own deadline bounds it
	}
	if st.NextRetention.IsZero() || st.NextCompaction.IsZero() || st.Cleanup != CleanupCompact {
		t.Fatalf("status: %+v", st)
	}
	got := readPartition(t, e, "kv", 0)
	seen := map[string]bool{}
	for _, r := range got {
		seen[string(r.Key)] = true
	}
	if len(seen) != 50 {
		t.Fatalf("%d keys readable after the sweeper compacted, want 50", len(seen))
	}
}

// After a pass that commits nothing, the sweeper skips the partition until
// the log changes or a tombstone comes due.
func TestSweeperSkipsIdleCompactedPartition(t *testing.T) {
	clock := &fakeClock{}
	e := openWith(t, maintOptions(t.TempDir(), clock))
	defer e.Close()
	if err := e.CreateTopic("kv", TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20, Cleanup: CleanupCompact}); err != nil {
		t.Fatal(err)
	}
	produce := func(n int, key func(i int) string, value []byte) {
		t.Helper()
		recs := make([]Record, n)
		for i := range recs {
			recs[i] = Record{Key: []byte(key(i)), Value: value}
		}
		if _, err := e.Produce(context.Background(), "kv", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	produce(1, func(int) string { return "gone" }, nil) // a tombstone
	for b := 0; b < 15; b++ {
		produce(100, func(i int) string { return fmt.Sprintf("u%d-%d", b, i) }, make([]byte, 1000))
	}
	tp, _ := e.topic("kv")
	l := tp.parts[0]
	idle := func() bool { return e.compactionIdle(tp, 0, l, tp.config().TombstoneRetention) }
	if idle() {
		t.Fatal("idle before any pass")
	}
	if err := e.RunCompaction("kv"); err != nil {
		t.Fatal(err)
	}
	st, _ := e.MaintenanceStatus("kv", 0)
	if st.LastCompaction.Outcome != "nothing to do" || !idle() {
		t.Fatalf("after a pass over distinct keys: %+v, idle %v", st.LastCompaction, idle())
	}
	if err := e.compactPartition(context.Background(), tp, 0, l, true); err != nil {
		t.Fatal(err)
	}
	if st2, _ := e.MaintenanceStatus("kv", 0); st2.Compaction.Runs != st.Compaction.Runs {
		t.Fatalf("a sweep ran a pass over an idle partition: %d runs, was %d", st2.Compaction.Runs, st.Compaction.Runs)
	}
	clock.advance(25 * time.Hour) // the tombstone comes due
	if idle() {
		t.Fatal("idle although a tombstone expired")
	}
	if err := e.compactPartition(context.Background(), tp, 0, l, true); err != nil {
		t.Fatal(err)
	}
	st, _ = e.MaintenanceStatus("kv", 0)
	if st.LastCompaction.TombstonesDropped != 1 || st.Compaction.TombstonesDropped != 1 {
		t.Fatalf("pass once the tombstone expired: %+v", st.LastCompaction)
	}
	// Nothing is left to do, so the next sweep skips; until the log grows.
	if err := e.RunCompaction("kv"); err != nil || !idle() {
		t.Fatalf("idle %v after a pass with nothing to do: %v", idle(), err)
	}
	produce(1, func(int) string { return "u0-1" }, []byte("newer"))
	if idle() {
		t.Fatal("idle although the log grew")
	}
}
