package segment

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(fsizeHelperEnv) != "" {
		os.Exit(fsizeHelper())
	}
	goleak.VerifyTestMain(m)
}

func TestNames(t *testing.T) {
	if got := Name(42); got != "00000000000000000042" {
		t.Fatalf("Name(42) = %q", got)
	}
	if LogFile(7) != "00000000000000000007.log" || IndexFile(7) != "00000000000000000007.index" {
		t.Fatal("LogFile/IndexFile")
	}
	for file, want := range map[string]int64{"00000000000000000000.log": 0, "09223372036854775807.index": 1<<63 - 1, "00000000000000450832.log": 450832} {
		base, _, err := ParseName(file)
		if err != nil || base != want {
			t.Errorf("ParseName(%q) = %d, %v", file, base, err)
		}
	}
	for _, bad := range []string{"42.log", "0000000000000000000x.log", "00000000000000000000.txt", "00000000000000000000", "99999999999999999999.log", ".tmp-00000000000000000000.index-123", "-0000000000000000001.log"} {
		if _, _, err := ParseName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("ParseName(%q) = %v, want ErrBadName", bad, err)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{LogFile(300), LogFile(0), LogFile(20), IndexFile(999), ".tmp-" + LogFile(5) + "-1", "hwm", "snapshot", "LOCK"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, LogFile(77)), 0o755)
	bases, err := List(dir)
	if err != nil || !slices.Equal(bases, []int64{0, 20, 300}) {
		t.Fatalf("List = %v, %v", bases, err)
	}
	if _, err := List(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("List(missing) = %v", err)
	}
}

func TestAppendLookupReopen(t *testing.T) {
	dir := t.TempDir()
	const base = 1000
	s, err := Create(dir, base, Options{IndexIntervalBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if s.Base() != base || s.Size() != 0 || len(s.Index()) != 0 || s.Lookup(base) != 0 {
		t.Fatal("new segment is not empty")
	}
	ws, next := fill(t, s, base, 400)
	checkSegment(t, s, ws, next)

	// The first batch is indexed, then the first batch starting 4096 or
	// more bytes after the last indexed one.
	idx := s.Index()
	var want []IndexEntry
	for _, w := range ws {
		if len(want) == 0 || w.pos-int64(want[len(want)-1].RelPosition) >= 4096 {
			want = append(want, IndexEntry{uint32(w.h.BaseOffset - base), uint32(w.pos)})
		}
	}
	if !slices.Equal(idx, want) {
		t.Fatalf("index %v, want %v", idx, want)
	}
	if idx[0] != (IndexEntry{0, 0}) || len(idx) < 10 {
		t.Fatalf("index of %d entries starting %+v", len(idx), idx[0])
	}

	// Nothing reaches the .index file before Sync; all of it after.
	if b, _ := os.ReadFile(s.IndexPath()); len(b) != 0 {
		t.Fatalf(".index holds %d bytes before Sync", len(b))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(idx)) {
		t.Fatalf(".index after Sync holds %d bytes, want %d", len(b), len(idx)*IndexEntryLen)
	}
	size := s.Size()
	if fi, _ := os.Stat(s.Path()); fi.Size() != size {
		t.Fatalf(".log is %d bytes, Size %d", fi.Size(), size)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ws[0].data, ws[0].h); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}

	// Reopen: same size and index, appends continue where they stopped.
	s, err = Open(dir, base, Options{IndexIntervalBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Size() != size || !slices.Equal(s.Index(), idx) || s.IndexErr() != nil {
		t.Fatalf("reopened: size %d index %d entries, err %v", s.Size(), len(s.Index()), s.IndexErr())
	}
	more, next2 := fill(t, s, next, 100)
	ws = append(ws, more...)
	checkSegment(t, s, ws, next2)
	if more[0].pos != size {
		t.Fatalf("first append after reopen at %d, want %d", more[0].pos, size)
	}
}

// checkSegment checks that every batch reads back and that every offset is
// found by Lookup + forward decode.
func checkSegment(t *testing.T, s *Segment, ws []written, next int64) {
	t.Helper()
	var buf []byte
	for _, w := range ws {
		raw, h, err := s.ReadBatch(w.pos, buf)
		if err != nil || !bytes.Equal(raw, w.data) || h != w.h {
			t.Fatalf("ReadBatch(%d): %v", w.pos, err)
		}
		buf = raw
	}
	for off := s.Base(); off < next; off++ {
		pos := s.Lookup(off)
		found := false
		for !found {
			raw, h, err := s.ReadBatch(pos, nil)
			if err != nil {
				t.Fatalf("offset %d: forward decode from %d: %v", off, s.Lookup(off), err)
			}
			if h.BaseOffset > off {
				t.Fatalf("offset %d: Lookup gave %d, past the batch holding it", off, s.Lookup(off))
			}
			if end, _ := h.NextOffset(); off < end {
				b, err := codec.DecodeBatch(raw)
				if err != nil || b.Records[off-h.BaseOffset].Offset != off {
					t.Fatalf("offset %d: %v", off, err)
				}
				found = true
			}
			pos += h.Size()
		}
	}
	if s.Lookup(s.Base()-5) != 0 {
		t.Fatal("Lookup below the base is not 0")
	}
	idx := s.Index()
	if got := s.Lookup(1 << 62); got != int64(idx[len(idx)-1].RelPosition) {
		t.Fatalf("Lookup(huge) = %d, want the last entry", got)
	}
}

func TestAppendRejects(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 100, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, h := batch(t, 100, 3, 10, codec.CodecNone)
	if _, err := s.Append(b[:len(b)-1], h); !errors.Is(err, ErrBadAppend) {
		t.Fatalf("short bytes: %v", err)
	}
	low, lh := batch(t, 99, 1, 10, codec.CodecNone)
	if _, err := s.Append(low, lh); !errors.Is(err, ErrBadAppend) {
		t.Fatalf("base below segment: %v", err)
	}
	far, fh := batch(t, 100+1<<32, 1, 10, codec.CodecNone)
	if _, err := s.Append(far, fh); !errors.Is(err, ErrFull) {
		t.Fatalf("relative offset past 32 bits: %v", err)
	}
	if _, err := s.Append(b, h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(b, h); !errors.Is(err, ErrBadAppend) {
		t.Fatalf("same base twice: %v", err)
	}
	if s.Size() != h.Size() {
		t.Fatalf("rejected appends changed the size: %d", s.Size())
	}
	if fi, _ := os.Stat(s.Path()); fi.Size() != h.Size() {
		t.Fatalf("rejected appends wrote: file is %d bytes", fi.Size())
	}
	if _, err := Create(dir, 100, Options{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Create over an existing segment: %v", err)
	}
	if _, err := Create(dir, -1, Options{}); err == nil {
		t.Fatal("Create with a negative base")
	}
}

func TestCreateReplacesOrphanIndex(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile(5)), []byte("stale entries"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Create(dir, 5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, _ := os.ReadFile(s.IndexPath()); len(b) != 0 {
		t.Fatalf("orphan index kept: %q", b)
	}
}

func TestTruncate(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 0, Options{IndexIntervalBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := fill(t, s, 0, 60)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	cut := ws[40]
	if err := s.Truncate(s.Size() + 1); err == nil {
		t.Fatal("Truncate past the end accepted")
	}
	if err := s.Truncate(cut.pos); err != nil {
		t.Fatal(err)
	}
	if s.Size() != cut.pos {
		t.Fatalf("Size %d after Truncate(%d)", s.Size(), cut.pos)
	}
	for _, e := range s.Index() {
		if int64(e.RelPosition) >= cut.pos {
			t.Fatalf("entry %+v at or past the cut %d survived", e, cut.pos)
		}
	}
	if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(s.Index())) {
		t.Fatal(".index file does not match the index after Truncate")
	}
	if fi, _ := os.Stat(s.Path()); fi.Size() != cut.pos {
		t.Fatalf(".log is %d bytes after Truncate(%d)", fi.Size(), cut.pos)
	}
	if _, _, err := s.ReadBatch(cut.pos, nil); !errors.Is(err, codec.ErrTorn) {
		t.Fatalf("ReadBatch at the cut: %v, want ErrTorn", err)
	}
	// The truncated batches can be appended again.
	for _, w := range ws[40:] {
		pos, err := s.Append(w.data, w.h)
		if err != nil || pos != w.pos {
			t.Fatalf("re-append at %d: %d, %v", w.pos, pos, err)
		}
	}
	checkSegment(t, s, ws, ws[len(ws)-1].h.BaseOffset+int64(ws[len(ws)-1].h.RecordCount))
	if err := s.Truncate(0); err != nil || s.Size() != 0 || len(s.Index()) != 0 {
		t.Fatalf("Truncate(0): %v, size %d, %d entries", err, s.Size(), len(s.Index()))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Size() != 0 || len(s.Index()) != 0 || s.IndexErr() != nil {
		t.Fatalf("reopened after Truncate(0): size %d, %d entries, %v", s.Size(), len(s.Index()), s.IndexErr())
	}
}

// rebuild computes the index of a segment from its data, as recovery does.
func rebuild(t *testing.T, s *Segment, interval int64) []IndexEntry {
	t.Helper()
	var entries []IndexEntry
	var since int64
	err := scanSeg(s, 0, func(pos int64, h codec.BatchHeader, raw []byte) error {
		if len(entries) == 0 || since >= interval {
			entries = append(entries, IndexEntry{uint32(h.BaseOffset - s.Base()), uint32(pos)})
			since = 0
		}
		since += int64(len(raw))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestIndexRebuild(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 50, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, next := fill(t, s, 50, 200)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	want := s.Index()
	s.Close()

	if got := rebuild(t, mustOpen(t, dir, 50), DefaultIndexIntervalBytes); !slices.Equal(got, want) {
		t.Fatalf("rebuilt index differs from the appended one: %d vs %d entries", len(got), len(want))
	}

	for name, damage := range map[string]func(path string){
		"missing":       func(p string) { os.Remove(p) },
		"partial entry": func(p string) { os.WriteFile(p, append(EncodeIndex(want), 1, 2, 3), 0o644) },
		"out of order":  func(p string) { os.WriteFile(p, EncodeIndex(append(slices.Clone(want[:5]), want[2])), 0o644) },
		"past the end": func(p string) {
			os.WriteFile(p, EncodeIndex(append(slices.Clone(want), IndexEntry{1 << 30, 1 << 30})), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			damage(filepath.Join(dir, IndexFile(50)))
			s := mustOpen(t, dir, 50)
			defer s.Close()
			if s.IndexErr() == nil {
				t.Fatal("Open did not report the damaged index")
			}
			if kept := s.Index(); len(kept) > len(want) || !slices.Equal(kept, want[:len(kept)]) {
				t.Fatalf("Open kept entries that are not a prefix of the real index: %v", kept)
			}
			if err := s.SetIndex(rebuild(t, s, DefaultIndexIntervalBytes)); err != nil {
				t.Fatal(err)
			}
			if s.IndexErr() != nil || !slices.Equal(s.Index(), want) {
				t.Fatal("SetIndex did not install the rebuilt index")
			}
			if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(want)) {
				t.Fatal(".index file differs from the rebuilt index")
			}
			if got := names(t, dir); !slices.Equal(got, []string{IndexFile(50), LogFile(50)}) {
				t.Fatalf("directory holds %v", got)
			}
			// Appends after SetIndex write to the new file.
			more, n2 := fill(t, s, next, 30)
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(s.Index())) {
				t.Fatal(".index file misses the entries appended after SetIndex")
			}
			checkSegment(t, s, append(slices.Clone(ws), more...), n2)
			if err := s.Truncate(more[0].pos); err != nil {
				t.Fatal(err)
			}
		})
	}

	s = mustOpen(t, dir, 50)
	defer s.Close()
	before := dirState(t, dir)
	for name, bad := range map[string][]IndexEntry{
		"not increasing": {{0, 0}, {5, 100}, {5, 200}},
		"past the end":   {{0, 0}, {1, uint32(s.Size())}},
	} {
		if err := s.SetIndex(bad); !errors.Is(err, ErrBadIndex) {
			t.Fatalf("SetIndex(%s) = %v, want ErrBadIndex", name, err)
		}
	}
	if !slices.Equal(s.Index(), want) || !mapsEqual(before, dirState(t, dir)) {
		t.Fatal("a rejected SetIndex changed the index")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func mustOpen(t *testing.T, dir string, base int64) *Segment {
	t.Helper()
	s, err := Open(dir, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTornTailAndCorruption(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, next := fill(t, s, 0, 20)
	s.Sync()
	s.Close()
	// A crash mid-write: half of the next batch reached the file.
	tail, th := batch(t, next, 5, 300, codec.CodecNone)
	f, _ := os.OpenFile(filepath.Join(dir, LogFile(0)), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(tail[:len(tail)/2])
	f.Close()

	s = mustOpen(t, dir, 0)
	defer s.Close()
	tornPos := ws[len(ws)-1].pos + ws[len(ws)-1].h.Size()
	if s.Size() != tornPos+int64(len(tail)/2) {
		t.Fatalf("Size %d does not include the torn tail", s.Size())
	}
	_, _, err = s.ReadBatch(tornPos, nil)
	var ce *codec.CorruptError
	if !errors.Is(err, codec.ErrTorn) || !errors.As(err, &ce) || ce.Position != tornPos || ce.Offset != th.BaseOffset || ce.Path != s.Path() {
		t.Fatalf("ReadBatch of the torn batch: %v", err)
	}
	if !strings.Contains(err.Error(), LogFile(0)) {
		t.Fatalf("error %q does not name the file", err)
	}
	for _, pos := range []int64{s.Size(), s.Size() - 10, -1} {
		if _, _, err := s.ReadBatch(pos, nil); !errors.Is(err, codec.ErrTorn) || !errors.As(err, &ce) || ce.Position != pos {
			t.Fatalf("ReadBatch(%d) past the end: %v", pos, err)
		}
	}
	var seen []int64
	err = scanSeg(s, 0, func(pos int64, h codec.BatchHeader, raw []byte) error {
		seen = append(seen, pos)
		return nil
	})
	if !errors.Is(err, codec.ErrTorn) || !errors.As(err, &ce) || ce.Position != tornPos || len(seen) != len(ws) {
		t.Fatalf("Scan: %v after %d batches, want ErrTorn at %d after %d", err, len(seen), tornPos, len(ws))
	}
	if err := s.Truncate(tornPos); err != nil {
		t.Fatal(err)
	}
	if err := scanSeg(s, 0, func(int64, codec.BatchHeader, []byte) error { return nil }); err != nil {
		t.Fatalf("Scan after truncating the torn tail: %v", err)
	}

	// Mid-file corruption: Scan stops at the bad batch with ErrChecksum.
	bad := ws[7]
	f, _ = os.OpenFile(s.Path(), os.O_WRONLY, 0)
	f.WriteAt([]byte{^bad.data[100]}, bad.pos+100)
	f.Close()
	seen = seen[:0]
	err = scanSeg(s, ws[2].pos, func(pos int64, h codec.BatchHeader, raw []byte) error {
		seen = append(seen, pos)
		return nil
	})
	if !errors.Is(err, codec.ErrChecksum) || !errors.As(err, &ce) || ce.Position != bad.pos || ce.Offset != bad.h.BaseOffset || len(seen) != 5 {
		t.Fatalf("Scan over a flipped byte: %v after %d batches", err, len(seen))
	}
	stop := errors.New("stop")
	if err := scanSeg(s, 0, func(int64, codec.BatchHeader, []byte) error { return stop }); err != stop {
		t.Fatalf("Scan did not return fn's error: %v", err)
	}
}

func TestOpenReadOnlyNeverWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 10, Options{IndexIntervalBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	ws, next := fill(t, s, 10, 50)
	s.Sync()
	extra, _ := fill(t, s, next, 5) // appended, index entries not synced
	s.Close()
	f, _ := os.OpenFile(filepath.Join(dir, LogFile(10)), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("torn tail"))
	f.Close()
	// A second segment without an index file.
	s2, _ := Create(dir, 1000, Options{})
	fill(t, s2, 1000, 3)
	s2.Close()
	os.Remove(filepath.Join(dir, IndexFile(1000)))

	before := dirState(t, dir)
	for _, base := range []int64{10, 1000} {
		r, err := OpenReadOnly(dir, base)
		if err != nil {
			t.Fatal(err)
		}
		if !r.ReadOnly() {
			t.Fatal("ReadOnly() false")
		}
		scanSeg(r, 0, func(int64, codec.BatchHeader, []byte) error { return nil })
		r.Lookup(base + 20)
		r.ReadBatch(0, nil)
		r.Index()
		if base == 10 {
			if r.Size() != extra[len(extra)-1].pos+extra[len(extra)-1].h.Size()+9 || len(r.Index()) == 0 {
				t.Fatalf("read-only view: size %d, %d entries", r.Size(), len(r.Index()))
			}
			checkSegment(t, r, ws, next)
		} else if !errors.Is(r.IndexErr(), os.ErrNotExist) {
			t.Fatalf("IndexErr of a missing index: %v", r.IndexErr())
		}
		b, h := batch(t, 1<<20, 1, 1, codec.CodecNone)
		for name, err := range map[string]error{
			"Append":   func() error { _, err := r.Append(b, h); return err }(),
			"Sync":     r.Sync(),
			"Truncate": r.Truncate(0),
			"SetIndex": r.SetIndex(nil),
			"Remove":   r.Remove(),
		} {
			if !errors.Is(err, ErrReadOnly) {
				t.Errorf("%s on a read-only segment: %v, want ErrReadOnly", name, err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if after := dirState(t, dir); !mapsEqual(before, after) {
		t.Fatalf("read-only use changed the directory:\nbefore %v\nafter  %v", before, after)
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	s, _ := Create(dir, 0, Options{})
	fill(t, s, 0, 5)
	keep, _ := Create(dir, 100, Options{})
	defer keep.Close()
	if err := s.Remove(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{IndexFile(100), LogFile(100)}) {
		t.Fatalf("after Remove: %v", got)
	}
	if _, _, err := s.ReadBatch(0, nil); err == nil {
		t.Fatal("read after Remove succeeded")
	}
	if err := s.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Remove: %v", err)
	}
}

// TestConcurrentReaders runs readers against one appender and a syncer
// (meaningful under -race): every batch a reader finds published decodes.
func TestConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 0, Options{IndexIntervalBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var published atomic.Int64 // offsets below it are appended
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(1)
	go func() { // syncer
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := s.Sync(); err != nil {
				errs <- err
				return
			}
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			var buf []byte
			for {
				select {
				case <-done:
					return
				default:
				}
				n := published.Load()
				if n == 0 {
					continue
				}
				off := rng.Int64N(n)
				for pos := s.Lookup(off); ; {
					raw, h, err := s.ReadBatch(pos, buf)
					if err != nil {
						errs <- err
						return
					}
					buf = raw
					if off < h.BaseOffset+int64(h.RecordCount) {
						if _, err := codec.DecodeBatch(raw); err != nil {
							errs <- err
							return
						}
						break
					}
					pos += h.Size()
				}
			}
		}(uint64(r))
	}
	next := int64(0)
	for i := 0; i < 1500; i++ {
		b, h := batch(t, next, 1+i%4, 40, codec.CodecNone)
		if _, err := s.Append(b, h); err != nil {
			t.Fatal(err)
		}
		next += int64(h.RecordCount)
		published.Store(next)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(s.Index())) {
		t.Fatal(".index file does not match the index after concurrent syncs")
	}
}

func TestAppendChecksHeader(t *testing.T) {
	s, err := Create(t.TempDir(), 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, h := batch(t, 0, 2, 10, codec.CodecNone)
	other := h
	other.RecordCount = 1
	if _, err := s.Append(b, other); !errors.Is(err, ErrBadAppend) {
		t.Fatalf("header not matching the bytes: %v", err)
	}
	if _, err := s.Append([]byte("not a batch at all, just some bytes of text here...................."), h); !errors.Is(err, ErrBadAppend) {
		t.Fatalf("garbage bytes: %v", err)
	}
	if err := scanSeg(s, -1, func(int64, codec.BatchHeader, []byte) error { return nil }); err == nil {
		t.Fatal("Scan from a negative position")
	}
	if s.Size() != 0 {
		t.Fatalf("rejected appends changed the size to %d", s.Size())
	}
}

func TestSyncDataLeavesIndexBuffered(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 0, Options{IndexIntervalBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 0, 10)
	if err := s.SyncData(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.IndexPath()); len(b) != 0 {
		t.Fatalf("SyncData wrote %d index bytes", len(b))
	}
	if fi, _ := os.Stat(s.Path()); fi.Size() != s.Size() {
		t.Fatalf(".log is %d bytes, Size %d", fi.Size(), s.Size())
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(s.Index())) || len(b) == 0 {
		t.Fatal("Sync after SyncData did not write the index")
	}
	s.Close()
	if err := s.SyncData(); !errors.Is(err, ErrClosed) {
		t.Fatalf("SyncData after Close: %v", err)
	}
	r, err := OpenReadOnly(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.SyncData(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("SyncData read-only: %v", err)
	}
}
