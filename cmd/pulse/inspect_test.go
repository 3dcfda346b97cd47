package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// fillPartition writes n records to a partition directory through the
// partition log and closes it.
func fillPartition(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := plog.DefaultOptions()
	opts.SegmentMaxBytes = 8 << 10
	opts.Codec = codec.CodecNone
	l, err := plog.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 5 {
		recs := make([]codec.Record, 5)
		for j := range recs {
			recs[j] = codec.Record{Key: []byte("k"), Value: []byte(fmt.Sprintf(`{"n":%d,"s":"%s"}`, i+j, strings.Repeat("v", 40)))}
		}
		if _, _, err := l.Append(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// checksums maps every file under root to its sha256.
func checksums(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[p] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// damagedDataDir builds a data dir with three partitions: orders/p0 clean,
// orders/p1 with a torn tail, a deleted index and a temp file, logs/p0 with
// its hwm behind the log and no snapshot.
func damagedDataDir(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	p0 := filepath.Join(data, "topics", "orders", "p00000")
	p1 := filepath.Join(data, "topics", "orders", "p00001")
	l0 := filepath.Join(data, "topics", "logs", "p00000")
	fillPartition(t, p0, 300)
	fillPartition(t, p1, 300)
	fillPartition(t, l0, 50)

	bases, err := segment.List(p1)
	if err != nil || len(bases) < 3 {
		t.Fatalf("orders/p1 has segments %v (%v); the test wants several", bases, err)
	}
	active := filepath.Join(p1, fmt.Sprintf("%020d.log", bases[len(bases)-1]))
	f, err := os.OpenFile(active, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{codec.Magic, codec.Version, 0, 0, 9, 9, 9}) // a torn header
	f.Close()
	if err := os.Remove(filepath.Join(p1, fmt.Sprintf("%020d.index", bases[0]))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p1, ".tmp-snapshot-42"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := recovery.WriteHWM(l0, 20); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(l0, recovery.SnapshotFile)); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestInspectChangesNothing(t *testing.T) {
	data := damagedDataDir(t)
	before := checksums(t, data)

	out, _, err := runPulse(t, "inspect", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"partition logs/p0  [recovered]", "hwm             50 (persisted 20, hidden tail 30, policy expose)", "full-scan (no snapshot)",
		"partition orders/p0  [ok]", "path            snapshot",
		"partition orders/p1  [recovered]", "would be truncated at", ": 7 bytes (", "00000000000000000000.index would be rebuilt",
		"temp file       .tmp-snapshot-42 would be removed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	jsonOut, _, err := runPulse(t, "inspect", "--data", data, "--json", "--hidden-tail", "hide")
	if err != nil {
		t.Fatal(err)
	}
	var reports []recovery.Report
	if err := json.Unmarshal([]byte(jsonOut), &reports); err != nil {
		t.Fatalf("%v\n%s", err, jsonOut)
	}
	if len(reports) != 3 || reports[0].Topic != "logs" || reports[2].Partition != 1 || !reports[2].ReadOnly {
		t.Fatalf("reports %+v", reports)
	}
	if r := reports[0]; r.HWM != 20 || r.HiddenTail != 30 || r.HiddenTailPolicy != "hide" {
		t.Fatalf("hide policy: %+v", r)
	}
	if r := reports[2]; len(r.Truncations) != 1 || r.Truncations[0].Bytes != 7 || len(r.IndexesRebuilt) != 1 || len(r.TempFilesRemoved) != 1 {
		t.Fatalf("orders/p1: %+v", r)
	}
	// One partition directory given directly.
	out, _, err = runPulse(t, "inspect", filepath.Join(data, "topics", "orders", "p00001"))
	if err != nil || !strings.Contains(out, "partition orders/p1") || strings.Contains(out, "partition orders/p0 ") {
		t.Fatalf("err %v\n%s", err, out)
	}

	after := checksums(t, data)
	if len(after) != len(before) {
		t.Fatalf("inspect changed the file set: %d files, then %d", len(before), len(after))
	}
	for p, sum := range before {
		if after[p] != sum {
			t.Fatalf("inspect changed %s", p)
		}
	}

	// What inspect predicted is what recovery then does.
	res, err := recovery.Run(filepath.Join(data, "topics", "orders", "p00001"), recovery.Options{Topic: "orders", Partition: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Segments {
		s.Close()
	}
	got := res.Report
	if got.RecoveredEnd != reports[2].RecoveredEnd || got.Truncations[0] != reports[2].Truncations[0] || got.IndexesRebuilt[0] != reports[2].IndexesRebuilt[0] {
		t.Fatalf("recovery did %+v, inspect said %+v", got, reports[2])
	}
}

func TestInspectEmptyAndMissing(t *testing.T) {
	if _, _, err := runPulse(t, "inspect", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a Pulse data directory") {
		t.Fatalf("empty dir: %v", err)
	}
	data := t.TempDir() // a data dir without topics: meta.db only
	if err := os.WriteFile(filepath.Join(data, "meta.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runPulse(t, "inspect", data)
	if err != nil || !strings.Contains(out, "no partitions") {
		t.Fatalf("err %v out %q", err, out)
	}
	if _, _, err := runPulse(t, "inspect", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing dir: no error")
	}
}

// TestIndexIntervalFlagRefusesNegative: --index-interval-bytes below zero
// is refused with an error naming it (0 is the default spacing), by inspect
// and by crashlab, before anything is read.
func TestIndexIntervalFlagRefusesNegative(t *testing.T) {
	data, _, _ := makeDataDir(t)
	for _, args := range [][]string{
		{"inspect", "--index-interval-bytes", "-5", data},
		{"crashlab", "--data", data, "--topic", "orders", "--partition", "0", "--fault", "cut", "--index-interval-bytes", "-5"},
	} {
		_, _, err := runPulse(t, args...)
		if err == nil || !strings.Contains(err.Error(), "index interval") || !strings.Contains(err.Error(), "-5") {
			t.Errorf("pulse %v: %v, want the negative interval refused", args, err)
		}
	}
	if _, _, err := runPulse(t, "inspect", "--index-interval-bytes", "0", data); err != nil {
		t.Errorf("--index-interval-bytes 0 (the default): %v", err)
	}
}
