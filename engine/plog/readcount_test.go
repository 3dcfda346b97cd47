package plog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// corruptOffset1 returns the directory of a closed log of 200 records of
// 900 bytes, one a batch, whose second batch (offset 1, in the first,
// sealed, segment) is damaged, with no snapshot, and the options it is
// opened with.
func corruptOffset1(t *testing.T) (string, Options) {
	t.Helper()
	dir := t.TempDir()
	o := testOptions()
	o.Codec = codec.CodecNone
	l := openLog(t, dir, o)
	for i := range 200 {
		mustAppend(t, l, codec.Record{Value: bytes.Repeat([]byte{byte(i)}, 900)})
	}
	segs, _ := l.Segments()
	l.Close()
	if len(segs) < 2 {
		t.Fatalf("want a sealed segment, have %d segments", len(segs))
	}
	// Damage the body of the second batch of the first (sealed) segment.
	path := segs[0].Path
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := codec.ParseHeader(data)
	data[h.Size()+codec.HeaderLen+100] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "snapshot"))
	return dir, o
}

// Read counts the offsets it skips in SkippedRecords; ReadUncounted says
// what it skipped and counts nothing, leaving it to its reader, which
// counts what it hands on with CountSkipped.
func TestReadUncountedLeavesTheSkippedCountToItsReader(t *testing.T) {
	dir, o := corruptOffset1(t)
	l := openLog(t, dir, o)
	defer l.Close()
	res, err := l.ReadUncounted(0, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 1 || len(res.Skips) != 1 || res.Skips[0] != (Skip{First: 1, End: 2}) {
		t.Fatalf("ReadUncounted: skipped %d %+v, want 1, [1,2)", res.Skipped, res.Skips)
	}
	if n := l.SkippedRecords(); n != 0 {
		t.Fatalf("after ReadUncounted: SkippedRecords %d, want 0", n)
	}
	l.CountSkipped(res.Skipped)
	if n := l.SkippedRecords(); n != 1 {
		t.Fatalf("after CountSkipped(1): SkippedRecords %d, want 1", n)
	}
	if res, err := l.Read(0, 10, 0); err != nil || res.Skipped != 1 {
		t.Fatalf("Read: skipped %d, %v; want 1", res.Skipped, err)
	}
	if n := l.SkippedRecords(); n != 2 {
		t.Fatalf("after Read: SkippedRecords %d, want 2", n)
	}
}
