package recovery

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/engine/segment"
)

// SegmentCheck is the outcome of checking one segment file with
// CheckSegmentFile.
type SegmentCheck struct {
	Path       string `json:"path"`
	Base       int64  `json:"base"` // from the file name (0 when it is not a segment name)
	Size       int64  `json:"size"`
	Batches    int64  `json:"batches"`     // valid batches
	NextOffset int64  `json:"next_offset"` // offset after the last valid batch (the acknowledged end past a corrupt tail)
	// Corrupt are damaged regions; Torn is damage at the end of an active
	// segment that recovery would truncate (above CheckOptions.Acknowledged).
	Corrupt []CorruptRange `json:"corrupt,omitempty"`
	Torn    *Truncation    `json:"torn,omitempty"`
	// Lost, with a Limit, is the offset range a sealed segment lost at its
	// end (whole batches cut, or the file emptied): recovery's gap.
	Lost *Gap `json:"lost,omitempty"`
}

// OK reports whether every byte of the file is a valid batch.
func (c *SegmentCheck) OK() bool { return len(c.Corrupt) == 0 && c.Torn == nil && c.Lost == nil }

// CheckOptions configure CheckSegmentFile.
type CheckOptions struct {
	// Limit is the segment's exclusive end offset, the next segment's base;
	// zero means none (the active segment, or a lone file). With a limit,
	// damage at the end of the file is a corrupt range, without one it is a
	// torn tail.
	Limit int64
	// Acknowledged is the partition's acknowledged end (AcknowledgedEnd) for
	// its active segment; zero means none. Damage at the end of the file
	// holding offsets below it is a corrupt range up to it, as recovery
	// reports it, not a torn tail.
	Acknowledged int64
	// Progress, when set, is told how many bytes of the file were read so far.
	Progress func(done int64)
	// Visit, when set, sees every batch and damaged region in file order; an
	// error from it stops the check and is returned.
	Visit func(Frame) error
}

// CheckSegmentFile verifies every batch of the .log file at path (header,
// CRC, offsets ascending from the base in its name) without writing
// anything, the way recovery's full scan does.
func CheckSegmentFile(path string, opts CheckOptions) (*SegmentCheck, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	base, _ := ParseSegmentName(filepath.Base(path))
	limit := opts.Limit
	if limit <= 0 {
		limit = maxOffset
	}
	if base >= limit {
		return nil, fmt.Errorf("%s: base %d is not below the limit %d", path, base, limit)
	}
	out := scanSegment(scanInput{
		path: path, r: f, size: fi.Size(), base: base, limit: limit, sealed: opts.Limit > 0,
		startOff: base, interval: DefaultIndexIntervalBytes, lastIndexed: -1,
		visit: opts.Visit, progress: opts.Progress,
	})
	if out.err != nil {
		return nil, out.err
	}
	if opts.Limit <= 0 {
		acknowledgedTail(&out, fi.Size(), opts.Acknowledged)
	}
	c := &SegmentCheck{
		Path: path, Base: base, Size: fi.Size(), Batches: out.batches, NextOffset: out.next,
		Corrupt: out.corrupt, Torn: out.torn,
	}
	if opts.Limit > 0 {
		if g, ok := sealedShortfall(filepath.Base(path), fi.Size(), limit, out); ok {
			c.Lost = &g
		}
	}
	return c, nil
}

// ParseSegmentName returns the base offset of a segment file name
// ("00000000000000000042.log"), and whether it is one.
func ParseSegmentName(name string) (int64, bool) {
	base, ext, err := segment.ParseName(name)
	return base, err == nil && ext == segment.LogExt
}
