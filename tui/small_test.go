package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/pulselog/pulse/engine"
)

// startUISized runs the UI in a teatest program of w×h cells.
func startUISized(t *testing.T, opts Options, w, h int) (*teatest.TestModel, *Model) {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() { m.Close() })
	return tm, m
}

// titlesLine is the line of view with a table's column titles.
func titlesLine(view string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "STATUS") || strings.Contains(l, "STATE") || strings.Contains(l, "CRC") {
			return l
		}
	}
	return ""
}

// At 80×24 every screen keeps its name and health columns (secondary
// columns go first), and the help scrolls to its end.
func TestSmallTerminalKeepsHealthColumns(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	open := func(s Screen) {
		m.stack = append(m.stack, s)
		s.SetSize(m.c.Width, m.c.Height)
		m.Update(run(t, s.Init()))
	}
	check := func(screen string, want ...string) {
		t.Helper()
		v := m.View()
		for i, l := range strings.Split(v, "\n") {
			if w := lipgloss.Width(l); w > 80 {
				t.Errorf("%s: line %d is %d cells wide", screen, i, w)
			}
		}
		titles := titlesLine(v)
		for _, w := range want {
			if !strings.Contains(titles, w) {
				t.Errorf("%s at 80×24: column %s is not shown; titles %q\n%s", screen, w, titles, v)
			}
		}
	}
	m.Update(run(t, m.stack[0].Init()))
	check("topics", "TOPIC", "RECORDS", "CLEANUP", "STATUS")
	open(newPartitionsScreen(m.c, "orders"))
	check("partitions", "P", "HWM", "HIDDEN", "MAX LAG", "STATUS")
	open(newSegmentsScreen(m.c, "orders", 0))
	check("segments", "BASE", "NEXT", "RECORDS", "STATE", "SPARSE")
}

// The help overlay scrolls: G shows its last line, and the status line
// says where it is.
func TestHelpScrollsToItsEnd(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm, _ := startUISized(t, testOptions(e), 80, 24)
	waitFor(t, tm, "orders")
	tm.Send(keys("?"))
	waitFor(t, tm, "help lines 1–20 of")
	tm.Send(keys("G"))
	waitFor(t, tm, ":topics  back to the topic list", "(end)")
	m := finish(t, tm)
	golden(t, m)
	last := m.helpLines()[len(m.helpLines())-1]
	if !strings.Contains(m.View(), strings.TrimSpace(last)) {
		t.Fatalf("the help's last line %q is not on screen", last)
	}
}

// An error's ✗ goes with its text when the user moves to another screen.
func TestErrorMarkClearsOnNavigation(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("tail orders x")
	tm.Send(enter)
	waitFor(t, tm, "✗", "is not a non-negative number")
	tm.Send(enter) // open clicks
	waitFor(t, tm, "Topics / clicks", "LOG START")
	m := finish(t, tm)
	if sl := m.statusLine(); strings.Contains(sl, "✗") {
		t.Fatalf("status line after opening a screen still shows %q", sl)
	}
}

// esc goes back to the screen the user came from, never to one a shortcut
// opened on its own; breadcrumbs name the topic whatever the way in, and
// lose their middle, not their end, when the terminal is narrow.
func TestEscHistoryAndBreadcrumbs(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(down) // orders
	tm.Send(keys("t"))
	waitFor(t, tm, "Topics / orders / tail", "orders all 3 partitions")
	tm.Send(esc)
	waitFor(t, tm, "CLEANUP")
	tm.Send(keys(":"))
	tm.Type("tail orders 1")
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders / p1 / tail", `"order":64`)
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders / p1 / tail / offset 24")
	m := finish(t, tm)
	if got := m.Breadcrumbs(); got != "Topics / orders / p1 / tail / offset 24" {
		t.Errorf("breadcrumbs %q", got)
	}
	m.Update(tea.WindowSizeMsg{Width: 30, Height: 20})
	crumbs := strings.Split(m.View(), "\n")[1]
	if !strings.Contains(crumbs, "Topics / … /") || !strings.HasSuffix(strings.TrimRight(crumbs, " "), "offset 24") {
		t.Errorf("breadcrumbs at 30 cells: %q", crumbs)
	}
	m.pop()
	m.pop()
	if got := m.Breadcrumbs(); got != "Topics" {
		t.Errorf("esc twice from the record of :tail orders 1 lands on %q, want Topics", got)
	}
}

// e on a topic edits its retention and cleanup; the change reaches the
// engine (and so meta.db) and shows on the topic's row.
func TestEditTopicConfig(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(down) // orders
	tm.Send(keys("e"))
	waitFor(t, tm, "Edit topic orders", "fixed at creation: codec")
	tm.Send(tab) // max age
	tm.Type("7x")
	tm.Send(enter)
	waitFor(t, tm, "max age: duration \"7x\"")
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	tm.Send(keys("d"))
	tm.Send(tab) // max bytes
	tm.Type("1GiB")
	tm.Send(enter)
	waitFor(t, tm, "orders, applied live: retention 7d/1.0 GiB")
	m := finish(t, tm)
	info, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Config; c.RetentionMaxAge != 7*24*time.Hour || c.RetentionMaxBytes != 1<<30 || c.Partitions != 3 {
		t.Fatalf("after the edit the engine has %+v", c)
	}
	if got := m.Breadcrumbs(); got != "Topics" {
		t.Errorf("after saving the form the UI shows %q", got)
	}
}

// The new-topic form sets the topic's sync mode, and refuses an unknown one.
func TestCreateFormSyncMode(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	s := newCreateTopicScreen(m.c, 0)
	byLabel := func(l string) *field {
		for _, f := range s.form.fields {
			if f.label == l {
				return f
			}
		}
		t.Fatalf("the new-topic form has no %q field", l)
		return nil
	}
	byLabel("name").line.SetValue("fast")
	if _, cfg, err := s.config(); err != nil || cfg.SyncMode != engine.SyncEveryWrite {
		t.Fatalf("default: sync mode %q, %v", cfg.SyncMode, err)
	}
	byLabel("sync mode").line.SetValue("interval")
	if _, cfg, err := s.config(); err != nil || cfg.SyncMode != engine.SyncInterval {
		t.Fatalf("interval: sync mode %q, %v", cfg.SyncMode, err)
	}
	byLabel("sync mode").line.SetValue("sometimes")
	if _, _, err := s.config(); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), `sync mode "sometimes"`) {
		t.Fatalf("sync mode sometimes: %v", err)
	}
}

// The edit form changes the segment size and sync mode and grows the
// partitions; the engine applies them at once (the partitions screen and a
// produce to the new partition see them); fewer partitions is refused in
// the form and nothing changes.
func TestEditTopicGrowsAndChangesLive(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(down) // orders
	tm.Send(keys("e"))
	waitFor(t, tm, "Edit topic orders", "grows, never shrinks")
	clear, shiftTab := tea.KeyMsg{Type: tea.KeyCtrlU}, tea.KeyMsg{Type: tea.KeyShiftTab}
	for range 5 { // partitions
		tm.Send(tab)
	}
	tm.Send(clear)
	tm.Type("2")
	tm.Send(enter)
	waitFor(t, tm, "partitions 2: a topic's partitions grow, never shrink (it has 3)")
	if info, _ := e.Describe("orders"); len(info.Partitions) != 3 {
		t.Fatalf("the refused edit changed the partitions to %d", len(info.Partitions))
	}
	tm.Send(clear)
	tm.Type("5")
	tm.Send(shiftTab) // sync mode
	tm.Send(clear)
	tm.Type("interval")
	tm.Send(shiftTab) // segment
	tm.Send(clear)
	tm.Type("16MiB")
	tm.Send(enter)
	waitFor(t, tm, "orders, applied live: segment 16.0 MiB, sync interval, partitions 3→5")
	info, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Config; len(info.Partitions) != 5 || c.SegmentMaxBytes != 16<<20 || c.SyncMode != engine.SyncInterval {
		t.Fatalf("after the edit the engine has %d partitions, %+v", len(info.Partitions), c)
	}
	if acks, err := e.Produce(context.Background(), "orders", 4, []engine.Record{{Value: []byte("new")}}); err != nil || acks[0].Partition != 4 {
		t.Fatalf("produce to the new partition 4: %+v %v", acks, err)
	}
	finish(t, tm)
}

// At 80 columns every line of the help fits and every word of every ":"
// command's usage is there: a long usage wraps instead of being cut.
func TestHelpWrapsLongCommandsAt80Columns(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	lines := m.helpLines()
	for i, l := range lines {
		if w := lipgloss.Width(l); w > 80 {
			t.Errorf("help line %d is %d cells wide: %q", i, w, l)
		}
	}
	all := strings.Join(lines, "\n")
	for name, c := range m.commands {
		for _, w := range strings.Fields(c.usage) {
			if !strings.Contains(all, w) {
				t.Errorf(":%s: %q of its usage is not in the help", name, w)
			}
		}
	}
}

// At 80×24 the partitions screen's config line shows the sync mode (a
// topic's own setting), not cut off past the edge.
func TestPartitionsShowSyncModeAt80Columns(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.SyncMode = engine.SyncInterval
	cfg.Cleanup = engine.CleanupCompact
	cfg.RetentionMaxAge = 7 * 24 * time.Hour
	cfg.RetentionMaxBytes = 1 << 30
	create(t, e, "orders", cfg)
	opts := testOptions(e)
	opts.StartTopic = "orders"
	tm, _ := startUISized(t, opts, 80, 24)
	waitFor(t, tm, "Topics / orders", "p0")
	m := finish(t, tm)
	if v := m.View(); !strings.Contains(v, "sync interval") {
		t.Errorf("no sync mode on the partitions screen at 80 columns:\n%s", v)
	}
}

// The help opens with its own status line, which says which lines are
// shown, even when a message of the screen behind it (an error) was on
// the status line: with ? and with :help.
func TestHelpStatusReplacesAnError(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm, _ := startUISized(t, testOptions(e), 80, 24)
	waitFor(t, tm, "orders")
	m := finish(t, tm)
	for _, open := range []func(){
		func() { m.Update(keys("?")) },
		func() {
			m.Update(keys(":"))
			m.Update(keys("help"))
			m.Update(enter)
		},
	} {
		m.Update(statusMsg{text: "bad input: partition \"x\" is not a non-negative number", err: true})
		open()
		if !m.showHelp {
			t.Fatal("the help did not open")
		}
		lines := strings.Split(m.View(), "\n")
		if st := ansiStrip(lines[len(lines)-2]); !strings.HasPrefix(st, "help lines 1–20 of") {
			t.Errorf("with the help open the status line reads %q", st)
		}
		m.Update(esc)
	}
}

// At 80 columns the consumer groups keep their lag and the placement its
// leader, ISR and error: their secondary columns go first.
func TestSmallTerminalKeepsGroupAndPlacementHealth(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, c := range []struct {
		name string
		tb   *table
		want []string
	}{
		{"groups", newGroupsScreen(m.c).table, []string{"GROUP", "STATE", "TOPIC", "P", "COMMITTED", "LAG"}},
		{"placement", newPlacementScreen(m.c, "orders").table, []string{"P", "LEADER", "REPLICAS", "ISR", "HWM", "ERROR"}},
	} {
		c.tb.SetSize(80, 10)
		titles := ansiStrip(strings.SplitN(c.tb.View(), "\n", 2)[0])
		if w := lipgloss.Width(titles); w > 80 {
			t.Errorf("%s: titles %d cells wide", c.name, w)
		}
		fields := strings.Fields(strings.ReplaceAll(titles, "…", " …"))
		for _, w := range c.want {
			if !slices.Contains(fields, w) {
				t.Errorf("%s at 80 columns: column %s is not shown whole; titles %q", c.name, w, titles)
			}
		}
	}
}
