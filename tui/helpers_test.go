package tui

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/pulselog/pulse/engine"
	"go.uber.org/goleak"
)

// Terminal size of every golden test.
const (
	testWidth  = 120
	testHeight = 32
)

// testTime is what every timestamp renders as in golden files: record
// timestamps are commit times, so they cannot be fixed otherwise.
const testTime = "2026-01-02 03:04:05.678"

// testClock is the fixed clock of golden tests.
var testClock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The engine facade is the UI's source, with every optional view.
var (
	_ Source              = (*engine.Engine)(nil)
	_ ConsumerLister      = (*engine.Engine)(nil)
	_ MaintenanceReporter = (*engine.Engine)(nil)
	_ MaintenanceTrigger  = (*engine.Engine)(nil)
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	goleak.VerifyTestMain(m,
		// teatest and the text input's cursor blink leave these behind
		// after a program quits; they are the UI libraries', not Pulse's.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("github.com/charmbracelet/bubbles/cursor.(*Model).BlinkCmd.func1"),
	)
}

// openEngine opens a real engine on a fresh data dir.
func openEngine(t testing.TB) *engine.Engine {
	t.Helper()
	return openEngineWith(t, engine.DefaultOptions(t.TempDir()))
}

// openEngineWith opens a real engine with opts.
func openEngineWith(t testing.TB, opts engine.Options) *engine.Engine {
	t.Helper()
	e, err := engine.Open(opts)
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("engine.Close: %v", err)
		}
	})
	return e
}

// produce sends recs to one partition in a single call (one batch).
func produce(t testing.TB, e Source, topic string, p int, recs ...engine.Record) []engine.Ack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acks, err := e.Produce(ctx, topic, p, recs)
	if err != nil {
		t.Fatalf("produce %s p%d: %v", topic, p, err)
	}
	return acks
}

func create(t testing.TB, e Source, name string, cfg engine.TopicConfig) {
	t.Helper()
	if err := e.CreateTopic(name, cfg); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// orderRecords are n JSON order events with keys cust-<i%7>.
func orderRecords(from, n int) []engine.Record {
	recs := make([]engine.Record, n)
	for i := range recs {
		id := from + i
		recs[i] = engine.Record{
			Key:     []byte(fmt.Sprintf("cust-%d", id%7)),
			Value:   []byte(fmt.Sprintf(`{"order":%d,"customer":"cust-%d","total":%d.%02d,"paid":%t}`, id, id%7, 10+id%50, id%100, id%3 != 0)),
			Headers: []engine.Header{{Key: "source", Value: []byte("checkout")}},
		}
	}
	return recs
}

// seed builds the known data dir of the golden tests. Its topics store
// records uncompressed: zstd's output, and so bytes on disk, depends on the
// commit timestamps inside the records; TestCompressionRatio covers zstd.
//
//	orders  3 partitions, 40 + 25 + 0 records
//	users   compacted, 12 records with repeated keys and a tombstone
//	clicks  1h retention, 1 MiB segments, no compression, 30 records
//
// and two consumers of orders: billing (p0 at 30, p1 at 25) and audit (p0 at 5).
func seed(t testing.TB, e *engine.Engine) {
	t.Helper()
	orders := engine.DefaultTopicConfig()
	orders.Partitions = 3
	orders.Codec = "none"
	create(t, e, "orders", orders)
	produce(t, e, "orders", 0, orderRecords(0, 40)...)
	produce(t, e, "orders", 1, orderRecords(40, 25)...)

	users := engine.DefaultTopicConfig()
	users.Cleanup = engine.CleanupCompact
	users.Codec = "none"
	create(t, e, "users", users)
	var urecs []engine.Record
	for i := 0; i < 12; i++ {
		urecs = append(urecs, engine.Record{Key: []byte(fmt.Sprintf("user-%d", i%4)), Value: []byte(fmt.Sprintf(`{"name":"user %d","version":%d}`, i%4, i))})
	}
	urecs = append(urecs, engine.Record{Key: []byte("user-3")}) // tombstone
	produce(t, e, "users", 0, urecs...)

	clicks := engine.DefaultTopicConfig()
	clicks.RetentionMaxAge = time.Hour
	clicks.SegmentMaxBytes = 1 << 20
	clicks.Codec = "none"
	create(t, e, "clicks", clicks)
	var crecs []engine.Record
	for i := 0; i < 30; i++ {
		crecs = append(crecs, engine.Record{Value: []byte(fmt.Sprintf("click %d on /page/%d", i, i%5))})
	}
	produce(t, e, "clicks", 0, crecs...)

	for _, c := range []struct {
		consumer string
		p        int
		off      int64
	}{{"billing", 0, 30}, {"billing", 1, 25}, {"audit", 0, 5}} {
		if err := e.CommitCursor(c.consumer, "orders", c.p, c.off); err != nil {
			t.Fatalf("commit cursor: %v", err)
		}
	}
}

// testOptions are the options of golden tests: fixed names, clock and
// timestamps, no refresh timer.
func testOptions(src Source) Options {
	return Options{
		Source:      src,
		DataDirName: "~/.local/share/pulse",
		Listen:      "127.0.0.1:7450",
		Theme:       "dark",
		Now:         func() time.Time { return testClock },
		FormatTime:  func(int64) string { return testTime },
		// Durations of passes and recoveries vary from run to run.
		FormatDuration: func(time.Duration) string { return "12ms" },
		Refresh:        -1,
		Clipboard:      func(string) error { return nil },
	}
}

// startUI runs the UI in a teatest program of the test size.
func startUI(t *testing.T, opts Options) *teatest.TestModel {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(testWidth, testHeight))
	t.Cleanup(func() { m.Close() })
	return tm
}

// waitFor waits until the screen output shows all of wants.
func waitFor(t *testing.T, tm *teatest.TestModel, wants ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range wants {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// finish quits the program and returns the final model.
func finish(t *testing.T, tm *teatest.TestModel) *Model {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	m := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*Model)
	m.Close()
	return m
}

// golden compares the final screen with testdata/<test name>.golden
// (go test ./tui -update rewrites it).
func golden(t *testing.T, m *Model) {
	t.Helper()
	view := m.View()
	lines := strings.Split(view, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	teatest.RequireEqualOutput(t, []byte(strings.Join(lines, "\n")+"\n"))
}

// Key helpers.
func keys(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

var (
	enter    = tea.KeyMsg{Type: tea.KeyEnter}
	esc      = tea.KeyMsg{Type: tea.KeyEsc}
	tab      = tea.KeyMsg{Type: tea.KeyTab}
	down     = tea.KeyMsg{Type: tea.KeyDown}
	altEnter = tea.KeyMsg{Type: tea.KeyEnter, Alt: true}
)

// readAll reads a whole partition through the engine.
func readAll(t testing.TB, src Source, topic string, p int) []engine.Record {
	t.Helper()
	var out []engine.Record
	var from int64
	for {
		res, err := src.Read(topic, p, from, 1000, 1<<20)
		if err != nil {
			t.Fatalf("read %s p%d from %d: %v", topic, p, from, err)
		}
		out = append(out, res.Records...)
		if len(res.Records) == 0 || res.Next >= res.HWM {
			return out
		}
		from = res.Next
	}
}
