package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(lockChildEnv); dir != "" {
		lockChild(dir)
		return
	}
	if dir := os.Getenv(churnChildEnv); dir != "" {
		churnChild(dir)
		return
	}
	if dir := os.Getenv(growChildEnv); dir != "" {
		growChild(dir)
		return
	}
	if dir := os.Getenv(hwmChildEnv); dir != "" {
		hwmChild(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

func openEngine(t testing.TB, dir string) *Engine {
	t.Helper()
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return e
}

func TestTopicLifecycleSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	cfg := TopicConfig{Partitions: 3, Codec: "none", SegmentMaxBytes: 1 << 20, Cleanup: CleanupCompact}
	if err := e.CreateTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("orders", cfg); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("second create: %v, want ErrTopicExists", err)
	}
	if err := e.CreateTopic("clicks", TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Produce(context.Background(), "orders", -1, []Record{{Key: []byte("a"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	e = openEngine(t, dir)
	defer e.Close()
	ts, err := e.Topics()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "clicks" || ts[1].Name != "orders" {
		t.Fatalf("topics after reopen: %+v", ts)
	}
	o := ts[1]
	if o.Config.Partitions != 3 || o.Config.Codec != "none" || o.Config.Cleanup != CleanupCompact || o.Config.SegmentMaxBytes != 1<<20 {
		t.Fatalf("orders config after reopen: %+v", o.Config)
	}
	if c := ts[0].Config; c != DefaultTopicConfig() {
		t.Fatalf("clicks config %+v, want defaults %+v", c, DefaultTopicConfig())
	}
	var total int64
	for _, p := range o.Partitions {
		total += p.HWM
	}
	if total != 1 {
		t.Fatalf("orders holds %d records after reopen, want 1", total)
	}
	if len(e.RecoveryReports()) != 4 {
		t.Fatalf("%d recovery reports, want one per partition (4)", len(e.RecoveryReports()))
	}

	if err := e.DeleteTopic("orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "topics", "orders")); !os.IsNotExist(err) {
		t.Fatalf("orders files still there after delete: %v", err)
	}
	if _, err := e.Describe("orders"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("describe deleted topic: %v", err)
	}
	if _, err := e.Produce(context.Background(), "orders", 0, []Record{{Value: []byte("x")}}); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("produce to deleted topic: %v", err)
	}
}

func TestKeyedRecordsLandWhereKafkaPutsThem(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := e.CreateTopic("k", TopicConfig{Partitions: 4, SyncMode: SyncInterval}); err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for i := range 40 {
		recs = append(recs, Record{Key: fmt.Appendf(nil, "key-%d", i%8), Value: fmt.Appendf(nil, "%d", i)})
	}
	acks, err := e.Produce(context.Background(), "k", -1, recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Sync("k"); err != nil {
		t.Fatal(err)
	}
	for i, a := range acks {
		want := int(uint32(murmur2(recs[i].Key))&0x7fffffff) % 4
		if a.Partition != want {
			t.Fatalf("record %d key %s on partition %d, want %d", i, recs[i].Key, a.Partition, want)
		}
		r, err := e.Read("k", a.Partition, a.Offset, 1, 0)
		if err != nil || len(r.Records) != 1 || string(r.Records[0].Value) != string(recs[i].Value) {
			t.Fatalf("ack %+v reads back %+v (%v)", a, r.Records, err)
		}
	}
	if _, err := e.Produce(context.Background(), "k", 4, recs[:1]); !errors.Is(err, ErrPartitionOutOfRange) {
		t.Fatalf("produce to partition 4 of 4: %v", err)
	}
	if _, err := e.Read("k", -1, 0, 1, 0); !errors.Is(err, ErrPartitionOutOfRange) {
		t.Fatalf("read partition -1: %v", err)
	}
}

func TestHostileTopicNamesCreateNothing(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	defer e.Close()
	for _, name := range []string{"", ".", "..", "a/b", "../escape", "%2e%2e", "nul\x00byte", "sp ace", strings.Repeat("x", 250), "ünïcode"} {
		if err := e.CreateTopic(name, TopicConfig{}); !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("CreateTopic(%q) = %v, want ErrInvalidTopic", name, err)
		}
		if _, err := e.Produce(context.Background(), name, -1, []Record{{Value: []byte("x")}}); !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("Produce(%q) = %v, want ErrInvalidTopic", name, err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "topics"))
	if len(ents) != 0 {
		t.Fatalf("hostile names created %v", ents)
	}
	if err := e.CreateTopic(strings.Repeat("x", 249), TopicConfig{}); err != nil {
		t.Fatalf("a 249-character name is valid: %v", err)
	}
	for _, bad := range []TopicConfig{{Partitions: -1}, {Codec: "lz4"}, {SegmentMaxBytes: 1000}, {SyncMode: "sometimes"}, {Cleanup: "shred"}} {
		if err := e.CreateTopic("cfg", bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %+v: %v, want ErrInvalidConfig", bad, err)
		}
	}
}

const lockChildEnv = "PULSE_LOCK_CHILD"

// lockChild tries to open the data dir and reports how it went.
func lockChild(dir string) {
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		fmt.Println(err)
		os.Exit(7)
	}
	e.Close()
}

func TestSecondProcessGetsClearLockError(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+dir)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("second process: %v, output %q", err, out)
	}
	if !strings.Contains(string(out), "locked") || !strings.Contains(string(out), dir) {
		t.Fatalf("lock error does not say what and where: %q", out)
	}
	if n := strings.Count(string(out), "locked"); n != 1 {
		t.Errorf("lock error %q says \"locked\" %d times, want once", out, n)
	}
	if _, err := Open(DefaultOptions(dir)); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open in process: %v, want ErrLocked", err)
	}
	e.Close()
	// Released on close.
	if out, err := cmd2(dir).CombinedOutput(); err != nil {
		t.Fatalf("open after close: %v %s", err, out)
	}
}

func cmd2(dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+dir)
	return cmd
}

func TestStartupReportsMismatchesInsteadOfGuessing(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	if err := e.CreateTopic("kept", TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	// A partition directory vanishes; an unknown topic directory appears.
	if err := os.RemoveAll(filepath.Join(dir, "topics", "kept", "p00001")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "topics", "stray", "p00000"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "topics", "stray", "p00000", "00000000000000000000.log"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An empty orphan is what an interrupted create leaves: it is removed.
	if err := os.MkdirAll(filepath.Join(dir, "topics", "halfmade", "p00000"), 0o755); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, dir)
	defer e.Close()
	probs := strings.Join(e.Problems(), "\n")
	if !strings.Contains(probs, "kept") || !strings.Contains(probs, "stray") {
		t.Fatalf("problems do not name both mismatches:\n%s", probs)
	}
	if _, err := e.Describe("stray"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("an orphan directory became a topic: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "topics", "stray", "p00000", "00000000000000000000.log")); err != nil {
		t.Fatalf("orphan directory with data was touched: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "topics", "halfmade")); !os.IsNotExist(err) {
		t.Fatalf("empty orphan directory kept: %v", err)
	}
	if !strings.Contains(probs, "halfmade") {
		t.Fatalf("removal of the empty orphan not reported:\n%s", probs)
	}
}

// Under the "hide" policy records past the persisted HWM stay invisible
// after a crash until a commit covers them or they are exposed by hand.
func TestHiddenTailHideThenExpose(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	if err := e.CreateTopic("h", TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := e.Produce(context.Background(), "h", 0, []Record{{Value: fmt.Appendf(nil, "%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	// The persisted HWM lags (as after a crash within the persist interval).
	pdir := filepath.Join(dir, "topics", "h", "p00000")
	if err := os.WriteFile(filepath.Join(pdir, "hwm"), []byte{0, 0, 0, 0, 0, 0, 0, 4}, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(pdir, "snapshot"))
	setRecordedHWM(t, dir, "h", 0, 4)
	opts := DefaultOptions(dir)
	opts.HiddenTail = HiddenTailHide
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	info, _ := e.Describe("h")
	if p := info.Partitions[0]; p.HWM != 4 || p.HiddenTail != 6 {
		t.Fatalf("after hide recovery HWM %d hidden %d, want 4 and 6", p.HWM, p.HiddenTail)
	}
	if r, _ := e.Read("h", 0, 0, 100, 0); len(r.Records) != 4 {
		t.Fatalf("read %d records with a hidden tail, want 4", len(r.Records))
	}
	if err := e.ExposeHiddenTail("h", 0); err != nil {
		t.Fatal(err)
	}
	info, _ = e.Describe("h")
	if p := info.Partitions[0]; p.HWM != 10 || p.HiddenTail != 0 {
		t.Fatalf("after expose HWM %d hidden %d, want 10 and 0", p.HWM, p.HiddenTail)
	}
	if r, _ := e.Read("h", 0, 0, 100, 0); len(r.Records) != 10 {
		t.Fatalf("read %d records after expose, want 10", len(r.Records))
	}
}
