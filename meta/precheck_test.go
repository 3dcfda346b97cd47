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
