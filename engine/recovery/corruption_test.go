package recovery

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// expect is what one recovery must produce.
type expect struct {
	path      string
	leo       int64
	hwm       int64
	persisted int64
	hidden    int64
	lost      [][2]int64     // offset ranges that do not survive
	gaps      [][2]int64     // lost offset ranges reported as gaps
	truncated []Truncation   // compared on segment base name, position, bytes
	corrupt   []CorruptRange // compared on segment base name, positions, offsets
	rebuilt   []string       // index file names
	temps     []string
	note      string // substring of the notes or the snapshot note
}

// recoverAndCheck runs recovery read-only (which must change nothing and
// predict the same report), then for real, and checks the result against e
// and the records f wrote: every record outside e.lost reads back
// identical, nothing past the recovered end is visible, and a second open
// finds nothing left to repair.
func recoverAndCheck(t *testing.T, dir string, f *fixture, opts Options, e expect) *Result {
	t.Helper()
	before := dirImage(t, dir)
	ro := opts
	ro.ReadOnly = true
	pred, err := Run(dir, ro)
	if err != nil {
		t.Fatalf("read-only run: %v", err)
	}
	sameImage(t, "read-only run", before, dirImage(t, dir))
	if len(pred.Segments) != 0 {
		t.Fatalf("read-only run returned %d segments", len(pred.Segments))
	}

	res, err := Run(dir, opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, s := range res.Segments {
		defer s.Close()
	}
	rep := res.Report
	checkReport(t, "run", &rep, res, e)
	checkReport(t, "read-only run", &pred.Report, pred, e)
	// The prediction is the report, apart from timing and the read-only mark.
	a, b := rep, pred.Report
	a.Duration, b.Duration, b.ReadOnly = 0, 0, false
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("read-only report differs:\n got %+v\nwant %+v", b, a)
	}
	if len(res.Segments) == 0 {
		t.Fatalf("no segments")
	}
	// The hwm file now holds the HWM the log starts with.
	if h, err := ReadHWM(dir); err != nil || h != res.HWM {
		t.Fatalf("hwm file %d (%v), the log starts with %d", h, err, res.HWM)
	}

	// Records: identical where they survive, nothing past the end.
	got, readErrs := readBack(t, dir, rep.Corrupt)
	if len(readErrs) > 0 {
		t.Fatalf("damage left for readers: %v", readErrs)
	}
	lost := func(o int64) bool {
		for _, r := range e.lost {
			if o >= r[0] && o < r[1] {
				return true
			}
		}
		return false
	}
	for o, r := range got {
		if o >= res.LEO {
			t.Fatalf("offset %d readable past the recovered end %d", o, res.LEO)
		}
		if w, ok := f.want[o]; !ok || !sameRecord(r, w) {
			t.Fatalf("offset %d reads back wrong: %+v", o, r)
		}
	}
	for o := range f.want {
		_, ok := got[o]
		switch {
		case lost(o) && ok:
			t.Fatalf("offset %d survived, expected lost", o)
		case !lost(o) && !ok:
			t.Fatalf("offset %d lost", o)
		}
	}
	return res
}

func checkReport(t *testing.T, what string, rep *Report, res *Result, e expect) {
	t.Helper()
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("%s: %s\nreport:\n%s", what, fmt.Sprintf(format, a...), strings.Join(rep.Lines(), "\n"))
	}
	if rep.Path != e.path {
		fail("path %q, want %q", rep.Path, e.path)
	}
	if res.LEO != e.leo || rep.RecoveredEnd != e.leo {
		fail("leo %d / %d, want %d", res.LEO, rep.RecoveredEnd, e.leo)
	}
	if res.HWM != e.hwm || rep.HWM != e.hwm || res.HWM > res.LEO {
		fail("hwm %d / %d, want %d (leo %d)", res.HWM, rep.HWM, e.hwm, res.LEO)
	}
	if rep.PersistedHWM != e.persisted || rep.HiddenTail != e.hidden {
		fail("persisted %d hidden %d, want %d and %d", rep.PersistedHWM, rep.HiddenTail, e.persisted, e.hidden)
	}
	var tr []Truncation
	for _, x := range rep.Truncations {
		tr = append(tr, Truncation{Segment: filepath.Base(x.Segment), Position: x.Position, Bytes: x.Bytes})
	}
	if !slices.Equal(tr, e.truncated) {
		fail("truncations %+v, want %+v", tr, e.truncated)
	}
	var cr []CorruptRange
	for _, x := range rep.Corrupt {
		if x.Err == "" {
			fail("corrupt range without a reason")
		}
		cr = append(cr, CorruptRange{Segment: filepath.Base(x.Segment), StartPos: x.StartPos, EndPos: x.EndPos, FirstOffset: x.FirstOffset, EndOffset: x.EndOffset})
	}
	if !slices.Equal(cr, e.corrupt) {
		fail("corrupt %+v, want %+v", cr, e.corrupt)
	}
	var gs [][2]int64
	for _, g := range rep.Gaps {
		if g.Reason == "" {
			fail("gap without a reason")
		}
		gs = append(gs, [2]int64{g.FirstOffset, g.EndOffset})
	}
	if !slices.Equal(gs, e.gaps) || !slices.Equal(res.Gaps, rep.Gaps) {
		fail("gaps %v, want %v", gs, e.gaps)
	}
	if !slices.Equal(res.Corrupt, rep.Corrupt) || rep.Degraded != (len(e.corrupt)+len(e.gaps) > 0) {
		fail("result corrupt %v, degraded %v", res.Corrupt, rep.Degraded)
	}
	var rb []string
	for _, p := range rep.IndexesRebuilt {
		rb = append(rb, filepath.Base(p))
	}
	if !slices.Equal(rb, e.rebuilt) {
		fail("rebuilt %v, want %v", rb, e.rebuilt)
	}
	if !slices.Equal(rep.TempFilesRemoved, e.temps) {
		fail("temps %v, want %v", rep.TempFilesRemoved, e.temps)
	}
	if e.note != "" && !strings.Contains(strings.Join(append(rep.Notes, rep.SnapshotNote), "\n"), e.note) {
		fail("no note %q", e.note)
	}
	clean := e.path == PathSnapshot && len(e.truncated)+len(e.corrupt)+len(e.rebuilt)+len(e.temps) == 0 && e.hidden == 0
	if rep.NeedsWork() == clean {
		fail("NeedsWork %v", rep.NeedsWork())
	}
	if rep.LogStart != res.LogStart || rep.HiddenTailPolicy == "" || rep.Dir == "" {
		fail("log start %d / %d, policy %q, dir %q", rep.LogStart, res.LogStart, rep.HiddenTailPolicy, rep.Dir)
	}
}

// reopen runs recovery again on a recovered directory: nothing may be left
// to truncate, rebuild or remove, and the log must end where it did.
func reopen(t *testing.T, dir string, opts Options, prev *Result) {
	t.Helper()
	for _, s := range prev.Segments {
		s.Close()
	}
	res, err := Run(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Segments {
		defer s.Close()
	}
	rep := res.Report
	if len(rep.Truncations) > 0 || len(rep.IndexesRebuilt) > 0 || len(rep.TempFilesRemoved) > 0 || res.LEO != prev.LEO ||
		res.HWM != prev.HWM || len(rep.Corrupt) != len(prev.Corrupt) {
		t.Fatalf("second open still had work:\n%s", strings.Join(rep.Lines(), "\n"))
	}
}
