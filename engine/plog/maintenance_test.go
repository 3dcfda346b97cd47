package plog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/fsutil"
)

// fillSegments appends numbered records until l has at least n segments.
func fillSegments(t *testing.T, l *Log, n int) int64 {
	t.Helper()
	var next int64
	for segs, _ := l.Size(); segs < n; segs, _ = l.Size() {
		recs := make([]codec.Record, 50)
		for i := range recs {
			recs[i] = codec.Record{Key: []byte(fmt.Sprintf("k%d", next+int64(i))), Value: []byte(strings.Repeat("v", 200))}
		}
		next = mustAppend(t, l, recs...) + int64(len(recs))
	}
	return next
}

func checkContiguous(t *testing.T, recs []codec.Record, from, to int64) {
	t.Helper()
	if int64(len(recs)) != to-from {
		t.Fatalf("read %d records, want offsets [%d, %d)", len(recs), from, to)
	}
	for i, r := range recs {
		if r.Offset != from+int64(i) || string(r.Key) != fmt.Sprintf("k%d", r.Offset) {
			t.Fatalf("record %d: offset %d key %q, want offset %d", i, r.Offset, r.Key, from+int64(i))
		}
	}
}

func TestTrimOldestKeepsOffsetsAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.Codec = codec.CodecNone
	l := openLog(t, dir, o)
	end := fillSegments(t, l, 4)
	segs, err := l.Segments()
	if err != nil {
		t.Fatal(err)
	}

	p, err := l.BeginMaintenance(PassRetention)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.TrimOldest(segs[1].Base); !errors.Is(err, ErrNotOldest) {
		t.Fatalf("trim of the second segment: %v, want ErrNotOldest", err)
	}
	if err := p.RemoveSegment(segs[len(segs)-1].Base); !errors.Is(err, ErrActiveSegment) {
		t.Fatalf("remove of the active segment: %v, want ErrActiveSegment", err)
	}
	if err := p.TrimOldest(segs[0].Base); err != nil {
		t.Fatal(err)
	}
	if err := p.TrimOldest(segs[0].Base); !errors.Is(err, ErrNotOldest) {
		t.Fatalf("second trim of the same segment: %v", err)
	}
	p.End()
	p.End() // harmless

	if got := l.LogStart(); got != segs[1].Base {
		t.Fatalf("log start %d after trim, want %d", got, segs[1].Base)
	}
	if _, err := os.Stat(filepath.Join(dir, segment.LogFile(segs[0].Base))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("trimmed .log still there: %v", err)
	}
	checkContiguous(t, readAll(t, l), segs[1].Base, end)
	snap, err := recovery.ReadSnapshot(dir)
	if err != nil || snap.ActiveBase != segs[len(segs)-1].Base {
		t.Fatalf("snapshot after trim: %+v %v", snap, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openLog(t, dir, o)
	defer l.Close()
	if got := l.LogStart(); got != segs[1].Base {
		t.Fatalf("log start %d after reopen, want %d", got, segs[1].Base)
	}
	checkContiguous(t, readAll(t, l), segs[1].Base, end)
	if next := mustAppend(t, l, codec.Record{Key: []byte(fmt.Sprintf("k%d", end)), Value: []byte("x")}); next != end {
		t.Fatalf("append after trim and reopen got offset %d, want %d", next, end)
	}
}

// TestRetiredSegmentStaysReadable holds a segment the way an in-flight read
// does, across a trim and a swap, and reads it afterwards.
func TestRetiredSegmentStaysReadable(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.Codec = codec.CodecNone
	l := openLog(t, dir, o)
	defer l.Close()
	fillSegments(t, l, 4)
	segs, _ := l.Segments()
	l.pinReads() // as Read does before it picks segments
	heldTrim, _ := l.segmentFor(segs[0].Base)
	heldSwap, _ := l.segmentFor(segs[1].Base)
	readFirst := func(st *segState) codec.Batch {
		t.Helper()
		raw, _, err := st.seg.ReadBatch(0, nil)
		if err != nil {
			t.Fatalf("read of a held segment: %v", err)
		}
		b, err := codec.DecodeBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Warm the cache for the segment about to be swapped.
	if _, err := l.Read(segs[1].Base, 10, 0); err != nil {
		t.Fatal(err)
	}

	// Rewrite segment 1 keeping only its first batch's first record.
	first := readFirst(heldSwap).Records[0]
	batch, err := codec.AppendBatch(nil, first.Offset, []codec.Record{first}, codec.EncodeOptions{Sparse: true})
	if err != nil {
		t.Fatal(err)
	}
	tmpLog := filepath.Join(dir, fsutil.TempPrefix+"test-log")
	tmpIdx := filepath.Join(dir, fsutil.TempPrefix+"test-index")
	if err := os.WriteFile(tmpLog, batch, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmpIdx, segment.EncodeIndex([]segment.IndexEntry{{RelOffset: 0, RelPosition: 0}}), 0o644); err != nil {
		t.Fatal(err)
	}

	p, err := l.BeginMaintenance(PassCompaction)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Compacting() {
		t.Fatal("Compacting false during a compaction pass")
	}
	if err := p.TrimOldest(segs[0].Base); err != nil {
		t.Fatal(err)
	}
	if err := p.SwapSegment(segs[1].Base, tmpLog, tmpIdx); err != nil {
		t.Fatal(err)
	}
	if err := p.SwapSegment(segs[0].Base, tmpLog, tmpIdx); !errors.Is(err, ErrNoSegment) {
		t.Fatalf("swap of a trimmed segment: %v, want ErrNoSegment", err)
	}
	p.End()
	if l.Compacting() {
		t.Fatal("Compacting true after the pass")
	}
	if err := p.TrimOldest(segs[1].Base); !errors.Is(err, ErrPassEnded) {
		t.Fatalf("hook after End: %v", err)
	}

	// The held segments still read their old bytes, across further passes.
	for i := 0; i < 2; i++ {
		if got := readFirst(heldTrim).Records[0].Offset; got != segs[0].Base {
			t.Fatalf("held trimmed segment reads offset %d, want %d", got, segs[0].Base)
		}
		if got := len(readFirst(heldSwap).Records); got != 50 {
			t.Fatalf("held swapped segment's first batch has %d records, want the old 50", got)
		}
		p, err := l.BeginMaintenance(PassRetention)
		if err != nil {
			t.Fatal(err)
		}
		p.End()
	}
	// Once no reader is pinned, the next pass closes the retired segments.
	l.unpinReads()
	p, err = l.BeginMaintenance(PassRetention)
	if err != nil {
		t.Fatal(err)
	}
	p.End()
	if _, _, err := heldSwap.seg.ReadBatch(0, nil); err == nil {
		t.Fatal("retired segment still open after a pass with no reader pinned")
	}
	// New reads see the rewrite: one record, then a jump to segment 2.
	res, err := l.Read(segs[1].Base, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 2 || res.Records[0].Offset != first.Offset || res.Records[1].Offset != segs[2].Base {
		t.Fatalf("read after swap: %d records %v", len(res.Records), offsets(res.Records))
	}
	if _, err := os.Stat(tmpLog); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp data file left after swap: %v", err)
	}
	info, _ := l.Segments()
	if !info[0].Sparse || info[0].Records != 1 || info[0].Base != segs[1].Base {
		t.Fatalf("segment info after swap: %+v", info[0])
	}
}

func offsets(recs []codec.Record) []int64 {
	out := make([]int64, len(recs))
	for i, r := range recs {
		out[i] = r.Offset
	}
	return out
}

// Close waits for a running pass, whose hooks refuse from then on, and no
// pass begins on a closed log.
func TestCloseWaitsForMaintenancePass(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	l := openLog(t, dir, o)
	fillSegments(t, l, 3)
	segs, _ := l.Segments()
	p, err := l.BeginMaintenance(PassCompaction)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	for p.Err() == nil {
		runtime.Gosched() // until Close has marked the log closing
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a pass was running", err)
	default:
	}
	if err := p.TrimOldest(segs[0].Base); !errors.Is(err, ErrClosed) {
		t.Fatalf("trim during Close: %v, want ErrClosed", err)
	}
	p.End()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := l.BeginMaintenance(PassRetention); !errors.Is(err, ErrClosed) {
		t.Fatalf("BeginMaintenance after Close: %v", err)
	}
	if _, err := os.Stat(segs[0].Path); err != nil {
		t.Fatalf("segment touched: %v", err)
	}
}
