// Package layout owns the names and paths of a Pulse data directory
// (docs/architecture.md, "Data directory"):
//
//	<data>/
//	├── meta.db
//	├── LOCK
//	└── topics/<topic>/p00003/
//	    ├── 00000000000000000000.log      sealed segment, named by base offset
//	    ├── 00000000000000000000.index    its sparse offset index
//	    ├── manifest                      the segments the partition should hold
//	    ├── hwm                           8-byte big-endian high-watermark
//	    └── snapshot                      recovery checkpoint
//
// Every reader and writer of the directory (the engine, recovery, the crash
// lab, pulse verify / inspect / dump / bench, the metadata store) builds and
// parses names here. It imports nothing of Pulse, so any package may use it.
package layout

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Names inside a data directory.
const (
	MetaFile  = "meta.db" // bbolt metadata
	LockFile  = "LOCK"    // flock(2) / LockFileEx: one process per data dir
	TopicsDir = "topics"  // one directory per topic below it
)

// Names inside a partition directory.
const (
	HWMFile      = "hwm"      // 8-byte big-endian high-watermark
	SnapshotFile = "snapshot" // recovery checkpoint
	ManifestFile = "manifest" // the segments the partition should hold
	// TempPrefix starts every temporary file Pulse creates (".tmp-<name>-
	// <random>"); recovery deletes them.
	TempPrefix = ".tmp-"

	LogExt   = ".log"   // a segment's data file
	IndexExt = ".index" // a segment's sparse index

	segmentDigits   = 20 // base offsets are zero-padded to 20 digits
	partitionDigits = 5  // partition numbers are zero-padded to 5 digits
)

// ErrBadName: a file name is not <20-digit base offset>.log / .index.
var ErrBadName = errors.New("not a segment file name")

// TopicDir is the directory of topic in the data directory data.
func TopicDir(data, topic string) string { return filepath.Join(data, TopicsDir, topic) }

// PartitionName is the directory name of partition p: "p" and the number,
// zero-padded to 5 digits ("p00003").
func PartitionName(p int) string { return fmt.Sprintf("p%0*d", partitionDigits, p) }

// PartitionDir is where partition p of topic keeps its files in the data
// directory data: <data>/topics/<topic>/p00003.
func PartitionDir(data, topic string, p int) string {
	return filepath.Join(TopicDir(data, topic), PartitionName(p))
}

// ParsePartitionName parses a partition directory name: exactly what
// PartitionName writes ("p00003" is 3; "p3", "p+0003" and "p000003" are no
// partition).
func ParsePartitionName(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "p")
	if !ok || len(s) < partitionDigits || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	p, err := strconv.Atoi(s)
	if err != nil || PartitionName(p) != name {
		return 0, false
	}
	return p, true
}

// SegmentName returns the file name stem of the segment with base offset
// base: 20 digits, zero-padded ("00000000000000000042").
func SegmentName(base int64) string { return fmt.Sprintf("%0*d", segmentDigits, base) }

// LogFile returns the name of a segment's data file: SegmentName(base) + ".log".
func LogFile(base int64) string { return SegmentName(base) + LogExt }

// IndexFile returns the name of a segment's index file: SegmentName(base) + ".index".
func IndexFile(base int64) string { return SegmentName(base) + IndexExt }

// ParseSegmentFile parses a segment file name (not a path): 20 decimal
// digits and LogExt or IndexExt. It returns the base offset and the
// extension, or an error wrapping ErrBadName.
func ParseSegmentFile(file string) (base int64, ext string, err error) {
	ext = filepath.Ext(file)
	if ext != LogExt && ext != IndexExt {
		return 0, "", fmt.Errorf("%w: %q has neither %s nor %s extension", ErrBadName, file, LogExt, IndexExt)
	}
	stem := strings.TrimSuffix(file, ext)
	if len(stem) != segmentDigits || strings.Trim(stem, "0123456789") != "" {
		return 0, "", fmt.Errorf("%w: %q is not %d digits and an extension", ErrBadName, file, segmentDigits)
	}
	base, err = strconv.ParseInt(stem, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %q: base offset out of range", ErrBadName, file)
	}
	return base, ext, nil
}
