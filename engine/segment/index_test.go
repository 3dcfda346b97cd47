package segment

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestDecodeIndex(t *testing.T) {
	good := []IndexEntry{{0, 0}, {10, 4100}, {25, 8300}, {math.MaxUint32, math.MaxUint32}}
	b := EncodeIndex(good)
	if len(b) != len(good)*IndexEntryLen {
		t.Fatalf("EncodeIndex: %d bytes", len(b))
	}
	got, err := DecodeIndex(b)
	if err != nil || len(got) != len(good) {
		t.Fatalf("DecodeIndex: %v, %v", got, err)
	}
	for i := range good {
		if got[i] != good[i] {
			t.Fatalf("entry %d: %+v, want %+v", i, got[i], good[i])
		}
	}
	if got, err := DecodeIndex(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty index: %v, %v", got, err)
	}
	cases := map[string]struct {
		b    []byte
		keep int
		text string
	}{
		"partial entry":          {append(EncodeIndex(good[:2]), 0, 0, 0), 2, "partial"},
		"offset repeated":        {EncodeIndex([]IndexEntry{{0, 0}, {5, 10}, {5, 20}}), 2, "entry 2: relative offset"},
		"position going back":    {EncodeIndex([]IndexEntry{{0, 0}, {5, 10}, {6, 9}}), 2, "entry 2: position"},
		"first entry repeated":   {EncodeIndex([]IndexEntry{{0, 0}, {0, 0}}), 1, "entry 1"},
		"only a partial entry":   {[]byte{1, 2, 3, 4, 5, 6, 7}, 0, "partial"},
		"bad entry then partial": {append(EncodeIndex([]IndexEntry{{3, 3}, {1, 1}}), 9), 1, "entry 1"},
	}
	for name, tc := range cases {
		got, err := DecodeIndex(tc.b)
		if !errors.Is(err, ErrBadIndex) || !bytes.Contains([]byte(err.Error()), []byte(tc.text)) {
			t.Errorf("%s: %v, want ErrBadIndex mentioning %q", name, err, tc.text)
		}
		if len(got) != tc.keep {
			t.Errorf("%s: kept %d entries, want the %d valid ones", name, len(got), tc.keep)
		}
	}
}

func FuzzDecodeIndex(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.index")
	if len(seeds) == 0 {
		f.Fatal("no seed index files in testdata/")
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeIndex(b)
		if err != nil && !errors.Is(err, ErrBadIndex) {
			t.Fatalf("error matching no sentinel: %v", err)
		}
		// What decodes (all of it, or the prefix before a problem) is
		// valid and encodes back to the same bytes.
		if verr := ValidateIndex(entries, math.MaxInt64); verr != nil {
			t.Fatalf("DecodeIndex returned invalid entries: %v", verr)
		}
		enc := EncodeIndex(entries)
		if !bytes.Equal(enc, b[:len(enc)]) {
			t.Fatal("entries do not encode back to the input")
		}
		if err == nil && len(enc) != len(b) {
			t.Fatalf("decoded %d of %d bytes without an error", len(enc), len(b))
		}
		if err != nil && len(enc) == len(b) {
			t.Fatalf("error %v with every byte decoded", err)
		}
	})
}

var update = flag.Bool("update", false, "rewrite the seed index files in testdata/")

// TestIndexSeeds keeps the FuzzDecodeIndex seeds: a real index written by a
// segment, and damaged variants of it.
func TestIndexSeeds(t *testing.T) {
	dir := t.TempDir()
	s, err := Create(dir, 0, Options{IndexIntervalBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 0, 40)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(s.IndexPath())
	s.Close()
	if err != nil || len(real) < 3*IndexEntryLen {
		t.Fatalf("index of %d bytes: %v", len(real), err)
	}
	seeds := map[string][]byte{
		"segment.index":   real,
		"empty.index":     {},
		"partial.index":   append(bytes.Clone(real), 0, 0, 1),
		"unordered.index": append(bytes.Clone(real), real[IndexEntryLen:2*IndexEntryLen]...),
	}
	for name, b := range seeds {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		stored, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestIndexSeeds -update)", err)
		}
		_, derr := DecodeIndex(stored)
		if (derr == nil) != (name == "segment.index" || name == "empty.index") {
			t.Fatalf("%s: DecodeIndex: %v", name, derr)
		}
	}
}
