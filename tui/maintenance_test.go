package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// manualMaintenance is an engine whose sweeper never runs by itself: passes
// happen only when the UI asks for them.
func manualMaintenance(t *testing.T) *engine.Engine {
	opts := engine.DefaultOptions(t.TempDir())
	opts.RetentionInterval, opts.CompactionInterval = 0, 0
	return openEngineWith(t, opts)
}

// kib returns n records of about 1 KiB with keys <prefix>-<i%keys>.
func kib(prefix string, from, n, keys int) []engine.Record {
	recs := make([]engine.Record, n)
	for i := range recs {
		id := from + i
		recs[i] = engine.Record{
			Key:   []byte(fmt.Sprintf("%s-%d", prefix, id%keys)),
			Value: []byte(fmt.Sprintf(`{"id":%d,"pad":"%s"}`, id, bytes.Repeat([]byte("p"), 1000))),
		}
	}
	return recs
}

func TestRetentionPassFromSegmentsScreen(t *testing.T) {
	e := manualMaintenance(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Codec = "none"
	cfg.SegmentMaxBytes = 1 << 20
	cfg.RetentionMaxBytes = 1 << 20
	create(t, e, "logs", cfg)
	for i := 0; i < 3; i++ {
		produce(t, e, "logs", 0, kib("key", i*500, 500, 1000)...)
	}
	before, err := e.Segments("logs", 0)
	if err != nil || len(before) < 2 || !before[0].Sealed {
		t.Fatalf("setup: %d segments (%v), want a sealed one first", len(before), err)
	}

	opts := testOptions(e)
	opts.StartTopic = "logs"
	tm := startUI(t, opts)
	waitFor(t, tm, "Topics / logs", "p0")
	tm.Send(enter)
	waitFor(t, tm, "segment 0: ", " over", "last    never")
	tm.Send(keys("X"))
	waitFor(t, tm, "retention pass on logs done", "trimmed")
	m := finish(t, tm)
	golden(t, m)

	after, err := e.Segments("logs", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) >= len(before) || after[0].Base == before[0].Base {
		t.Fatalf("retention from the UI left %d segments starting at %d (before: %d at %d)", len(after), after[0].Base, len(before), before[0].Base)
	}
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("freed   %d segments", len(before)-len(after))) {
		t.Errorf("the retention panel does not say what was deleted:\n%s", v)
	}
}

// createCompacted creates a compacted, uncompressed topic with 1 MiB
// segments, so that a few hundred 1 KiB records seal several.
func createCompacted(t *testing.T, e *engine.Engine, name string) {
	t.Helper()
	cfg := engine.DefaultTopicConfig()
	cfg.Codec = "none"
	cfg.Cleanup = engine.CleanupCompact
	cfg.SegmentMaxBytes = 1 << 20
	create(t, e, name, cfg)
}

func TestCompactionPassFromSegmentsScreen(t *testing.T) {
	e := manualMaintenance(t)
	createCompacted(t, e, "state")
	// Two sealed segments updating the same 50 keys, then an active one
	// with other keys: compaction keeps the newest 50 in a sparse segment.
	produce(t, e, "state", 0, kib("user", 0, 500, 50)...)
	produce(t, e, "state", 0, kib("user", 500, 500, 50)...)
	produce(t, e, "state", 0, kib("device", 1000, 500, 500)...)
	opts := testOptions(e)
	opts.StartTopic = "state"
	tm := startUI(t, opts)
	waitFor(t, tm, "Topics / state", "p0")
	tm.Send(enter)
	waitFor(t, tm, "Compaction", "last    never")
	tm.Send(keys("C"))
	waitFor(t, tm, "compaction pass on state done", "compacted")
	m := finish(t, tm)
	golden(t, m)

	// Back on the topic list, records counts what compaction left.
	tm = startUI(t, testOptions(e))
	waitFor(t, tm, "state")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlR})
	waitFor(t, tm, "    550 ")
	finish(t, tm)

	segs, err := e.Segments("state", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !segs[0].Sparse || segs[0].Records != 50 || !segs[0].Sealed {
		t.Fatalf("first segment after C: %+v, want 50 records, sparse and sealed", segs[0])
	}
	seen := map[string]int{}
	for _, r := range readAll(t, e, "state", 0) {
		seen[string(r.Key)]++
	}
	for k := 0; k < 50; k++ {
		if n := seen[fmt.Sprintf("user-%d", k)]; n != 1 {
			t.Fatalf("user-%d read %d times after compaction, want once (its newest value)", k, n)
		}
	}
	if v := m.View(); !strings.Contains(v, "sparse") {
		t.Errorf("the segments table does not show the compacted segment as sparse:\n%s", v)
	}
}

// Compaction of a topic that is not compacted is refused with the engine's
// reason, and nothing changes.
func TestCompactionRefusedOnDeleteTopic(t *testing.T) {
	e := manualMaintenance(t)
	seed(t, e)
	before, _ := e.Segments("clicks", 0)
	opts := testOptions(e)
	opts.StartTopic = "clicks"
	tm := startUI(t, opts)
	waitFor(t, tm, "Topics / clicks", "p0")
	tm.Send(enter)
	waitFor(t, tm, "Compaction")
	tm.Send(keys("C"))
	waitFor(t, tm, "invalid topic config")
	finish(t, tm)
	after, _ := e.Segments("clicks", 0)
	if len(after) != len(before) || after[0].Bytes != before[0].Bytes {
		t.Fatalf("segments changed after a refused compaction: %+v -> %+v", before, after)
	}
}
