package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/pulselog/pulse/engine"
)

// A merged tail that is following when its topic grows follows the new
// partition too: a record produced there arrives, the status line counts
// the partitions again, and ] reaches the new partition.
func TestMergedTailFollowsGrownTopic(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	create(t, e, "ev", cfg)
	produce(t, e, "ev", 0, engine.Record{Value: []byte("v0")})
	produce(t, e, "ev", 1, engine.Record{Value: []byte("v1")})
	s := newTestTail(t, testOptions(e), "ev", allPartitions)
	follow := s.Update(run(t, s.Init()))
	s.Update(run(t, follow))
	if len(s.recs) != 2 {
		t.Fatalf("merged tail holds %d records, want 2", len(s.recs))
	}
	s.stop()
	next := s.follow()
	got := make(chan any, 1)
	go func() { got <- next() }()
	info, _ := e.Describe("ev")
	cfg = info.Config
	cfg.Partitions = 3
	if err := e.AlterTopic("ev", cfg); err != nil {
		t.Fatal(err)
	}
	produce(t, e, "ev", 2, engine.Record{Value: []byte("on the new partition")})
	for {
		cmd := s.Update((<-got).(tailRecordsMsg))
		if n := len(s.recs); n == 3 {
			break
		}
		if cmd == nil {
			t.Fatalf("the tail stopped following with %d records", len(s.recs))
		}
		go func() { got <- cmd() }()
	}
	if r := s.rowRecord(s.cursor); string(r.Value) != "on the new partition" || r.P != 2 || r.Offset != 0 {
		t.Fatalf("live cursor on p%d@%d %q, want p2@0", r.P, r.Offset, r.Value)
	}
	if v := s.View(); !strings.Contains(v, "ev all 3 partitions") {
		t.Errorf("status line after the grow:\n%s", v)
	}
	s.stop()
	s.Update(keys("["))
	if s.part != 2 {
		t.Fatalf("[ from all goes to p%d, want the new p2", s.part)
	}
}

// At 80×24 the edit form's save message names every change, and that it
// applied live, and still fits the status line.
func TestEditTopicSavedMessageFits80(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm, _ := startUISized(t, testOptions(e), 80, 24)
	waitFor(t, tm, "orders")
	tm.Send(down) // orders
	tm.Send(keys("e"))
	waitFor(t, tm, "Edit topic orders", "grows, never shrinks")
	clear := tea.KeyMsg{Type: tea.KeyCtrlU}
	for i, v := range []string{"compact", "7d", "1GiB", "16MiB", "interval", "5"} {
		if i > 0 {
			tm.Send(tab)
		}
		tm.Send(clear)
		tm.Type(v)
	}
	tm.Send(enter)
	// The topics table, reloaded on the way back, shows the new config.
	waitFor(t, tm, "orders, live:", "3→5 partitions", "orders                  5")
	m := finish(t, tm)
	lines := strings.Split(m.View(), "\n")
	status := lines[len(lines)-2]
	for _, want := range []string{"orders, live:", "compact", "7d/1.0 GiB", "16.0 MiB", "interval", "3→5 partitions"} {
		if !strings.Contains(status, want) {
			t.Errorf("status line %q lacks %q", status, want)
		}
	}
	if w := lipgloss.Width(status); w > 80 {
		t.Errorf("status line is %d cells wide: %q", w, status)
	}
	golden(t, m)
}

// A save message too wide even in short words (a long topic name, every
// setting changed) is shortened with "…" to the width, keeping "live"
// and the first changes; one change of a short name keeps its long words.
func TestEditTopicSavedTextShortens(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.c.Width = 80
	long := strings.Repeat("payments-eu-west-", 4) + "ledger"
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 3
	info := engine.TopicInfo{Name: long, Config: cfg, Partitions: make([]engine.PartitionInfo, 3)}
	s := newAlterTopicScreen(m.c, info)
	next := cfg
	next.Cleanup, next.RetentionMaxAge, next.RetentionMaxBytes = engine.CleanupCompact, 30*24*time.Hour, 1023<<20
	next.SegmentMaxBytes, next.SyncMode, next.Partitions = 1000<<20, engine.SyncInterval, 12
	text := s.savedText(long, next)
	if w := lipgloss.Width(text); w > 80 || !strings.Contains(text, ", live: compact, keep 30d/") || !strings.HasSuffix(text, "…") {
		t.Errorf("%d cells: %q", w, text)
	}
	short := newAlterTopicScreen(m.c, engine.TopicInfo{Name: "orders", Config: cfg, Partitions: make([]engine.PartitionInfo, 3)})
	one := cfg
	one.SyncMode = engine.SyncInterval
	if got := short.savedText("orders", one); got != "orders, applied live: sync interval" {
		t.Errorf("one change: %q", got)
	}
	if got := short.savedText("orders", cfg); got != "orders: saved, nothing changed" {
		t.Errorf("no change: %q", got)
	}
}

// coreSource is a source with only the core every source has: no data dir
// (as a Kafka cluster).
type coreSource struct{ Source }

// The edit form says where a save goes: meta.db on a data dir, the cluster
// on a source without one.
func TestEditTopicSaysWhereItSaves(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	for _, c := range []struct {
		src  Source
		want string
	}{{e, "durable in meta.db"}, {coreSource{e}, "saves on the cluster"}} {
		tm, _ := startUISized(t, testOptions(c.src), 100, 30)
		waitFor(t, tm, "orders")
		tm.Send(down)
		tm.Send(keys("e"))
		waitFor(t, tm, "Edit topic orders", c.want)
		finish(t, tm)
	}
}

// failingSource reports partition 0 of every topic as failed (its last
// write met a full disk).
type failingSource struct{ Source }

func failPartition0(ti engine.TopicInfo) engine.TopicInfo {
	ti.Partitions = append([]engine.PartitionInfo(nil), ti.Partitions...)
	if len(ti.Partitions) > 0 {
		ti.Partitions[0].Failed = "write: no space left on device"
	}
	return ti
}

func (f failingSource) Topics() ([]engine.TopicInfo, error) {
	ts, err := f.Source.Topics()
	for i := range ts {
		ts[i] = failPartition0(ts[i])
	}
	return ts, err
}

func (f failingSource) Describe(name string) (engine.TopicInfo, error) {
	ti, err := f.Source.Describe(name)
	return failPartition0(ti), err
}

// A partition whose writes fail shows as failed on the topics and the
// partitions screens, not ok.
func TestFailedPartitionShowsFailed(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm, _ := startUISized(t, testOptions(failingSource{e}), 140, 30)
	waitFor(t, tm, "orders", "failed")
	tm.Send(down)
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders", "failed (write: no space left on device)")
	finish(t, tm)
}

// After the edit form saves, the topics list keeps the edited topic
// selected, not the first one: the form opened from the topics list, and
// from the partitions screen of a topic opened with :topic.
func TestEditKeepsTopicSelected(t *testing.T) {
	e := openEngine(t)
	for _, n := range []string{"alpha", "beta", "gamma", "delta"} {
		create(t, e, n, engine.DefaultTopicConfig())
	}
	edit := func(tm *teatest.TestModel, name string) {
		t.Helper()
		waitFor(t, tm, "Edit topic "+name)
		for range 3 { // segment
			tm.Send(tea.KeyMsg{Type: tea.KeyTab})
		}
		tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
		tm.Send(keys("8MiB"))
		tm.Send(tea.KeyMsg{Type: tea.KeyCtrlG})
		waitFor(t, tm, name+", applied live: segment 8.0 MiB")
	}
	selected := func(m *Model) string {
		t.Helper()
		top, ok := m.Top().(*topicsScreen)
		if !ok {
			t.Fatalf("the top screen is %T, want the topics list", m.Top())
		}
		r, _ := top.table.Selected()
		return r.Key
	}

	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "gamma")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown}) // beta
	tm.Send(keys("e"))
	edit(tm, "beta")
	if got := selected(finish(t, tm)); got != "beta" {
		t.Errorf("after editing beta from the list it selects %q, want beta", got)
	}

	tm = startUI(t, testOptions(e))
	waitFor(t, tm, "gamma")
	for _, r := range ":topic gamma" {
		tm.Send(keys(string(r)))
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "Topics / gamma")
	tm.Send(keys("e"))
	edit(tm, "gamma")
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc}) // the partitions screen
	waitFor(t, tm, "n new topic")
	if got := selected(finish(t, tm)); got != "gamma" {
		t.Errorf("after editing gamma from its partitions screen the list selects %q, want gamma", got)
	}
}
