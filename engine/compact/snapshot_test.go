package compact

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// checkSnapshot checks that dir's recovery snapshot describes a prefix of
// its active segment exactly: the batches in its first ActiveSize bytes end
// at offset LEO. It is called between passes, so no rewrite can change the
// segment's bytes while it reads them (the writer only appends).
func checkSnapshot(t *testing.T, dir string, active int64) {
	t.Helper()
	s, err := recovery.ReadSnapshot(dir)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if s.ActiveBase != active {
		return // a roll since: that snapshot was written by the writer
	}
	b, err := os.ReadFile(filepath.Join(dir, segment.LogFile(active)))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) < s.ActiveSize {
		t.Fatalf("snapshot %+v: active segment holds only %d bytes", s, len(b))
	}
	end, pos := s.ActiveBase, int64(0)
	for pos < s.ActiveSize {
		h, err := codec.ParseHeader(b[pos:])
		if err != nil {
			t.Fatalf("snapshot %+v: batch at position %d: %v", s, pos, err)
		}
		end, _ = h.NextOffset()
		pos += h.Size()
	}
	if pos != s.ActiveSize || end != s.LEO {
		t.Fatalf("snapshot %+v: the active segment's batches up to position %d end at offset %d", s, pos, end)
	}
}

// A pass that deletes an emptied segment rewrites the recovery snapshot
// while the writer goes on appending and the syncer goes on making batches
// durable. The snapshot must pair the log end with the active segment's
// durable size as one state: a pair taken mid-sync (the segment's size
// already past a batch whose offsets the log end does not cover yet) is a
// checkpoint recovery cannot trust, and when the active segment was new it
// is refused outright, failing the pass after its segment is gone.
func TestSegmentDeletionSnapshotIsConsistentUnderAppends(t *testing.T) {
	dir := t.TempDir()
	o := logOptions(codec.CodecNone)
	o.SegmentMaxBytes = 2 << 10
	o.IndexIntervalBytes = 256
	l := openLog(t, dir, o)
	defer l.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Several appenders, so that one sync pass verifies several batches
	// and the syncer spends longer between the first of them becoming
	// durable and the log end moving over all of them.
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ; i += 8 {
				select {
				case <-stop:
					return
				default:
				}
				// Two keys rewritten over and over: every sealed segment
				// but the newest is soon wholly superseded.
				recs := []codec.Record{{Key: []byte(fmt.Sprintf("k%d", i%2)), Value: []byte(fmt.Sprintf("v%d", i))}}
				if _, _, err := l.Append(context.Background(), recs); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()

	copts := Options{MinGainRatio: 1e-9, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}
	deleted := 0
	for pass := 0; deleted < 200 && pass < 100000; pass++ {
		<-l.NotifyC() // the log grew since the last pass
		res, err := Run(context.Background(), l, copts)
		if err != nil {
			t.Fatalf("pass %d (%d segments deleted before): %v", pass, deleted, err)
		}
		if res.SegmentsDeleted == 0 {
			continue
		}
		deleted += res.SegmentsDeleted
		segs, err := l.Segments()
		if err != nil {
			t.Fatal(err)
		}
		checkSnapshot(t, dir, segs[len(segs)-1].Base)
	}
	if deleted == 0 {
		t.Fatal("no pass deleted a segment")
	}
	t.Logf("%d segments deleted", deleted)
}
