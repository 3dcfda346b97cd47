package plog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// writtenNotSynced opens an interval-mode log whose syncer never fsyncs on
// its own, appends n single-record batches (each its own drain, so its own
// batch) and returns the log, the segment file and each batch's position
// and size in it, read back with codec.ParseHeader.
func writtenNotSynced(t *testing.T, n int) (*Log, string, []int64, []int64) {
	t.Helper()
	o := DefaultOptions()
	o.Codec = codec.CodecNone
	o.SyncMode = SyncInterval
	o.SyncInterval = time.Hour
	o.VisibleWithin = -1
	dir := t.TempDir()
	l := openLog(t, dir, o)
	for i := range n {
		if _, _, err := l.Append(context.Background(), []codec.Record{{Value: fmt.Appendf(nil, "record %d %0200d", i, i)}}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	path := filepath.Join(dir, segment.LogFile(0))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pos, size []int64
	for p := int64(0); p < int64(len(b)); {
		h, err := codec.ParseHeader(b[p:])
		if err != nil {
			t.Fatalf("batch at %d: %v", p, err)
		}
		pos, size = append(pos, p), append(size, h.Size())
		p += h.Size()
	}
	if len(pos) != n {
		t.Fatalf("%d batches in %s, want %d", len(pos), path, n)
	}
	if h := l.HWM(); h != 0 {
		t.Fatalf("HWM %d before any sync pass, want 0", h)
	}
	return l, path, pos, size
}

// TestVerifyFindsDamageInsideARun damages one batch in the middle of a run
// of back-to-back batches written since the last sync pass (re-read with
// one read): the pass fails with ErrVerify naming that batch's position,
// and the acked records it could not make durable are recorded as a gap,
// never served.
func TestVerifyFindsDamageInsideARun(t *testing.T) {
	l, path, pos, size := writtenNotSynced(t, 5)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of batch 2's records section: its CRC no longer holds.
	if _, err := f.WriteAt([]byte{0xff}, pos[2]+size[2]-3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = l.Sync()
	if !errors.Is(err, ErrVerify) || !errors.Is(err, codec.ErrChecksum) {
		t.Fatalf("sync over a damaged batch: %v, want ErrVerify and codec.ErrChecksum", err)
	}
	if want := fmt.Sprintf("at position %d", pos[2]); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %q", err, want)
	}
	wantGap(t, l, 2)
	l.Close()
}

// TestVerifyFindsAShortFile truncates the segment file inside the last
// batch written since the last sync pass: the re-read comes back short, and
// the pass fails with ErrVerify and codec.ErrTorn, and the acked records
// of the batch are recorded as a gap.
func TestVerifyFindsAShortFile(t *testing.T) {
	l, path, pos, size := writtenNotSynced(t, 3)
	if err := os.Truncate(path, pos[2]+size[2]/2); err != nil {
		t.Fatal(err)
	}
	err := l.Sync()
	if !errors.Is(err, ErrVerify) || !errors.Is(err, codec.ErrTorn) {
		t.Fatalf("sync over a truncated file: %v, want ErrVerify and codec.ErrTorn", err)
	}
	wantGap(t, l, 2)
	l.Close()
}

// wantGap checks that a gap covers offset off after a failed pass.
func wantGap(t *testing.T, l *Log, off int64) {
	t.Helper()
	for _, g := range l.Gaps() {
		if g.FirstOffset <= off && off < g.EndOffset {
			return
		}
	}
	t.Fatalf("no gap covers offset %d after a failed sync pass: %+v", off, l.Gaps())
}
