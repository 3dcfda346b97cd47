package segment

import (
	"fmt"
	"os"
	"slices"

	"github.com/pulselog/pulse/internal/layout"
)

// File name extensions of the two files of a segment (internal/layout).
const (
	LogExt   = layout.LogExt
	IndexExt = layout.IndexExt
)

// Name returns the file name stem of the segment with base offset base: 20
// digits, zero-padded ("00000000000000000042").
func Name(base int64) string { return layout.SegmentName(base) }

// LogFile returns the name of a segment's data file: Name(base) + ".log".
func LogFile(base int64) string { return layout.LogFile(base) }

// IndexFile returns the name of a segment's index file: Name(base) + ".index".
func IndexFile(base int64) string { return layout.IndexFile(base) }

// ParseName parses a segment file name (not a path): 20 decimal digits and
// LogExt or IndexExt. It returns the base offset and the extension, or an
// error wrapping ErrBadName.
func ParseName(file string) (base int64, ext string, err error) {
	return layout.ParseSegmentFile(file)
}

// List returns the base offsets of the segments in dir (its *.log files with
// a valid name), ascending. Other files, including temporaries, are ignored.
func List(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	var bases []int64
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if base, ext, err := ParseName(e.Name()); err == nil && ext == LogExt {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	return bases, nil
}
