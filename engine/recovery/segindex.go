package recovery

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"

	"github.com/pulselog/pulse/engine/segment"
)

// readIndexFile reads a segment's .index file as absolute entries, without
// judging them (the scan and the fast path do), and says why the file cannot
// be trusted at all: missing, or ending in a partial entry.
func readIndexFile(path string, base int64) ([]indexEntry, string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "index file missing", nil
	}
	if err != nil {
		return nil, "", err
	}
	entries, derr := segment.DecodeIndex(b)
	problem := ""
	if rem := len(b) % segment.IndexEntryLen; rem != 0 {
		problem = fmt.Sprintf("index file of %d bytes ends in a partial entry", len(b))
	} else if derr != nil {
		problem = derr.Error()
	}
	out := make([]indexEntry, len(entries))
	for i, e := range entries {
		out[i] = indexEntry{pos: int64(e.RelPosition), offset: base + int64(e.RelOffset)}
	}
	return out, problem, nil
}

// setIndex replaces a segment's index with entries (temp file, rename,
// directory fsync, by the segment).
func setIndex(s *segment.Segment, base int64, entries []indexEntry) error {
	out := make([]segment.IndexEntry, len(entries))
	for i, e := range entries {
		rel := e.offset - base
		if rel < 0 || rel > math.MaxUint32 || e.pos > math.MaxUint32 {
			return fmt.Errorf("index entry (position %d, offset %d) does not fit segment %d", e.pos, e.offset, base)
		}
		out[i] = segment.IndexEntry{RelOffset: uint32(rel), RelPosition: uint32(e.pos)}
	}
	return s.SetIndex(out)
}

func (r *runner) segOptions() segment.Options {
	return segment.Options{IndexIntervalBytes: r.opts.IndexIntervalBytes, Pool: r.opts.FilePool}
}
