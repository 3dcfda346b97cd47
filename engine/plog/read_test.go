package plog

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// A batch larger than segment.Reader's 4 MiB window, after a smaller one,
// survives a full recovery scan and reads back whole: the reader once kept
// zeros where the window's bytes should have been when it grew, and
// recovery reported the batch as corrupt.
func TestBatchLargerThanReadWindowRecoversWhole(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.SegmentMaxBytes = 64 << 20
	o.Codec = codec.CodecNone
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<16) // 5 MiB
	l := openLog(t, dir, o)
	mustAppend(t, l, codec.Record{Value: []byte("before")})
	mustAppend(t, l, codec.Record{Value: big})
	mustAppend(t, l, codec.Record{Value: []byte("after")})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// No snapshot: recovery scans the whole segment.
	if err := os.Remove(filepath.Join(dir, "snapshot")); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, o)
	defer l.Close()
	if rep := l.Report(); rep.Degraded || len(rep.Corrupt) != 0 || len(rep.Truncations) != 0 {
		t.Fatalf("recovery: degraded %v, corrupt %+v, truncations %+v", rep.Degraded, rep.Corrupt, rep.Truncations)
	}
	r, err := l.Read(0, 10, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Records) != 3 || r.Skipped != 0 || string(r.Records[0].Value) != "before" ||
		!bytes.Equal(r.Records[1].Value, big) || string(r.Records[2].Value) != "after" {
		t.Fatalf("read %d records, %d skipped", len(r.Records), r.Skipped)
	}
}

// A read of a closed log says so (ErrClosed), as an append does, rather
// than serving what the read cache still holds: a reader woken by Close
// learns from its next read that the log is gone.
func TestReadOfClosedLogIsErrClosed(t *testing.T) {
	l := openLog(t, t.TempDir(), testOptions())
	if _, _, err := l.Append(context.Background(), []codec.Record{{Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if res, err := l.Read(0, 10, 1<<20); err != nil || len(res.Records) != 1 {
		t.Fatalf("read before Close: %d records, %v", len(res.Records), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(0, 10, 1<<20)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("read after Close: %d records, %v, want ErrClosed", len(res.Records), err)
	}
	if len(res.Records) != 0 {
		t.Fatalf("read after Close returned %d records", len(res.Records))
	}
}

// A segment file closed under a read (the log closing meanwhile) is not
// damage: the read fails with ErrClosed, and nothing is reported corrupt
// or skipped.
func TestReadOfClosedSegmentIsNotCorruption(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testOptions())
	if _, _, err := l.Append(context.Background(), []codec.Record{{Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, testOptions()) // nothing cached
	defer l.Close()
	l.segMu.RLock()
	st := l.segs[0]
	l.segMu.RUnlock()
	st.seg.Close() // as Close does to a read still under way
	res, err := l.Read(0, 10, 1<<20)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("read of a closed segment: %d records, skipped %d, %v; want ErrClosed", len(res.Records), res.Skipped, err)
	}
	if res.Skipped != 0 || l.degraded.Load() {
		t.Fatalf("a closed segment was taken for damage: skipped %d, degraded %v", res.Skipped, l.degraded.Load())
	}
}
