package plog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// An every-write append is visible when it returns, in a log switched to
// every-write from interval while it ran; Options reports the live values;
// bad values are refused and change nothing.
func TestSetSyncModeAndSegmentSize(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{Codec: codec.CodecNone, SyncMode: SyncInterval, SegmentMaxBytes: 64 << 20})
	defer l.Close()
	for i := range 5 {
		mustAppend(t, l, codec.Record{Value: fmt.Appendf(nil, "lax %d", i)})
	}
	if err := l.SetSyncMode(SyncEveryWrite); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		base := mustAppend(t, l, codec.Record{Value: fmt.Appendf(nil, "strict %d", i)})
		if h := l.HWM(); h <= base {
			t.Fatalf("every-write append at %d returned with the HWM at %d", base, h)
		}
	}
	if err := l.SetSyncMode("sometimes"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("unknown mode: %v", err)
	}
	if err := l.SetSegmentMaxBytes(0); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("segment size 0: %v", err)
	}
	if o := l.Options(); o.SyncMode != SyncEveryWrite || o.SegmentMaxBytes != 64<<20 {
		t.Fatalf("options after the refusals: %s %d", o.SyncMode, o.SegmentMaxBytes)
	}
	if err := l.SetSegmentMaxBytes(4 << 10); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 3<<10)
	for range 4 {
		mustAppend(t, l, codec.Record{Value: big})
	}
	segs, err := l.Segments()
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 4 {
		t.Fatalf("%d segments after four 3 KiB appends with a 4 KiB limit, want a roll before each", len(segs))
	}
	if o := l.Options(); o.SegmentMaxBytes != 4<<10 {
		t.Fatalf("Options: segment size %d", o.SegmentMaxBytes)
	}
}

// Appends from many goroutines while the sync mode flips back and forth
// are all acked, get distinct contiguous offsets, and all become visible
// and readable in order (run with -race).
func TestSyncModeFlipsUnderLoad(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, Options{Codec: codec.CodecNone})
	const writers, each = 4, 50
	var wg sync.WaitGroup
	stop := make(chan struct{})
	flipped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				flipped <- n
				return
			default:
			}
			m := SyncInterval
			if n%2 == 1 {
				m = SyncEveryWrite
			}
			if err := l.SetSyncMode(m); err != nil {
				t.Error(err)
			}
			n++
		}
	}()
	seen := make([][]int64, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				base, _, err := l.Append(context.Background(), []codec.Record{{Value: fmt.Appendf(nil, "%d/%d", w, i)}})
				if err != nil {
					t.Error(err)
					return
				}
				seen[w] = append(seen[w], base)
			}
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("%d sync mode changes during %d appends", <-flipped, writers*each)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	offsets := map[int64]bool{}
	for _, s := range seen {
		for _, o := range s {
			if offsets[o] {
				t.Fatalf("offset %d handed out twice", o)
			}
			offsets[o] = true
		}
	}
	if h := l.HWM(); h != writers*each {
		t.Fatalf("HWM %d after %d appends", h, writers*each)
	}
	recs := readAll(t, l)
	if len(recs) != writers*each {
		t.Fatalf("read %d records, want %d", len(recs), writers*each)
	}
	for i, r := range recs {
		if r.Offset != int64(i) {
			t.Fatalf("record %d has offset %d", i, r.Offset)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
