package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/damage"
)

// runPulse runs the pulse command line in-process with args and returns
// stdout, stderr and the error.
func runPulse(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// writeSegmentFile writes batches of n records each (offsets from base on)
// as a .log file in dir and returns its path and the batch positions.
func writeSegmentFile(t *testing.T, dir string, base int64, batches, n int, c codec.Codec) (string, []int64) {
	t.Helper()
	var data []byte
	var starts []int64
	off := base
	for i := 0; i < batches; i++ {
		recs := make([]codec.Record, n)
		for j := range recs {
			recs[j] = codec.Record{
				Timestamp: 1_750_000_000_000 + off + int64(j),
				Key:       []byte(fmt.Sprintf("k%d", (off+int64(j))%3)),
				Value:     []byte(fmt.Sprintf(`{"n":%d}`, off+int64(j))),
				Headers:   []codec.Header{{Key: "src", Value: []byte("test")}},
			}
		}
		starts = append(starts, int64(len(data)))
		var err error
		data, err = codec.AppendBatch(data, off, recs, codec.EncodeOptions{Codec: c})
		if err != nil {
			t.Fatal(err)
		}
		off += int64(n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%020d.log", base))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, starts
}

func TestDumpText(t *testing.T) {
	path, starts := writeSegmentFile(t, t.TempDir(), 40, 3, 2, codec.CodecZstd)
	out, _, err := runPulse(t, "dump", path, "--records")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("position %d base_offset 42 next_offset 44 count 2 codec zstd", starts[1]),
		`offset 45 ts 2025-06-15T15:06:40.045Z key "k0" value "{\"n\":45}" header "src"="test"`,
		"base 40, ", "3 valid batches, next offset 46: ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without --records no record lines.
	out, _, err = runPulse(t, "dump", path)
	if err != nil || strings.Contains(out, "offset 45 ts") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
}

func TestDumpDamaged(t *testing.T) {
	path, starts := writeSegmentFile(t, t.TempDir(), 0, 4, 3, codec.CodecNone)
	damage.FlipByte(t, path, starts[1]+codec.HeaderLen+7) // a record byte of batch 1
	out, _, err := runPulse(t, "dump", path)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("position %d size %d BAD: ", starts[1], starts[2]-starts[1])
	if !strings.Contains(out, want) || !strings.Contains(out, "checksum") || !strings.Contains(out, "header claims base offset 3, 3 records") {
		t.Fatalf("output lacks the bad batch %q:\n%s", want, out)
	}
	if !strings.Contains(out, fmt.Sprintf("position %d base_offset 6", starts[2])) || !strings.Contains(out, "DAMAGED: 1 corrupt ranges") {
		t.Fatalf("dump did not continue past the damage:\n%s", out)
	}

	out, _, err = runPulse(t, "dump", path, "--json", "--records")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OK      bool `json:"ok"`
		Batches []struct {
			Position   int64  `json:"position"`
			BaseOffset *int64 `json:"base_offset"`
			CRC        string `json:"crc"`
			Error      string `json:"error"`
			Records    []struct {
				Offset int64   `json:"offset"`
				Value  *string `json:"value"`
			} `json:"records"`
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.OK || len(doc.Batches) != 4 {
		t.Fatalf("ok %v, %d batches", doc.OK, len(doc.Batches))
	}
	if b := doc.Batches[1]; b.CRC != "bad" || b.Position != starts[1] || b.Error == "" || len(b.Records) != 0 {
		t.Fatalf("bad batch %+v", b)
	}
	if b := doc.Batches[3]; b.CRC != "ok" || *b.BaseOffset != 9 || len(b.Records) != 3 || b.Records[2].Offset != 11 || *b.Records[2].Value != `{"n":11}` {
		t.Fatalf("last batch %+v", b)
	}
}

func TestDumpErrors(t *testing.T) {
	if _, _, err := runPulse(t, "dump", filepath.Join(t.TempDir(), "nope.log")); err == nil {
		t.Fatal("missing file: no error")
	}
	if _, _, err := runPulse(t, "dump"); err == nil {
		t.Fatal("no file argument: no error")
	}
}

func TestDumpIndexAndState(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, "00000000000000000100.index")
	if err := os.WriteFile(idx, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 16, 0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runPulse(t, "dump", idx)
	if err != nil || !strings.Contains(out, "entry 1 offset 107 position 4096") || !strings.Contains(out, "2 entries, 17 bytes: BAD:") {
		t.Fatalf("err %v\n%s", err, out)
	}
	if err := recovery.WriteSnapshot(dir, recovery.Snapshot{LEO: 9, ActiveBase: 5, ActiveSize: 300, ActiveNext: 9}); err != nil {
		t.Fatal(err)
	}
	out, _, err = runPulse(t, "dump", filepath.Join(dir, "snapshot"), "--json")
	if err != nil || !strings.Contains(out, `"active_size": 300`) {
		t.Fatalf("err %v\n%s", err, out)
	}
	// The text form names the fields as the JSON does, as the batch lines do.
	out, _, err = runPulse(t, "dump", filepath.Join(dir, "snapshot"))
	if want := "snapshot: leo 9 active_base 5 active_size 300 active_next 9\n"; err != nil || !strings.HasSuffix(out, want) {
		t.Fatalf("dump snapshot: err %v, %q, want it to end %q", err, out, want)
	}
	if err := recovery.WriteHWM(dir, 136479); err != nil {
		t.Fatal(err)
	}
	out, _, err = runPulse(t, "dump", filepath.Join(dir, "hwm"))
	if want := "hwm: hwm 136479\n"; err != nil || !strings.HasSuffix(out, want) {
		t.Fatalf("dump hwm: err %v, %q, want it to end %q", err, out, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "hwm"), []byte{1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runPulse(t, "dump", filepath.Join(dir, "hwm")); err == nil || !strings.Contains(err.Error(), "invalid hwm") {
		t.Fatalf("garbage hwm: err %v", err)
	}
}
