package recovery_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/recovery"
)

// writeLog fills a partition with n records through the partition log, in
// small segments, and closes it cleanly.
func writeLog(t *testing.T, dir string, n int, c codec.Codec) {
	t.Helper()
	opts := plog.DefaultOptions()
	opts.SegmentMaxBytes = 16 << 10
	opts.IndexIntervalBytes = 1024
	opts.Codec = c
	l, err := plog.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 10 {
		recs := make([]codec.Record, 10)
		for j := range recs {
			recs[j] = codec.Record{Key: []byte(fmt.Sprintf("k%d", (i+j)%13)), Value: []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i+j, strings.Repeat("x", (i+j)%50)))}
		}
		if _, _, err := l.Append(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLogWrittenPartition: a partition written and closed by the partition
// log recovers by the snapshot path with nothing to do, and by a full scan
// with nothing to repair: recovery and the segment writer agree on the
// index spacing and on every byte.
func TestLogWrittenPartition(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		dir := t.TempDir()
		writeLog(t, dir, 3000, c)
		ropts := recovery.Options{IndexIntervalBytes: 1024, ReadOnly: true}
		res, err := recovery.Run(dir, ropts)
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		if rep.Path != recovery.PathSnapshot || rep.NeedsWork() || res.LEO != 3000 || res.HWM != 3000 || rep.PersistedHWM != 3000 {
			t.Fatalf("%v: after a clean close:\n%s", c, strings.Join(rep.Lines(), "\n"))
		}
		if rep.SegmentsChecked < 3 {
			t.Fatalf("only %d segments: the test wants several", rep.SegmentsChecked)
		}
		if err := os.Remove(filepath.Join(dir, recovery.SnapshotFile)); err != nil {
			t.Fatal(err)
		}
		res, err = recovery.Run(dir, ropts)
		if err != nil {
			t.Fatal(err)
		}
		rep = res.Report
		if rep.Path != recovery.PathFullScan || len(rep.IndexesRebuilt)+len(rep.Truncations)+len(rep.Corrupt) > 0 || res.LEO != 3000 || rep.BatchesChecked != 300 {
			t.Fatalf("%v: full scan:\n%s", c, strings.Join(rep.Lines(), "\n"))
		}
		// The log opens on it again and reads everything back.
		l, err := plog.Open(dir, plog.Options{IndexIntervalBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		next, seen := int64(0), 0
		for next < 3000 {
			rr, err := l.Read(next, 500, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if len(rr.Records) == 0 {
				t.Fatalf("read stalled at %d", next)
			}
			for _, r := range rr.Records {
				if r.Offset != next || !strings.Contains(string(r.Value), fmt.Sprintf(`"i":%d,`, next)) {
					t.Fatalf("offset %d: %+v", next, r)
				}
				next++
				seen++
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
