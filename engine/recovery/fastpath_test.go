package recovery

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// lastIndexedBatch returns the batch number of s's last index entry.
func lastIndexedBatch(t *testing.T, s *fixSeg) int {
	t.Helper()
	for i := len(s.starts) - 1; i >= 0; i-- {
		if indexed(s, i) {
			return i
		}
	}
	t.Fatalf("segment %d has no index entry", s.base)
	return 0
}

// TestFastPathNoticesSealedDamage damages a sealed segment in the ways the
// snapshot fast path must still notice although it reads only the headers at
// a segment's first and last index entries and after the last one: the file
// cut (inside its tail, or before its last index entry), the header at the
// last entry damaged, the file grown (garbage, or a valid batch past the
// segment's end), or gone. The fast path must scan
// the segment and come to exactly what the full scan (the same files without
// a snapshot) reports.
func TestFastPathNoticesSealedDamage(t *testing.T) {
	f := defaultFixture(t)
	s1 := f.segs[1]
	log1 := s1.name() + ".log"
	li := lastIndexedBatch(t, s1)
	if li == 0 {
		t.Fatal("fixture: one index entry")
	}
	cases := []struct {
		name   string
		gone   bool // the segment's files are gone: the manifest notices, nothing is scanned
		damage func(m map[string][]byte)
	}{
		{"cut inside the last batch", false, func(m map[string][]byte) { m[log1] = m[log1][:len(s1.data)-10] }},
		{"cut before the last index entry", false, func(m map[string][]byte) { m[log1] = m[log1][:s1.starts[li]-5] }},
		{"cut just after the last index entry's header", false, func(m map[string][]byte) { m[log1] = m[log1][:s1.starts[li]+codec.HeaderLen] }},
		{"header at the last index entry damaged", false, func(m map[string][]byte) { m[log1][s1.starts[li]+12] ^= 0x01 }},
		{"garbage appended", false, func(m map[string][]byte) {
			m[log1] = append(m[log1], bytes.Repeat([]byte{0x5a}, 100)...)
		}},
		{"a valid batch appended past the segment's end", false, func(m map[string][]byte) {
			m[log1] = appendBatch(t, m[log1], 200, 3, codec.CodecNone)
		}},
		{"segment gone", true, func(m map[string][]byte) {
			delete(m, log1)
			delete(m, s1.name()+".index")
		}},
	}
	opts := Options{IndexIntervalBytes: testInterval}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(snapshot bool) *Result {
				t.Helper()
				m := f.files(t, snapshot)
				man, err := EncodeManifest(Manifest{Segments: []int64{0, 100, 200}})
				if err != nil {
					t.Fatal(err)
				}
				m[ManifestFile] = man
				c.damage(m)
				res, _ := runImage(t, m, opts)
				return res
			}
			fast, full := run(true), run(false)
			rep := &fast.Report
			where := "\n" + strings.Join(rep.Lines(), "\n") + "\nfull scan:\n" + strings.Join(full.Report.Lines(), "\n")
			if rep.Path != PathSnapshot || !rep.Degraded {
				t.Fatalf("fast path %q, degraded %v: want the snapshot path to notice the damage%s", rep.Path, rep.Degraded, where)
			}
			if !c.gone && !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, log1) && strings.Contains(n, "segment scanned") }) {
				t.Fatalf("no note that %s was scanned%s", log1, where)
			}
			if fast.LEO != full.LEO || fast.HWM != full.HWM {
				t.Fatalf("fast path: leo %d hwm %d; full scan: leo %d hwm %d%s", fast.LEO, fast.HWM, full.LEO, full.HWM, where)
			}
			base := func(rs []CorruptRange) []CorruptRange {
				out := slices.Clone(rs)
				for i := range out {
					out[i].Segment = filepath.Base(out[i].Segment)
				}
				return out
			}
			if !slices.Equal(base(rep.Corrupt), base(full.Report.Corrupt)) || !slices.Equal(rep.Gaps, full.Report.Gaps) ||
				!slices.Equal(rep.MissingSegments, full.Report.MissingSegments) {
				t.Fatalf("fast path and full scan disagree on corrupt ranges, gaps or missing segments%s", where)
			}
		})
	}
}

// TestFastPathLeavesMidSegmentHeaders: a batch header between a sealed
// segment's first and last index entries is not read at open any more
// (reading one header per index entry reads the whole store on a cold page
// cache). The open takes the clean snapshot path; the damage is found by the
// read of that batch, which checks its CRC, and by `pulse verify`
// (CheckSegmentFile), and the full scan still reports it.
func TestFastPathLeavesMidSegmentHeaders(t *testing.T) {
	f := defaultFixture(t)
	s1 := f.segs[1]
	log1 := s1.name() + ".log"
	mid := -1
	for i := 1; i < lastIndexedBatch(t, s1); i++ {
		if indexed(s1, i) {
			mid = i
			break
		}
	}
	if mid < 0 {
		t.Fatal("fixture: no index entry between the first and the last")
	}
	opts := Options{IndexIntervalBytes: testInterval}
	for _, snapshot := range []bool{true, false} {
		m := f.files(t, snapshot)
		m[log1][s1.starts[mid]+12] ^= 0x01 // the base offset of an indexed batch
		res, dir := runImage(t, m, opts)
		rep := &res.Report
		if snapshot && (rep.Path != PathSnapshot || rep.NeedsWork()) {
			t.Fatalf("with a snapshot: want a clean open, the damage left to reads and verify\n%s", strings.Join(rep.Lines(), "\n"))
		}
		if !snapshot && (len(rep.Corrupt) != 1 || rep.Corrupt[0].StartPos != s1.starts[mid]) {
			t.Fatalf("full scan: want the damaged batch reported\n%s", strings.Join(rep.Lines(), "\n"))
		}
		chk, err := CheckSegmentFile(filepath.Join(dir, log1), CheckOptions{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if chk.OK() || chk.Corrupt[0].StartPos != s1.starts[mid] {
			t.Fatalf("verify: %+v, want the batch at %d reported", chk, s1.starts[mid])
		}
	}
	// The read of that batch: its CRC fails.
	m := f.files(t, true)
	m[log1][s1.starts[mid]+12] ^= 0x01
	b := m[log1][s1.starts[mid] : s1.starts[mid]+int64(batchSize(s1, mid))]
	if _, err := codec.DecodeBatch(b); err == nil {
		t.Fatal("the damaged batch decodes")
	}
}

// TestSealedSegmentCutAtABatchBoundary: a sealed segment that lost whole
// batches at its end (cut exactly at a batch boundary after its last index
// entry) chains cleanly to its file end, but its last batch (not sparse)
// ends before the next segment's base. Both paths report the lost offsets
// as a gap, which reads skip and count and the manifest keeps.
func TestSealedSegmentCutAtABatchBoundary(t *testing.T) {
	ones := make([]int, 30)
	for i := range ones {
		ones[i] = 1
	}
	f := newFixture(t, segSpec{base: 0, batches: ones}, segSpec{base: 30, batches: []int{2, 2}})
	s0 := f.segs[0]
	n := len(s0.starts)
	cut := lastIndexedBatch(t, s0) + 1 // the first batch after the last entry
	if cut >= n {
		t.Fatalf("fixture: the last of %d batches (%d bytes each) is indexed", n, batchSize(s0, 0))
	}
	opts := Options{IndexIntervalBytes: testInterval}
	for _, snapshot := range []bool{true, false} {
		m := f.files(t, snapshot)
		m[s0.name()+".log"] = m[s0.name()+".log"][:s0.starts[cut]] // the batches after it gone
		res, dir := runImage(t, m, opts)
		rep := &res.Report
		lines := strings.Join(rep.Lines(), "\n")
		if len(rep.Gaps) != 1 || rep.Gaps[0].FirstOffset != s0.bases[cut] || rep.Gaps[0].EndOffset != 30 || !rep.Degraded {
			t.Fatalf("snapshot %v: want the gap [%d, 30) reported\n%s", snapshot, s0.bases[cut], lines)
		}
		if res.LEO != f.leo || res.HWM != f.leo {
			t.Fatalf("snapshot %v: leo %d hwm %d, want %d\n%s", snapshot, res.LEO, res.HWM, f.leo, lines)
		}
		man, err := ReadManifest(dir)
		if err != nil || len(man.Gaps) != 1 {
			t.Fatalf("snapshot %v: manifest %+v (%v), want the gap recorded", snapshot, man, err)
		}
	}
}

// TestSealedSegmentEmptied: a sealed segment whose .log is there but empty
// (a crash of the filesystem can leave a zero-length file; a sealed segment
// always holds a batch, compaction deletes one it empties) lost every
// acknowledged offset it held. Both paths report them as a gap up to the
// next segment's base, never open "ok" without them.
func TestSealedSegmentEmptied(t *testing.T) {
	f := defaultFixture(t)
	s1 := f.segs[1]
	opts := Options{IndexIntervalBytes: testInterval}
	for _, snapshot := range []bool{true, false} {
		for _, keepIndex := range []bool{true, false} {
			m := f.files(t, snapshot)
			m[s1.name()+".log"] = []byte{}
			if !keepIndex {
				delete(m, s1.name()+".index")
			}
			res, dir := runImage(t, m, opts)
			rep := &res.Report
			lines := strings.Join(rep.Lines(), "\n")
			if len(rep.Gaps) != 1 || rep.Gaps[0].FirstOffset != s1.base || rep.Gaps[0].EndOffset != f.segs[2].base || !rep.Degraded {
				t.Fatalf("snapshot %v, index %v: want the gap [%d, %d) reported\n%s", snapshot, keepIndex, s1.base, f.segs[2].base, lines)
			}
			if res.LEO != f.leo || res.HWM != f.leo {
				t.Fatalf("snapshot %v, index %v: leo %d hwm %d, want %d\n%s", snapshot, keepIndex, res.LEO, res.HWM, f.leo, lines)
			}
			man, err := ReadManifest(dir)
			if err != nil || len(man.Gaps) != 1 {
				t.Fatalf("snapshot %v, index %v: manifest %+v (%v), want the gap recorded", snapshot, keepIndex, man, err)
			}
		}
	}
}
