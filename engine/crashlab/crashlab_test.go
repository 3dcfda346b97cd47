package crashlab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// fixture writes a partition with the real partition log: batches of 10
// records, half with keys k0..k4 that every batch repeats (so compaction has
// superseded records to drop), half with keys that never repeat,
// in segments small enough to roll several times, then closes it cleanly
// (snapshot and hwm written). It returns the directory and the record count.
func fixture(t testing.TB, c codec.Codec, batches int) (string, int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p00000")
	l, err := plog.Open(dir, plog.Options{Topic: "orders", Codec: c, SegmentMaxBytes: 2048, IndexIntervalBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for b := 0; b < batches; b++ {
		recs := make([]codec.Record, 10)
		for i := range recs {
			key := fmt.Sprintf("k%d", i) // repeats in every batch
			if i >= 5 {
				key = fmt.Sprintf("u%d-%d", b, i) // never repeats
			}
			recs[i] = codec.Record{Key: []byte(key), Value: []byte(fmt.Sprintf(`{"batch":%d,"i":%d,"pad":"%s"}`, b, i, strings.Repeat("x", 20)))}
		}
		if _, _, err := l.Append(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
		n += 10
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, n
}

// checksums is the sha256 of every file in dir, by name.
func checksums(t testing.TB, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(s[:])
	}
	return out
}

func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("the original partition's files changed: %d before, %d after", len(before), len(after))
	}
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("original file %s changed (sha256 %s -> %s)", name, sum, after[name])
		}
	}
}

func TestEveryFaultOnTheRealRecovery(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		t.Run(c.String(), func(t *testing.T) { testEveryFault(t, c) })
	}
}

func testEveryFault(t *testing.T, c codec.Codec) {
	dir, total := fixture(t, c, 30)
	segs, err := Layout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 3 {
		t.Fatalf("fixture has %d segments, want at least 3 (sealed ones for the compaction crash)", len(segs))
	}
	active := segs[len(segs)-1]
	if len(active.Batches) < 2 {
		t.Fatalf("active segment has %d batches, want 2+ so a flip in its first is mid-file", len(active.Batches))
	}
	first := segs[0]
	before := checksums(t, dir)

	cases := []struct {
		fault string
		check func(t *testing.T, r *Result)
	}{
		{"cut", func(t *testing.T, r *Result) {
			last := active.Batches[len(active.Batches)-1]
			if len(r.Faulted.Truncations) != 1 || r.Faulted.Truncations[0].Position != last.Pos {
				t.Fatalf("want one truncation at the last batch %d, got %+v", last.Pos, r.Faulted.Truncations)
			}
			if r.Faulted.Degraded || r.Truncated != 10 || r.Survivors != total-10 {
				t.Errorf("degraded %v, truncated %d, survivors %d of %d", r.Faulted.Degraded, r.Truncated, r.Survivors, total)
			}
			want := OffsetRange{total - 10, total}
			if len(r.Lost) != 1 || r.Lost[0] != want {
				t.Errorf("lost %v, want %v", r.Lost, want)
			}
			if r.Faulted.RecoveredEnd != total-10 || r.WasVisible != 10 {
				t.Errorf("recovered end %d, was visible %d", r.Faulted.RecoveredEnd, r.WasVisible)
			}
			if !strings.Contains(r.Verdict, "torn tail truncated") {
				t.Errorf("verdict %q", r.Verdict)
			}
		}},
		{fmt.Sprintf("cut:%d", active.Batches[1].Pos), func(t *testing.T, r *Result) {
			// A cut exactly on a batch boundary leaves whole batches: no
			// torn bytes for recovery to remove, the rest is simply gone.
			if len(r.Faulted.Truncations) != 0 || r.Faulted.Degraded {
				t.Fatalf("truncations %+v degraded %v", r.Faulted.Truncations, r.Faulted.Degraded)
			}
			if r.Faulted.RecoveredEnd >= total || r.Truncated != total-r.Faulted.RecoveredEnd {
				t.Errorf("end %d, truncated %d", r.Faulted.RecoveredEnd, r.Truncated)
			}
		}},
		{"flip", func(t *testing.T, r *Result) {
			// The clean close left a snapshot covering the active segment:
			// recovery trusts it and the first read finds the damage.
			b := active.Batches[0]
			if r.Faulted.Degraded || len(r.Faulted.Corrupt) != 0 || r.Faulted.Path != recovery.PathSnapshot {
				t.Fatalf("recovery saw %+v on the %s path; the snapshot path does not read checksummed data", r.Faulted.Corrupt, r.Faulted.Path)
			}
			if len(r.FoundOnRead) != 1 {
				t.Fatalf("found on read: %+v", r.FoundOnRead)
			}
			cr := r.FoundOnRead[0]
			if cr.StartPos != b.Pos || cr.EndPos != active.Batches[1].Pos || cr.Records() != 10 {
				t.Errorf("range found on read %+v, want bytes [%d, %d), 10 offsets", cr, b.Pos, active.Batches[1].Pos)
			}
			if r.Skipped != 10 || r.Truncated != 0 || r.Survivors != total-10 {
				t.Errorf("skipped %d truncated %d survivors %d", r.Skipped, r.Truncated, r.Survivors)
			}
			if !strings.Contains(r.Verdict, "first read") {
				t.Errorf("verdict %q", r.Verdict)
			}
		}},
		{fmt.Sprintf("flip:SEGMENT=%d:%d:2", first.Base, first.Batches[0].Pos+4), func(t *testing.T, r *Result) {
			// The CRC field of a sealed segment's first batch: the header
			// still parses, so the snapshot path's index check passes it.
			if len(r.FoundOnRead) != 1 || r.FoundOnRead[0].StartPos != 0 || r.FoundOnRead[0].Segment != segment.LogFile(first.Base) {
				t.Fatalf("found on read %+v", r.FoundOnRead)
			}
			if !strings.Contains(r.Applied, "header field crc32c") {
				t.Errorf("applied %q does not name the crc32c field", r.Applied)
			}
			if r.Skipped != 10 || r.Survivors != total-10 {
				t.Errorf("skipped %d survivors %d", r.Skipped, r.Survivors)
			}
		}},
		{"index:delete", func(t *testing.T, r *Result) {
			rebuilt(t, r, active.Base)
		}},
		{fmt.Sprintf("index:corrupt:SEGMENT=%d", first.Base), func(t *testing.T, r *Result) {
			rebuilt(t, r, first.Base)
		}},
		{"snapshot:delete", func(t *testing.T, r *Result) {
			if r.Healthy.Path == recovery.PathFullScan || r.Faulted.Path != recovery.PathFullScan || r.Faulted.SnapshotNote != "no snapshot" {
				t.Fatalf("healthy path %s, faulted %s (%s)", r.Healthy.Path, r.Faulted.Path, r.Faulted.SnapshotNote)
			}
			intact(t, r)
		}},
		{"snapshot:corrupt", func(t *testing.T, r *Result) {
			if r.Faulted.Path != recovery.PathFullScan || !strings.Contains(r.Faulted.SnapshotNote, "unreadable") {
				t.Fatalf("faulted path %s (%s)", r.Faulted.Path, r.Faulted.SnapshotNote)
			}
			intact(t, r)
		}},
		{"hwm:delete", func(t *testing.T, r *Result) {
			if r.Faulted.PersistedHWM != -1 || r.Faulted.HiddenTail != total || r.Faulted.HWM != total {
				t.Fatalf("persisted %d hidden %d hwm %d", r.Faulted.PersistedHWM, r.Faulted.HiddenTail, r.Faulted.HWM)
			}
			intact(t, r)
		}},
		{"hwm:corrupt", func(t *testing.T, r *Result) {
			if r.Faulted.PersistedHWM != -1 || !strings.Contains(strings.Join(r.Faulted.Notes, "\n"), "hwm file unreadable") {
				t.Fatalf("persisted %d notes %q", r.Faulted.PersistedHWM, r.Faulted.Notes)
			}
			intact(t, r)
		}},
		{"hwm:ahead", func(t *testing.T, r *Result) {
			// Offsets up to the persisted HWM were handed out: the log end
			// stays there, the missing ones a reported gap.
			if r.Faulted.PersistedHWM != total+hwmAheadBy || r.Faulted.HWM != total+hwmAheadBy || r.Faulted.HiddenTail != 0 ||
				len(r.Faulted.Gaps) != 1 || r.Faulted.Gaps[0].FirstOffset != total || r.Faulted.Gaps[0].EndOffset != total+hwmAheadBy {
				t.Fatalf("persisted %d hwm %d hidden %d gaps %+v", r.Faulted.PersistedHWM, r.Faulted.HWM, r.Faulted.HiddenTail, r.Faulted.Gaps)
			}
			if !strings.Contains(r.Verdict, "offsets are never reused") || !strings.Contains(r.Verdict, "lost offset range") {
				t.Errorf("verdict %q", r.Verdict)
			}
			intact(t, r)
		}},
		{"orphan-tmp", func(t *testing.T, r *Result) {
			// Named as compaction names its temp files: for a segment.
			if len(r.Faulted.TempFilesRemoved) != 1 || !regexp.MustCompile(`^\.tmp-compact-[0-9]{20}-log-`).MatchString(r.Faulted.TempFilesRemoved[0]) {
				t.Fatalf("temp files removed %v", r.Faulted.TempFilesRemoved)
			}
			intact(t, r)
		}},
		{"compaction-crash", func(t *testing.T, r *Result) {
			rebuilt(t, r, first.Base)
			if len(r.Faulted.TempFilesRemoved) != 1 || !strings.Contains(r.Faulted.TempFilesRemoved[0], "-index-") {
				t.Errorf("temp files removed %v", r.Faulted.TempFilesRemoved)
			}
			if r.Compacted == 0 || r.Truncated != 0 || r.Skipped != 0 || len(r.Changed) != 0 || r.Faulted.Degraded {
				t.Errorf("compacted %d truncated %d skipped %d changed %v degraded %v", r.Compacted, r.Truncated, r.Skipped, r.Changed, r.Faulted.Degraded)
			}
			if r.Survivors+r.Compacted != total {
				t.Errorf("survivors %d + compacted %d != %d", r.Survivors, r.Compacted, total)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			f, err := ParseFault(tc.fault)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(dir, f, Options{Topic: "orders", Label: "topics/orders/p00000", ScratchDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if r.HealthyRecords != total || r.Healthy.NeedsWork() {
				t.Fatalf("healthy copy: %d records, report %s", r.HealthyRecords, r.Healthy.Summary())
			}
			if len(r.Changed) != 0 {
				t.Fatalf("records changed: %v", r.Changed)
			}
			for _, l := range append(r.Healthy.Lines(), r.Faulted.Lines()...) {
				if strings.Contains(l, os.TempDir()) {
					t.Errorf("a report line shows a scratch path: %q", l)
				}
			}
			tc.check(t, r)
			if t.Failed() {
				t.Logf("applied: %s\nverdict: %s\n%s", r.Applied, r.Verdict, strings.Join(SideBySide("healthy", r.Healthy.Lines(), "faulted", r.Faulted.Lines(), 0), "\n"))
			}
			sameFiles(t, before, checksums(t, dir))
		})
	}
}

// Without a snapshot (a crash, not a clean close) recovery scans every
// segment and reports mid-file corruption itself: degraded, with the range,
// nothing truncated.
func TestFlipFullScanDegraded(t *testing.T) {
	dir, total := fixture(t, codec.CodecZstd, 30)
	if err := os.Remove(filepath.Join(dir, recovery.SnapshotFile)); err != nil {
		t.Fatal(err)
	}
	segs, err := Layout(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := checksums(t, dir)
	for _, sg := range []SegmentLayout{segs[0], segs[len(segs)-1]} {
		t.Run(fmt.Sprint(sg.Base), func(t *testing.T) {
			b := sg.Batches[0]
			r, err := Run(dir, Fault{Kind: Flip, Segment: sg.Base, Pos: b.Pos + codec.HeaderLen + 3, Bit: 5}, Options{ScratchDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Faulted.Degraded || len(r.Faulted.Corrupt) != 1 || r.Faulted.Path != recovery.PathFullScan {
				t.Fatalf("path %s degraded %v corrupt %+v", r.Faulted.Path, r.Faulted.Degraded, r.Faulted.Corrupt)
			}
			cr := r.Faulted.Corrupt[0]
			if cr.Segment != segment.LogFile(sg.Base) || cr.StartPos != b.Pos || cr.EndPos != sg.Batches[1].Pos || cr.Records() != 10 {
				t.Errorf("corrupt range %+v", cr)
			}
			if len(r.Faulted.Truncations) != 0 || r.Skipped != 10 || r.Truncated != 0 || r.Survivors != total-10 || len(r.FoundOnRead) != 0 {
				t.Errorf("truncations %v skipped %d truncated %d survivors %d on read %v", r.Faulted.Truncations, r.Skipped, r.Truncated, r.Survivors, r.FoundOnRead)
			}
			if !strings.Contains(r.Verdict, "DEGRADED") {
				t.Errorf("verdict %q", r.Verdict)
			}
		})
	}
	sameFiles(t, before, checksums(t, dir))
}

// rebuilt checks that the index of base was rebuilt and nothing was lost.
func rebuilt(t *testing.T, r *Result, base int64) {
	t.Helper()
	found := false
	for _, p := range r.Faulted.IndexesRebuilt {
		found = found || p == segment.IndexFile(base)
	}
	if !found {
		t.Fatalf("index of %d not rebuilt: %v", base, r.Faulted.IndexesRebuilt)
	}
	if r.Truncated != 0 || r.Skipped != 0 || r.Faulted.Degraded {
		t.Errorf("truncated %d skipped %d degraded %v", r.Truncated, r.Skipped, r.Faulted.Degraded)
	}
}

// intact checks that every record survives and is visible.
func intact(t *testing.T, r *Result) {
	t.Helper()
	if len(r.Lost) != 0 || r.Survivors != r.HealthyRecords || r.Visible != r.Survivors {
		t.Errorf("lost %v, survivors %d of %d, visible %d", r.Lost, r.Survivors, r.HealthyRecords, r.Visible)
	}
	if !strings.Contains(r.Verdict, "no record lost") {
		t.Errorf("verdict %q", r.Verdict)
	}
}

// With the hide policy a lost hwm hides the whole log until the next commit.
func TestHiddenTailWithHidePolicy(t *testing.T) {
	dir, total := fixture(t, codec.CodecZstd, 5)
	r, err := Run(dir, Fault{Kind: HWMDelete, Segment: -1, Pos: -1}, Options{HiddenTail: recovery.HiddenTailHide, ScratchDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Faulted.HWM != 0 || r.Faulted.HiddenTail != total || r.Hidden != total || r.Visible != 0 {
		t.Fatalf("hwm %d hidden tail %d hidden %d visible %d", r.Faulted.HWM, r.Faulted.HiddenTail, r.Hidden, r.Visible)
	}
	if !strings.Contains(r.Verdict, "hidden until the next commit") {
		t.Errorf("verdict %q", r.Verdict)
	}
}

func TestNotApplicable(t *testing.T) {
	dir, _ := fixture(t, codec.CodecNone, 1) // one segment only
	before := checksums(t, dir)
	for _, s := range []string{"compaction-crash", "cut:999999", "flip:999999:1", "index:delete:SEGMENT=77"} {
		f, err := ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(dir, f, Options{ScratchDir: t.TempDir()})
		if !errors.Is(err, ErrNotApplicable) {
			t.Errorf("%s: got %v, want ErrNotApplicable", s, err)
		}
	}
	empty := t.TempDir()
	if _, err := Run(empty, Fault{Kind: Cut, Segment: -1, Pos: -1}, Options{ScratchDir: t.TempDir()}); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("cut of an empty directory: %v", err)
	}
	sameFiles(t, before, checksums(t, dir))
}

func TestScratchRemoved(t *testing.T) {
	dir, _ := fixture(t, codec.CodecNone, 2)
	scratch := t.TempDir()
	if _, err := Run(dir, Fault{Kind: SnapshotDelete, Segment: -1, Pos: -1}, Options{ScratchDir: scratch}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(scratch); len(ents) != 0 {
		t.Errorf("scratch copies left behind: %v", ents)
	}
}
