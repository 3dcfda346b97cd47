package meta

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDamagedMetaFileIsAClearError truncates and damages a real meta.db in
// every way that would make bbolt map memory past the file end (a SIGBUS
// that kills the process) or silently start over: Open, writable and
// read-only, returns ErrDamaged naming the file, and the file is unchanged.
func TestDamagedMetaFileIsAClearError(t *testing.T) {
	src := t.TempDir()
	s := openStore(t, src)
	for i := range 200 {
		if err := s.PutTopic(Topic{Name: fmt.Sprintf("topic-%03d-%s", i, strings.Repeat("x", 100)), Partitions: 4}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(Path(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(good) < 5*4096 {
		t.Fatalf("meta.db is only %d bytes", len(good))
	}
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		return b
	}
	var inUse int
	for _, off := range []int{0, 4096} {
		if m, err := parseBoltMeta(good[off:]); err == nil {
			inUse = max(inUse, int(m.pgid)*int(m.pageSize))
		}
	}
	both := bytes.Clone(good)
	both[metaOffMagic] ^= 1
	both[4096+metaOffMagic] ^= 1
	cases := map[string][]byte{
		"empty":                   {},
		"100 bytes":               good[:100],
		"one page":                good[:4096],
		"two pages and a bit":     good[:8192+10],
		"half":                    good[:len(good)/2],
		"last page in use gone":   good[:inUse-4096],
		"both meta pages damaged": both,
	}
	_ = flip
	for name, img := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(Path(dir), img, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				o := DefaultOptions()
				o.ReadOnly = ro
				st, err := Open(dir, o)
				if err == nil {
					st.Close()
					t.Fatalf("read-only %v: opened a damaged meta.db", ro)
				}
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), Path(dir)) {
					t.Fatalf("read-only %v: %v, want ErrDamaged naming %s", ro, err, Path(dir))
				}
			}
			now, err := os.ReadFile(Path(dir))
			if err != nil || !bytes.Equal(now, img) {
				t.Fatalf("meta.db changed (%v)", err)
			}
		})
	}
	// One damaged meta page is what bbolt's two pages are for: it opens,
	// on the other one (at worst the commit before the last).
	dir := t.TempDir()
	if err := os.WriteFile(Path(dir), flip(metaOffMagic), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir, DefaultOptions())
	if err != nil {
		t.Fatalf("one damaged meta page: %v", err)
	}
	ts, err := st.ListTopics()
	st.Close()
	if err != nil || len(ts) < 199 {
		t.Fatalf("after one damaged meta page: %d topics (%v)", len(ts), err)
	}
}

// TestDamagedPageIsAnError flips a byte of the header of every page of a
// real meta.db past the two meta pages (its flags: the page type bbolt
// asserts on, or its element count): bbolt panics on such a page, and
// the store turns that into ErrDamaged naming the file, from Open, a read,
// a write or Check, instead of a crash with a Go stack trace.
func TestDamagedPageIsAnError(t *testing.T) {
	src := t.TempDir()
	s := openStore(t, src)
	for i := range 200 {
		if err := s.PutTopic(Topic{Name: fmt.Sprintf("topic-%03d-%s", i, strings.Repeat("x", 100)), Partitions: 4}); err != nil {
			t.Fatal(err)
		}
		if err := s.CommitCursor("billing", fmt.Sprintf("topic-%03d-%s", i, strings.Repeat("x", 100)), 0, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(Path(src))
	if err != nil {
		t.Fatal(err)
	}
	damaged := 0
	for page := 2; page*4096 < len(good); page++ {
		for _, field := range []struct {
			name string
			off  int
		}{{"flags", 8}, {"count", 10}} {
			img := bytes.Clone(good)
			img[page*4096+field.off] ^= 0xff
			dir := t.TempDir()
			if err := os.WriteFile(Path(dir), img, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				o := DefaultOptions()
				o.ReadOnly = ro
				errs := useStore(dir, o)
				for _, err := range errs {
					if !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotInitialized) {
						t.Errorf("page %d %s, read-only %v: %v, want ErrDamaged (or ErrCorrupt)", page, field.name, ro, err)
					}
					if errors.Is(err, ErrDamaged) {
						damaged++
						if !strings.Contains(err.Error(), Path(dir)) {
							t.Errorf("page %d %s: %v does not name %s", page, field.name, err, Path(dir))
						}
					}
				}
			}
		}
	}
	if damaged == 0 {
		t.Fatal("no flipped page header was found damaged")
	}
}

// useStore opens the store in dir and reads and writes everything a data
// dir's open and its serving do, returning the errors met on the way.
func useStore(dir string, o Options) (errs []error) {
	st, err := Open(dir, o)
	if err != nil {
		return []error{err}
	}
	defer st.Close()
	if _, err := st.ListTopics(); err != nil {
		errs = append(errs, err)
	}
	if _, err := st.ListCursors(""); err != nil {
		errs = append(errs, err)
	}
	if _, err := st.Check(); err != nil { // the problems it finds are its report
		errs = append(errs, err)
	}
	if !o.ReadOnly {
		if err := st.PutTopic(Topic{Name: "new", Partitions: 1}); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
