package recovery

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// testInterval is the index spacing of the fixtures: small, so that every
// segment has several index entries.
const testInterval = 1024

// fixSeg is one segment of a fixture.
type fixSeg struct {
	base   int64
	data   []byte
	starts []int64 // batch positions
	bases  []int64 // batch base offsets
	ends   []int64 // offset after each batch
	index  []byte  // .index written by the segment writer (indexFor)
}

func (s *fixSeg) name() string { return fmt.Sprintf("%020d", s.base) }

// fixture is a partition built batch by batch with the codec and appended
// through engine/segment, with its expected records, written as real files.
type fixture struct {
	segs []*fixSeg
	want map[int64]codec.Record
	leo  int64
}

// segSpec is one segment of a fixture: its base and the record count of
// each batch; codecs alternate none/zstd unless zstd is set.
type segSpec struct {
	base    int64
	batches []int
	zstd    bool
}

func newFixture(t testing.TB, specs ...segSpec) *fixture {
	t.Helper()
	f := &fixture{want: map[int64]codec.Record{}}
	for _, sp := range specs {
		s := &fixSeg{base: sp.base}
		off := sp.base
		for i, n := range sp.batches {
			c := codec.Codec(i % 2)
			if sp.zstd {
				c = codec.CodecZstd
			}
			s.starts = append(s.starts, int64(len(s.data)))
			s.bases = append(s.bases, off)
			s.data = appendBatch(t, s.data, off, n, c)
			for _, r := range testRecords(off, n) {
				f.want[r.Offset] = r
			}
			off += int64(n)
			s.ends = append(s.ends, off)
		}
		f.segs = append(f.segs, s)
		f.leo = off
	}
	return f
}

// defaultFixture: two sealed segments of 20 batches and an active one of 10,
// 5 records a batch: offsets [0, 250).
func defaultFixture(t testing.TB) *fixture {
	b20 := make([]int, 20)
	b10 := make([]int, 10)
	for i := range b20 {
		b20[i] = 5
	}
	for i := range b10 {
		b10[i] = 5
	}
	return newFixture(t, segSpec{base: 0, batches: b20}, segSpec{base: 100, batches: b20}, segSpec{base: 200, batches: b10})
}

// indexFor returns the .index file the segment writer produces for s:
// s's batches appended through engine/segment with testInterval spacing.
func indexFor(s *fixSeg) []byte {
	if s.index == nil {
		dir, err := os.MkdirTemp("", "pulse-fixture-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		sg, err := segment.Create(dir, s.base, segment.Options{IndexIntervalBytes: testInterval})
		if err != nil {
			panic(err)
		}
		for _, p := range s.starts {
			h, err := codec.ParseHeader(s.data[p:])
			if err != nil {
				panic(err)
			}
			if _, err := sg.Append(s.data[p:p+h.Size()], h); err != nil {
				panic(err)
			}
		}
		if err := sg.Sync(); err != nil {
			panic(err)
		}
		if err := sg.Close(); err != nil {
			panic(err)
		}
		log, err := os.ReadFile(sg.Path())
		if err != nil || !bytes.Equal(log, s.data) {
			panic(fmt.Sprintf("segment wrote other bytes than appended (%v)", err))
		}
		if s.index, err = os.ReadFile(sg.IndexPath()); err != nil {
			panic(err)
		}
	}
	return s.index
}

// files returns the pristine file images: segments, indexes, hwm at the
// log end, and a matching snapshot when snapshot is set.
func (f *fixture) files(t testing.TB, snapshot bool) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, s := range f.segs {
		m[s.name()+".log"] = bytes.Clone(s.data)
		m[s.name()+".index"] = bytes.Clone(indexFor(s))
	}
	h, _ := EncodeHWM(f.leo)
	m[HWMFile] = h
	if snapshot {
		m[SnapshotFile] = f.snapshot(t, f.active(), int64(len(f.active().data)), f.leo)
	}
	return m
}

func (f *fixture) active() *fixSeg { return f.segs[len(f.segs)-1] }

func (f *fixture) snapshot(t testing.TB, s *fixSeg, size, leo int64) []byte {
	t.Helper()
	b, err := EncodeSnapshot(Snapshot{LEO: leo, ActiveBase: s.base, ActiveSize: size, ActiveNext: leo})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFiles writes file images into dir.
func writeFiles(t testing.TB, dir string, m map[string][]byte) {
	t.Helper()
	for name, b := range m {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runClosed runs recovery on dir with opts and closes the segments it
// opened, for tests of what it reports and leaves on disk.
func runClosed(t testing.TB, dir string, opts Options) *Result {
	t.Helper()
	res, err := Run(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Segments {
		s.Close()
	}
	return res
}

// runImage writes the file images m into a new directory and runs
// recovery on it (runClosed); it returns the result and the directory.
func runImage(t testing.TB, m map[string][]byte, opts Options) (*Result, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, m)
	return runClosed(t, dir, opts), dir
}

// dirImage returns every file of dir with its bytes.
func dirImage(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

// sameImage fails unless two directory images hold the same files and bytes.
func sameImage(t testing.TB, what string, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d files, then %d", what, len(a), len(b))
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || !bytes.Equal(x, y) {
			t.Fatalf("%s: %s changed", what, name)
		}
	}
}

// readBack reads a recovered partition the way a reader does, independently
// of the recovery scanner: every segment from position 0, batch after batch,
// jumping over the reported corrupt ranges. It returns the decoded records
// and the positions where decoding failed (damage detected at read).
func readBack(t testing.TB, dir string, corrupt []CorruptRange) (map[int64]codec.Record, []string) {
	t.Helper()
	got := map[int64]codec.Record{}
	var readErrs []string
	names, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(names)
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pos := int64(0)
	batches:
		for pos < int64(len(data)) {
			for _, c := range corrupt {
				if filepath.Base(c.Segment) == filepath.Base(path) && c.StartPos == pos {
					pos = c.EndPos
					continue batches
				}
			}
			h, err := codec.ParseHeader(data[pos:])
			if err != nil || pos+h.Size() > int64(len(data)) {
				readErrs = append(readErrs, fmt.Sprintf("%s@%d: %v", filepath.Base(path), pos, err))
				break
			}
			b, err := codec.DecodeBatch(data[pos : pos+h.Size()])
			if err != nil {
				readErrs = append(readErrs, fmt.Sprintf("%s@%d: %v", filepath.Base(path), pos, err))
				pos += h.Size()
				continue
			}
			for _, r := range b.Records {
				if _, dup := got[r.Offset]; dup {
					t.Fatalf("offset %d read twice", r.Offset)
				}
				r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
				for i := range r.Headers {
					r.Headers[i].Value = bytes.Clone(r.Headers[i].Value)
				}
				got[r.Offset] = r
			}
			pos += h.Size()
		}
	}
	return got, readErrs
}

// sameRecord reports whether two records are identical.
func sameRecord(a, b codec.Record) bool {
	if a.Offset != b.Offset || a.Timestamp != b.Timestamp || !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) ||
		len(a.Headers) != len(b.Headers) || (a.Key == nil) != (b.Key == nil) || (a.Value == nil) != (b.Value == nil) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}
