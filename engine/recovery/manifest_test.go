package recovery

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzDecodeManifest: any bytes decode to a valid manifest or an
// ErrBadManifest error, and a decoded manifest round-trips exactly.
func FuzzDecodeManifest(f *testing.F) {
	good, err := EncodeManifest(Manifest{Segments: []int64{0, 70, 140}, Retired: []int64{5}, Gaps: []Gap{{FirstOffset: 10, EndOffset: 20, Reason: "gone"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte("{}\ncrc32c 00000000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(b)
		if err != nil {
			if !errors.Is(err, ErrBadManifest) {
				t.Fatalf("error %v does not match ErrBadManifest", err)
			}
			return
		}
		again, err := EncodeManifest(m)
		if err != nil {
			t.Fatalf("a decoded manifest does not encode: %v", err)
		}
		m2, err := DecodeManifest(again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip: %+v -> %+v (%v)", m, m2, err)
		}
	})
}

func TestManifestRejectsDamage(t *testing.T) {
	good, err := EncodeManifest(Manifest{Segments: []int64{0, 70}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeManifest(good); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		b := append([]byte(nil), good...)
		b[i] ^= 0x20
		if _, err := DecodeManifest(b); !errors.Is(err, ErrBadManifest) {
			t.Fatalf("flip at %d accepted (%v)", i, err)
		}
	}
	for _, m := range []Manifest{{}, {Segments: []int64{5, 5}}, {Segments: []int64{-1}}, {Segments: []int64{0}, Gaps: []Gap{{FirstOffset: 3, EndOffset: 3}}}} {
		if _, err := EncodeManifest(m); !errors.Is(err, ErrBadManifest) {
			t.Fatalf("%+v encoded (%v)", m, err)
		}
	}
}

// A deletion the manifest recorded (retired) is finished whichever of the
// segment's two files a crash left: the .log and its .index, or only the
// .index (the .log is removed first); inspect says what it would remove and
// removes nothing.
func TestRetiredLeftoversAreRemoved(t *testing.T) {
	for _, left := range [][]string{{".log", ".index"}, {".index"}} {
		t.Run(strings.Join(left, "+"), func(t *testing.T) {
			f := defaultFixture(t)
			m := f.files(t, false)
			old := f.segs[0].name()
			for _, ext := range []string{".log", ".index"} {
				if !slices.Contains(left, ext) {
					delete(m, old+ext)
				}
			}
			man, err := EncodeManifest(Manifest{Segments: []int64{100, 200}, Retired: []int64{0}})
			if err != nil {
				t.Fatal(err)
			}
			m[ManifestFile] = man
			res, dir := runImage(t, m, Options{ReadOnly: true})
			if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "would be finished") {
				t.Errorf("inspect: notes %q say nothing of the deletion", res.Report.Notes)
			}
			sameImage(t, "inspect", m, dirImage(t, dir))
			res = runClosed(t, dir, Options{})
			if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "is now finished") {
				t.Errorf("open: notes %q say nothing of the deletion", res.Report.Notes)
			}
			for _, ext := range left {
				if _, err := os.Stat(filepath.Join(dir, old+ext)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s%s of the recorded deletion is still there (%v)", old, ext, err)
				}
			}
			if res.Report.Degraded || res.LogStart != 100 {
				t.Errorf("after finishing the deletion: degraded %v, log start %d", res.Report.Degraded, res.LogStart)
			}
		})
	}
}

// Lost ranges at the start of the log stay inside it, however many: with
// the first two segments gone, the log starts at the first one's base, so a
// read from the earliest offset counts both ranges as skipped.
func TestLostRangesAtTheStartStayInTheLog(t *testing.T) {
	f := defaultFixture(t)
	m := f.files(t, false)
	for _, s := range f.segs[:2] {
		delete(m, s.name()+".log")
		delete(m, s.name()+".index")
	}
	man, err := EncodeManifest(Manifest{Segments: []int64{0, 100, 200}})
	if err != nil {
		t.Fatal(err)
	}
	m[ManifestFile] = man
	res, dir := runImage(t, m, Options{})
	if res.LogStart != 0 || len(res.Gaps) != 2 {
		t.Fatalf("first open: log start %d, gaps %+v; want 0 and [0, 100), [100, 200)", res.LogStart, res.Gaps)
	}
	res = runClosed(t, dir, Options{}) // now from the gaps the manifest records
	if res.LogStart != 0 || len(res.Gaps) != 2 {
		t.Fatalf("second open: log start %d, gaps %+v; want 0 and [0, 100), [100, 200)", res.LogStart, res.Gaps)
	}
}

// A lost range the manifest records that retention has since left behind
// (every segment up to it and past it deleted, so it ends below the log
// start) is gone with them: not reported, not degraded, dropped from the
// manifest, and not a problem for pulse verify (SegmentFilesOf).
func TestLostRangeBelowTheLogStartIsDropped(t *testing.T) {
	f := defaultFixture(t)
	m := f.files(t, false)
	for _, s := range f.segs[:2] {
		delete(m, s.name()+".log")
		delete(m, s.name()+".index")
	}
	man, err := EncodeManifest(Manifest{Segments: []int64{200}, Gaps: []Gap{{FirstOffset: 20, EndOffset: 60, Reason: "segment gone"}}})
	if err != nil {
		t.Fatal(err)
	}
	m[ManifestFile] = man
	dir := t.TempDir()
	writeFiles(t, dir, m)
	sf, err := SegmentFilesOf(dir)
	if err != nil || len(sf.Recorded) != 0 {
		t.Fatalf("SegmentFilesOf: recorded %+v (%v), want none", sf.Recorded, err)
	}
	res := runClosed(t, dir, Options{})
	if res.LogStart != 200 || len(res.Gaps) != 0 || res.Report.Degraded {
		t.Fatalf("log start %d, gaps %+v, degraded %v; want 200, none, not degraded", res.LogStart, res.Gaps, res.Report.Degraded)
	}
	if !strings.Contains(strings.Join(res.Report.Notes, "\n"), "[20, 60)") {
		t.Errorf("notes %q do not say the range was dropped", res.Report.Notes)
	}
	got, err := ReadManifest(dir)
	if err != nil || len(got.Gaps) != 0 {
		t.Fatalf("manifest after the open: %+v (%v), want no gaps", got, err)
	}
}
