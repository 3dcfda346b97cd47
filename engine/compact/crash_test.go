package compact

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/segment"
)

// The crash windows of seed 002 §8, reproduced by file surgery: the state a
// crash at each point of the copy-and-swap commit leaves on disk is built
// from a real pass, then the partition is recovered and read back.

// dirtyLog builds a log full of superseded records and tombstones.
func dirtyLog(t *testing.T, dir string, c codec.Codec) (*plog.Log, *model) {
	t.Helper()
	l := openLog(t, dir, logOptions(c))
	m := newModel()
	appendRandom(t, l, m, rand.New(rand.NewPCG(11, 13)), 2500, 40)
	return l, m
}

// stagePass runs pass 1 and the rewrite of the first dirty sealed segment
// the way Run does, without committing it. It returns that segment and the
// temp files, with the maintenance pass still open.
func stagePass(t *testing.T, l *plog.Log) (*plog.Pass, plog.SegmentInfo, segmentOutcome) {
	t.Helper()
	o := Options{Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}.withDefaults()
	pass, err := l.BeginMaintenance(plog.PassCompaction)
	if err != nil {
		t.Fatal(err)
	}
	c := &compactor{ctx: context.Background(), pass: pass, dir: l.Dir(), opts: o, codec: l.Options().Codec,
		index: l.Options().IndexIntervalBytes, cutoff: o.Now().UnixMilli() - o.TombstoneRetention.Milliseconds()}
	sealed, err := pass.Sealed()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.buildMap(pass, sealed, &Result{}); err != nil {
		t.Fatal(err)
	}
	c.d.markExpired(c.cutoff)
	for i, s := range sealed {
		if c.d.stats[i].dropRecords == 0 {
			continue
		}
		out, err := c.rewrite(s.Path, s.Bytes, s.Base)
		if err != nil {
			t.Fatal(err)
		}
		if out.survivors == 0 || out.logTmp == "" {
			continue
		}
		return pass, s, out
	}
	t.Fatal("no segment to rewrite")
	return nil, plog.SegmentInfo{}, segmentOutcome{}
}

func reopenAndVerify(t *testing.T, dir string, c codec.Codec, m *model) *plog.Log {
	t.Helper()
	l := openLog(t, dir, logOptions(c))
	verify(t, l, m)
	return l
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A crash before the data rename leaves both temp files: recovery deletes
// them and the old segment is intact.
func TestCrashBeforeSwapLeavesOrphanTemps(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			l, m := dirtyLog(t, dir, c)
			pass, _, out := stagePass(t, l)
			pass.End()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			orphans := tempFiles(t, dir)
			if len(orphans) != 2 || !slices.Contains(orphans, filepath.Base(out.logTmp)) || !slices.Contains(orphans, filepath.Base(out.indexTmp)) {
				t.Fatalf("temp files before recovery: %v", orphans)
			}
			l = reopenAndVerify(t, dir, c, m)
			defer l.Close()
			if left := tempFiles(t, dir); len(left) != 0 {
				t.Fatalf("temp files after recovery: %v", left)
			}
			removed := l.Report().TempFilesRemoved
			slices.Sort(removed)
			slices.Sort(orphans)
			if !slices.Equal(removed, orphans) {
				t.Fatalf("report lists %v removed, want %v", removed, orphans)
			}
			if res := compactOnce(t, l, m, Options{}, 48*time.Hour); res.Outcome != OutcomeCompacted {
				t.Fatalf("pass after recovery: %+v", res)
			}
			verify(t, l, m)
		})
	}
}

// A crash between the data rename and the index rename leaves the new data
// under the old index (and the index temp file).
func TestCrashBetweenDataAndIndexRename(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		for _, snapshot := range []bool{true, false} {
			name := c.String() + "/snapshot"
			if !snapshot {
				name = c.String() + "/full-scan"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				l, m := dirtyLog(t, dir, c)
				pass, seg, out := stagePass(t, l)
				oldIndex, err := os.ReadFile(filepath.Join(dir, segment.IndexFile(seg.Base)))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(out.logTmp, seg.Path); err != nil {
					t.Fatal(err)
				}
				pass.End()
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if !snapshot {
					os.Remove(filepath.Join(dir, "snapshot"))
				}
				if got, _ := os.ReadFile(filepath.Join(dir, segment.IndexFile(seg.Base))); string(got) != string(oldIndex) {
					t.Fatal("surgery did not leave the old index in place")
				}
				l = reopenAndVerify(t, dir, c, m)
				defer l.Close()
				checkRecovered(t, l, seg, out)
			})
		}
	}
}

// After a clean compaction, an index file reverted to its pre-compaction
// bytes must be caught by recovery's per-entry check.
func TestRevertedIndexAfterCleanCompaction(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		for _, snapshot := range []bool{true, false} {
			name := c.String() + "/snapshot"
			if !snapshot {
				name = c.String() + "/full-scan"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				l, m := dirtyLog(t, dir, c)
				sealed, err := l.Segments()
				if err != nil {
					t.Fatal(err)
				}
				oldIndex := map[int64][]byte{}
				for _, s := range sealed[:len(sealed)-1] {
					b, err := os.ReadFile(filepath.Join(dir, segment.IndexFile(s.Base)))
					if err != nil {
						t.Fatal(err)
					}
					oldIndex[s.Base] = b
				}
				res := compactOnce(t, l, m, Options{MinGainRatio: 1e-9}, 48*time.Hour)
				if res.SegmentsRewritten == 0 {
					t.Fatalf("nothing rewritten: %+v", res)
				}
				after, _ := l.Segments()
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if !snapshot {
					os.Remove(filepath.Join(dir, "snapshot"))
				}
				reverted := 0
				for _, s := range after[:len(after)-1] {
					if !s.Sparse {
						continue
					}
					if err := os.WriteFile(filepath.Join(dir, segment.IndexFile(s.Base)), oldIndex[s.Base], 0o644); err != nil {
						t.Fatal(err)
					}
					reverted++
				}
				if reverted == 0 {
					t.Fatal("no rewritten segment to revert")
				}
				l = reopenAndVerify(t, dir, c, m)
				defer l.Close()
				for _, s := range after[:len(after)-1] {
					if s.Sparse {
						checkIndexMatchesData(t, dir, s.Base)
						if !slices.Contains(l.Report().IndexesRebuilt, filepath.Join(dir, segment.IndexFile(s.Base))) {
							t.Fatalf("recovery rebuilt %v, not the reverted index of segment %d", l.Report().IndexesRebuilt, s.Base)
						}
					}
				}
			})
		}
	}
}

// checkRecovered checks that the segment holds the rewrite and that its
// index on disk now describes the rewritten data.
func checkRecovered(t *testing.T, l *plog.Log, seg plog.SegmentInfo, out segmentOutcome) {
	t.Helper()
	if rebuilt := l.Report().IndexesRebuilt; !slices.Contains(rebuilt, filepath.Join(l.Dir(), segment.IndexFile(seg.Base))) {
		t.Fatalf("recovery rebuilt %v, not the stale index of segment %d", rebuilt, seg.Base)
	}
	segs, err := l.Segments()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		if s.Base == seg.Base {
			if !s.Sparse || s.Records != out.survivors || s.Bytes != out.newSize {
				t.Fatalf("recovered segment %+v, want the rewrite: %d records, %d bytes", s, out.survivors, out.newSize)
			}
			checkIndexMatchesData(t, l.Dir(), s.Base)
			return
		}
	}
	t.Fatalf("segment %d gone after recovery", seg.Base)
}

// checkIndexMatchesData checks every entry of the segment's .index file
// against the batch header at its position.
func checkIndexMatchesData(t *testing.T, dir string, base int64) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, segment.IndexFile(base)))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := segment.DecodeIndex(raw)
	if err != nil {
		t.Fatalf("index of %d: %v", base, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, segment.LogFile(base)))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatalf("index of %d is empty", base)
	}
	for i, e := range entries {
		h, err := codec.ParseHeader(data[e.RelPosition:])
		if err != nil || h.BaseOffset != base+int64(e.RelOffset) {
			t.Fatalf("index of %d, entry %d (%+v): header %+v, %v", base, i, e, h, err)
		}
	}
}

// A partition with a corrupt range is left alone.
func TestDegradedPartitionIsNotCompacted(t *testing.T) {
	dir := t.TempDir()
	l, m := dirtyLog(t, dir, codec.CodecNone)
	segs, _ := l.Segments()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside the first batch's records of the second segment.
	path := filepath.Join(dir, segment.LogFile(segs[1].Base))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[codec.HeaderLen+10] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "snapshot")) // full scan: the damage is found at open
	l = openLog(t, dir, logOptions(codec.CodecNone))
	defer l.Close()
	if !l.Degraded() {
		t.Fatal("surgery did not degrade the partition")
	}
	before := dirState(t, dir)
	res := compactOnce(t, l, m, Options{MinGainRatio: 1e-9}, 48*time.Hour)
	if res.Outcome != OutcomeDegraded {
		t.Fatalf("pass over a degraded partition: %+v", res)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("a pass over a degraded partition changed files:\n%s\nbecame\n%s", before, after)
	}
}
