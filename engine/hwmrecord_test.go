package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/internal/killtest"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// setRecordedHWM sets the high-watermark meta.db recorded for partition p
// of topic, as a crash before the engine recorded more would have left it.
func setRecordedHWM(t *testing.T, dir, topic string, p int, hwm int64) {
	t.Helper()
	s, err := meta.Open(dir, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetHWM(topic, p, hwm); err != nil {
		t.Fatal(err)
	}
}

// checkContinuesPast reopens dir and checks that partition p of topic
// hands out offsets from end on, its lost offsets reported, skipped and
// counted.
func checkContinuesPast(t *testing.T, dir, topic string, p int, end int64) {
	t.Helper()
	e := openEngine(t, dir)
	defer e.Close()
	info, err := e.Describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	pi := info.Partitions[p]
	if pi.LEO != end || pi.HWM != end || !pi.Degraded {
		t.Fatalf("reopened: LEO %d, HWM %d, degraded %v; want the log to go on at %d, degraded", pi.LEO, pi.HWM, pi.Degraded, end)
	}
	acks, err := e.Produce(context.Background(), topic, p, []Record{{Value: []byte("after")}})
	if err != nil {
		t.Fatal(err)
	}
	if acks[0].Offset != end {
		t.Fatalf("the next record got offset %d, want %d: offsets below it were handed out before", acks[0].Offset, end)
	}
	var lost bool
	for _, r := range e.RecoveryReports() {
		if r.Topic == topic && r.Partition == p {
			for _, g := range r.Gaps {
				lost = lost || (g.FirstOffset == 0 && g.EndOffset == end)
			}
		}
	}
	if !lost {
		t.Fatalf("the recovery report lists no lost range [0, %d): %+v", end, e.RecoveryReports())
	}
	r, err := e.Read(topic, p, 0, 10, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Records) != 1 || r.Records[0].Offset != end || r.Skipped != end {
		t.Fatalf("read from 0: %d records (first %+v), %d skipped; want the one at %d after %d skipped", len(r.Records), r.Records, r.Skipped, end, end)
	}
}

// A partition directory removed while Pulse was stopped (its hwm file,
// snapshot, manifest and segments with it) goes on past the offsets it
// handed out, which meta.db recorded at the clean close, instead of
// handing them out again from 0.
func TestRemovedPartitionDirNeverReusesOffsets(t *testing.T) {
	for _, what := range []string{"partition", "topic"} {
		t.Run(what, func(t *testing.T) {
			dir := t.TempDir()
			e := openEngine(t, dir)
			if err := e.CreateTopic("t", TopicConfig{Partitions: 2, Codec: "none"}); err != nil {
				t.Fatal(err)
			}
			acks := produceN(t, e, "t", 1, 40, 100)
			end := acks[len(acks)-1].Offset + 1
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			gone := layout.PartitionDir(dir, "t", 1)
			if what == "topic" {
				gone = layout.TopicDir(dir, "t")
			}
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
			checkContinuesPast(t, dir, "t", 1, end)
		})
	}
}

const hwmChildEnv = "PULSE_HWM_CHILD"

// hwmChild produces 25 records to topic "h", waits until meta.db records
// their HWM (as the recorder does, every HWM interval), prints "recorded
// N" and waits to be killed.
func hwmChild(dir string) {
	opts := DefaultOptions(dir)
	opts.HWMInterval = 20 * time.Millisecond
	e, err := Open(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hwm child open:", err)
		os.Exit(2)
	}
	if err := e.CreateTopic("h", TopicConfig{Codec: "none"}); err != nil {
		fmt.Fprintln(os.Stderr, "hwm child create:", err)
		os.Exit(3)
	}
	var end int64
	for i := range 25 {
		acks, err := e.Produce(context.Background(), "h", 0, []Record{{Value: fmt.Appendf(nil, "v%d", i)}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "hwm child produce:", err)
			os.Exit(4)
		}
		end = acks[0].Offset + 1
	}
	for {
		parts, err := e.Meta().Partitions("h")
		if err != nil {
			fmt.Fprintln(os.Stderr, "hwm child meta:", err)
			os.Exit(5)
		}
		if parts[0].HWM == end {
			fmt.Printf("recorded %d\n", end)
			os.Stdout.Sync()
			select {}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The same after SIGKILL: meta.db records the HWM while the partition
// moves, so a process killed once it was recorded, whose partition
// directory is then removed, goes on past it too.
func TestRemovedPartitionDirAfterKillNeverReusesOffsets(t *testing.T) {
	dir := t.TempDir()
	lines := killtest.RunUntil(t, []string{hwmChildEnv + "=" + dir}, "recorded ")
	end, err := strconv.ParseInt(strings.TrimPrefix(lines[len(lines)-1], "recorded "), 10, 64)
	if err != nil || end <= 0 {
		t.Fatalf("the child said %q", lines[len(lines)-1])
	}
	if err := os.RemoveAll(layout.PartitionDir(dir, "h", 0)); err != nil {
		t.Fatal(err)
	}
	checkContinuesPast(t, dir, "h", 0, end)
}

// Records below the high-watermark meta.db recorded were visible: under
// the hide policy a lagging hwm file hides none of them.
func TestRecordedHWMHidesNothingVisible(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	if err := e.CreateTopic("h", TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	acks := produceN(t, e, "h", 0, 10, 10)
	end := acks[len(acks)-1].Offset + 1
	e.Close()
	pdir := layout.PartitionDir(dir, "h", 0)
	if err := os.WriteFile(filepath.Join(pdir, layout.HWMFile), []byte{0, 0, 0, 0, 0, 0, 0, 4}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(pdir, layout.SnapshotFile)); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions(dir)
	opts.HiddenTail = HiddenTailHide
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	info, _ := e.Describe("h")
	if p := info.Partitions[0]; p.HWM != end || p.HiddenTail != 0 || p.Degraded {
		t.Fatalf("HWM %d, hidden %d, degraded %v; want every one of the %d records visible, none hidden", p.HWM, p.HiddenTail, p.Degraded, end)
	}
}

// The recorder passes over topics while they are created, grown and deleted
// without touching a partition list only their creator writes (go test
// -race finds the data race if it does), and what it records for topics
// that live on is their HWM.
func TestHWMRecorderRunsBesideCreatesAndDeletes(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions(dir)
	opts.HWMInterval = time.Millisecond
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 30 {
		name := fmt.Sprintf("t%d", round%3)
		if err := e.CreateTopic(name, TopicConfig{Partitions: 16, Codec: "none"}); err != nil {
			t.Fatalf("round %d: create: %v", round, err)
		}
		if _, err := e.Produce(context.Background(), name, round%16, []Record{{Value: []byte("v")}}); err != nil {
			t.Fatalf("round %d: produce: %v", round, err)
		}
		if err := e.AlterTopic(name, TopicConfig{Partitions: 20, Codec: "none"}); err != nil {
			t.Fatalf("round %d: grow: %v", round, err)
		}
		if round < 27 {
			if err := e.DeleteTopic(name); err != nil {
				t.Fatalf("round %d: delete: %v", round, err)
			}
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := meta.Open(dir, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := 27; round < 30; round++ {
		name := fmt.Sprintf("t%d", round%3)
		parts, err := s.Partitions(name)
		if err != nil {
			t.Fatal(err)
		}
		var hwms int64
		for _, p := range parts {
			hwms += p.HWM
		}
		if len(parts) != 20 || hwms != 1 {
			t.Fatalf("meta.db holds %d partitions of %s with HWMs summing to %d, want 20 summing to 1", len(parts), name, hwms)
		}
	}
}
