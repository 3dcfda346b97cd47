package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/internal/damage"
)

// makeDataDir writes a data dir with two topics: orders (p0: two segments,
// p1: one) and logs (p0: one), all valid. It returns the data dir and the
// path and batch positions of orders/p0's first segment.
func makeDataDir(t *testing.T) (string, string, []int64) {
	t.Helper()
	data := t.TempDir()
	p0 := filepath.Join(data, "topics", "orders", "p00000")
	first, starts := writeSegmentFile(t, p0, 0, 5, 4, codec.CodecZstd)
	writeSegmentFile(t, p0, 20, 3, 4, codec.CodecNone)
	writeSegmentFile(t, filepath.Join(data, "topics", "orders", "p00001"), 0, 2, 2, codec.CodecZstd)
	writeSegmentFile(t, filepath.Join(data, "topics", "logs", "p00000"), 0, 7, 1, codec.CodecNone)
	return data, first, starts
}

func TestVerifyClean(t *testing.T) {
	data, _, _ := makeDataDir(t)
	out, errOut, err := runPulse(t, "verify", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "verified 3 partitions, 4 segments, 17 batches") || !strings.Contains(out, "all ok") {
		t.Fatalf("output:\n%s", out)
	}
	if !strings.Contains(errOut, "100%") || !strings.Contains(errOut, "verifying [") {
		t.Fatalf("no progress bar on stderr: %q", errOut)
	}
	// --data works as well as the argument, -q silences the bar.
	out, errOut, err = runPulse(t, "verify", "--data", data, "-q")
	if err != nil || !strings.Contains(out, "all ok") || errOut != "" {
		t.Fatalf("err %v out %q stderr %q", err, out, errOut)
	}
}

func TestVerifyFindsDamage(t *testing.T) {
	data, first, starts := makeDataDir(t)
	damage.FlipByte(t, first, starts[2]+20) // batch 2's first timestamp: CRC mismatch
	// A torn tail on the active segment of orders/p1.
	p1 := filepath.Join(data, "topics", "orders", "p00001", fmt.Sprintf("%020d.log", 0))
	b, _ := os.ReadFile(p1)
	if err := os.WriteFile(p1, b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runPulse(t, "verify", data, "-q")
	if err == nil || !strings.Contains(err.Error(), "2 problems") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	want := fmt.Sprintf("BAD %s position %d-%d offsets 8-12 (corrupt): ", first, starts[2], starts[3])
	if !strings.Contains(out, want) || !strings.Contains(out, "checksum") {
		t.Fatalf("output lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "BAD "+p1) || !strings.Contains(out, "(torn-tail)") {
		t.Fatalf("output lacks the torn tail:\n%s", out)
	}

	out, _, err = runPulse(t, "verify", filepath.Join(data, "topics", "orders"), "-q", "--json")
	if err == nil {
		t.Fatal("no error")
	}
	var sum verifySummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if sum.OK || sum.Segments != 3 || len(sum.Problems) != 2 || sum.Problems[0].Position != starts[2] || sum.Problems[0].FirstOffset != 8 {
		t.Fatalf("%+v", sum)
	}
	// Nothing was changed: the torn tail is still there.
	if b2, _ := os.ReadFile(p1); len(b2) != len(b)-3 {
		t.Fatalf("verify changed %s", p1)
	}
}

// TestVerifyPartitionNamesAsTheEngine: pulse verify takes for a partition
// directory exactly the names the engine writes and opens (p00001), so a
// copy named p1 is not verified as partition 1 of the topic, as the engine
// does not open it.
func TestVerifyPartitionNamesAsTheEngine(t *testing.T) {
	data, _, _ := makeDataDir(t)
	src := filepath.Join(data, "topics", "orders", "p00001", fmt.Sprintf("%020d.log", 0))
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p1", "p+0001", "p000001"} {
		writeFile(t, filepath.Join(data, "topics", "orders", name, fmt.Sprintf("%020d.log", 0)), b)
	}
	out, _, err := runPulse(t, "verify", data, "-q")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "verified 3 partitions, 4 segments, 17 batches") {
		t.Fatalf("verify counted a directory the engine does not open:\n%s", out)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
