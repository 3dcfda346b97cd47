package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// crashDataDir writes batches batches of 10 order records to orders p0
// (codec c) through a real engine, closes it cleanly, and returns the data
// dir and the partition directory.
func crashDataDir(t *testing.T, c string, batches int) (data, part string) {
	t.Helper()
	data = t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultTopicConfig()
	cfg.Codec = c
	create(t, e, "orders", cfg)
	for b := 0; b < batches; b++ {
		produce(t, e, "orders", 0, orderRecords(b*10, 10)...)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return data, crashlab.PartitionDir(data, "orders", 0)
}

// reopen opens the data dir again (running recovery) and closes it at the
// end of the test.
func reopen(t *testing.T, data string, hide bool) *engine.Engine {
	t.Helper()
	opts := engine.DefaultOptions(data)
	if hide {
		opts.HiddenTail = engine.HiddenTailHide
	}
	e, err := engine.Open(opts)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// batchesOf lists the batches of the partition's only segment.
// unacknowledge makes a cut of the last batches of partition orders/0
// what a crash while writing them leaves: they were never acknowledged, so
// the persisted hwm and the one meta.db recorded stop before them and no
// snapshot covers them (a cut below the acknowledged end is damage to
// acknowledged data, which recovery never truncates).
func unacknowledge(t *testing.T, data, part string, from int64) {
	t.Helper()
	if err := recovery.WriteHWM(part, from); err != nil {
		t.Fatal(err)
	}
	setRecordedHWM(t, data, from)
	if err := os.Remove(filepath.Join(part, recovery.SnapshotFile)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// setRecordedHWM sets the high-watermark meta.db recorded for orders/0,
// as a crash before the engine recorded more would have left it.
func setRecordedHWM(t *testing.T, data string, hwm int64) {
	t.Helper()
	s, err := meta.Open(data, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetHWM("orders", 0, hwm); err != nil {
		t.Fatal(err)
	}
}

func batchesOf(t *testing.T, part string) (string, []crashlab.BatchSpan) {
	t.Helper()
	segs, err := crashlab.Layout(part)
	if err != nil || len(segs) != 1 {
		t.Fatalf("layout: %v, %d segments", err, len(segs))
	}
	return filepath.Join(part, segment.LogFile(segs[0].Base)), segs[0].Batches
}

// openRecovery starts the UI on src and types ":recovery orders 0".
func openRecovery(t *testing.T, src Source, wants ...string) *teatest.TestModel {
	t.Helper()
	tm := startUI(t, testOptions(src))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("recovery orders 0"))
	tm.Send(enter)
	waitFor(t, tm, append([]string{"Topics / orders / p0 / recovery", "Jump into the frames", "now: hwm"}, wants...)...)
	return tm
}

func TestRecoveryScreenCleanOpen(t *testing.T) {
	data, _ := crashDataDir(t, "zstd", 3)
	e := reopen(t, data, false)
	tm := openRecovery(t, e, "not degraded")
	m := finish(t, tm)
	v := m.View()
	for _, want := range []string{"[ok]", "path            snapshot", "dir             topics/orders/p00000", "duration        12ms", "hwm             30 (persisted 30"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, data) {
		t.Errorf("screen shows the temporary data dir %s", data)
	}
	golden(t, m)
}

func TestRecoveryScreenTornTail(t *testing.T) {
	data, part := crashDataDir(t, "zstd", 3)
	log, bs := batchesOf(t, part)
	last := bs[len(bs)-1]
	if err := os.Truncate(log, last.Pos+last.Size/2); err != nil {
		t.Fatal(err)
	}
	unacknowledge(t, data, part, last.BaseOffset)
	e := reopen(t, data, false)
	tm := openRecovery(t, e, "truncated at", "truncated ")
	m := finish(t, tm)
	v := m.View()
	want := fmt.Sprintf("truncation      00000000000000000000.log truncated at %d: %d bytes", last.Pos, last.Size/2)
	if !strings.Contains(v, want) || !strings.Contains(v, "[recovered]") || !strings.Contains(v, "log             start 0, end 20") {
		t.Errorf("screen lacks %q, [recovered] or the end 20:\n%s", want, v)
	}
	golden(t, m)
}

func TestRecoveryScreenMidFileCorruption(t *testing.T) {
	data, part := crashDataDir(t, "zstd", 3)
	log, bs := batchesOf(t, part)
	if err := os.Remove(filepath.Join(part, recovery.SnapshotFile)); err != nil {
		t.Fatal(err)
	}
	damage.FlipByte(t, log, bs[0].Pos+60)
	e := reopen(t, data, false)
	tm := openRecovery(t, e, "[DEGRADED]", "DEGRADED: 10 offsets in corrupt ranges, 0 records skipped by reads so far")
	m := finish(t, tm)
	v := m.View()
	want := fmt.Sprintf("CORRUPT         00000000000000000000.log bytes [0, %d) offsets [0, 10)", bs[1].Pos)
	if !strings.Contains(v, want) || !strings.Contains(v, "path            full-scan (no snapshot)") {
		t.Errorf("screen lacks %q or the full scan:\n%s", want, v)
	}
	golden(t, m)
}

func TestRecoveryScreenHiddenTail(t *testing.T) {
	data, part := crashDataDir(t, "none", 2)
	if err := os.Remove(filepath.Join(part, "hwm")); err != nil {
		t.Fatal(err)
	}
	setRecordedHWM(t, data, 0)
	e := reopen(t, data, true)
	tm := openRecovery(t, e, "hidden tail 20 [0, 20) (E: expose it)")
	m := finish(t, tm)
	v := m.View()
	if !strings.Contains(v, "hwm             0 (persisted none, hidden tail 20, policy hide)") {
		t.Errorf("screen lacks the hidden tail line:\n%s", v)
	}
	golden(t, m)
}

// E asks before exposing the hidden tail, and exposes it in the engine on yes.
func TestRecoveryScreenExposeAsks(t *testing.T) {
	data, part := crashDataDir(t, "none", 2)
	if err := os.Remove(filepath.Join(part, "hwm")); err != nil {
		t.Fatal(err)
	}
	setRecordedHWM(t, data, 0)
	e := reopen(t, data, true)
	hwm := func() int64 {
		info, err := e.Describe("orders")
		if err != nil {
			t.Fatal(err)
		}
		return info.Partitions[0].HWM
	}
	tm := openRecovery(t, e, "E: expose it")
	tm.Send(keys("E"))
	waitFor(t, tm, "Expose 20 records [0, 20) of orders p0 to consumers?")
	if h := hwm(); h != 0 {
		t.Fatalf("HWM %d before the answer: exposed without asking", h)
	}
	tm.Send(keys("y"))
	waitFor(t, tm, "hidden tail of orders p0 exposed")
	finish(t, tm)
	if h := hwm(); h != 20 {
		t.Fatalf("HWM %d after the expose, want 20", h)
	}
}

// :recovery lists every partition; enter opens one.
func TestRecoveryListScreen(t *testing.T) {
	data, part := crashDataDir(t, "zstd", 3)
	log, bs := batchesOf(t, part)
	if err := os.Truncate(log, bs[2].Pos+10); err != nil {
		t.Fatal(err)
	}
	unacknowledge(t, data, part, bs[2].BaseOffset)
	e := reopen(t, data, false)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("recovery"))
	tm.Send(enter)
	waitFor(t, tm, "Topics / recovery", "1 partition, 1 needed work, 0 degraded", "orders/p0", "recovered", "full-scan")
	tm.Send(enter)
	waitFor(t, tm, "Topics / recovery / orders / p0 / recovery", "truncation      00000000000000000000.log truncated at")
	finish(t, tm)
}

// What the open of the data dir found wrong beyond a partition's report (a
// meta.db rebuilt from the topic directories, with the stored configs lost)
// is on the status line as the UI opens, on the topic list or on the
// partitions of --topic, as pulse serve prints it on stderr.
func TestOpenProblemsOnTheStatusLine(t *testing.T) {
	dir := t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	create(t, e, "orders", engine.DefaultTopicConfig())
	produce(t, e, "orders", 0, orderRecords(0, 3)...)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, layout.MetaFile)); err != nil {
		t.Fatal(err)
	}
	e = openEngineWith(t, engine.DefaultOptions(dir))
	if len(e.Problems()) == 0 {
		t.Fatal("the open found no problem with meta.db gone")
	}
	for _, start := range []string{"", "orders"} { // --topic too
		opts := testOptions(e)
		opts.StartTopic = start
		tm := startUI(t, opts)
		wants := []string{"topic orders: meta.db was missing"}
		if start != "" {
			wants = append(wants, "Topics / orders", "LOG START")
		}
		waitFor(t, tm, wants...)
		if m := finish(t, tm); !strings.Contains(m.status, "topic orders: meta.db was missing") {
			t.Errorf("start %q: the status line ends as %q", start, m.status)
		}
	}
}
