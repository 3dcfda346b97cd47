package plog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/internal/loopfs"
)

// TestFullDiskRewindsAndServesAgain fills a real 16 MiB ext4 until appends
// fail with ENOSPC: the failed appends' records are never visible (not
// after a restart either), every acked record reads back, the partition
// reports why it failed, and once space is freed the next append succeeds
// without a restart, at an offset never handed out before.
func TestFullDiskRewindsAndServesAgain(t *testing.T) {
	for _, mode := range []SyncMode{SyncEveryWrite, SyncInterval} {
		t.Run(string(mode), func(t *testing.T) {
			mnt := loopfs.Mount(t, 16)
			// Ballast, removed later to free space.
			ballast := filepath.Join(mnt, "ballast")
			if err := os.WriteFile(ballast, bytes.Repeat([]byte{1}, 3<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(mnt, "p0")
			o := testOptions()
			o.Codec = codec.CodecNone
			o.SegmentMaxBytes = 1 << 20
			o.FlushBytes = 20 << 10 // an append of 4 records is 2 batches: a failure can fall between them
			o.SyncMode = mode
			l := openLog(t, dir, o)
			t.Cleanup(func() { l.Close() }) // before the unmount; ErrClosed when already closed
			acks := ackBook{}
			failedValues := map[string]bool{}
			var firstErr error
			for i := 0; firstErr == nil; i++ {
				if i > 10000 {
					t.Fatal("the disk never filled")
				}
				var recs []codec.Record
				for j := range 4 {
					recs = append(recs, codec.Record{Value: append([]byte(fmt.Sprintf("r%d-%d:", i, j)), bytes.Repeat([]byte{'x'}, 16<<10)...)})
				}
				base, _, err := l.Append(context.Background(), recs)
				if err != nil {
					firstErr = err
					for _, r := range recs {
						failedValues[string(r.Value[:16])] = true
					}
					continue
				}
				for j, r := range recs {
					acks[base+int64(j)] = r
				}
			}
			if !strings.Contains(firstErr.Error(), syscall.ENOSPC.Error()) {
				t.Fatalf("append failed with %v, want ENOSPC", firstErr)
			}
			if l.Failure() == nil || !strings.Contains(l.Failure().Error(), syscall.ENOSPC.Error()) {
				t.Fatalf("Failure() = %v, want the ENOSPC reason", l.Failure())
			}
			noneVisible := func(where string, l *Log) {
				t.Helper()
				for _, r := range readAll(t, l) {
					if len(r.Value) >= 16 && failedValues[string(r.Value[:16])] {
						t.Fatalf("%s: a record of a failed append is visible at offset %d", where, r.Offset)
					}
				}
			}
			checkAgainstAcks(t, l, acks, "full disk")
			noneVisible("full disk", l)

			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
			r := codec.Record{Value: []byte("after-freeing-0:space")}
			off, _, err := l.Append(context.Background(), []codec.Record{r})
			if err != nil {
				t.Fatalf("append after freeing space: %v", err)
			}
			if _, used := acks[off]; used {
				t.Fatalf("offset %d handed out twice", off)
			}
			for o := range acks {
				if o >= off {
					t.Fatalf("offset %d acked before, the new record got %d", o, off)
				}
			}
			acks[off] = r
			if l.Failure() != nil {
				t.Fatalf("still failed after a successful append: %v", l.Failure())
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			checkAgainstAcks(t, l, acks, "after freeing")
			noneVisible("after freeing", l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, o)
			checkAgainstAcks(t, l, acks, "after restart")
			noneVisible("after restart", l)
			if rep := l.Report(); len(rep.Truncations) > 0 {
				t.Fatalf("restart truncated:\n%s", linesOf(rep))
			}
		})
	}
}
