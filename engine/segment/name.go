package segment

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// File name extensions of the two files of a segment.
const (
	LogExt   = ".log"
	IndexExt = ".index"

	nameDigits = 20 // base offsets are zero-padded to 20 digits
)

// Name returns the file name stem of the segment with base offset base: 20
// digits, zero-padded ("00000000000000000042").
func Name(base int64) string { return fmt.Sprintf("%0*d", nameDigits, base) }

// LogFile returns the name of a segment's data file: Name(base) + ".log".
func LogFile(base int64) string { return Name(base) + LogExt }

// IndexFile returns the name of a segment's index file: Name(base) + ".index".
func IndexFile(base int64) string { return Name(base) + IndexExt }

// ParseName parses a segment file name (not a path): 20 decimal digits and
// LogExt or IndexExt. It returns the base offset and the extension, or an
// error wrapping ErrBadName.
func ParseName(file string) (base int64, ext string, err error) {
	stem, ext := file, filepath.Ext(file)
	if ext != LogExt && ext != IndexExt {
		return 0, "", fmt.Errorf("%w: %q has neither %s nor %s extension", ErrBadName, file, LogExt, IndexExt)
	}
	stem = strings.TrimSuffix(stem, ext)
	if len(stem) != nameDigits || strings.Trim(stem, "0123456789") != "" {
		return 0, "", fmt.Errorf("%w: %q is not %d digits and an extension", ErrBadName, file, nameDigits)
	}
	base, err = strconv.ParseInt(stem, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %q: base offset out of range", ErrBadName, file)
	}
	return base, ext, nil
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
