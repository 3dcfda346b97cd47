package crashlab

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/layout"
)

// SegmentLayout is one segment file of a partition as found on disk.
type SegmentLayout struct {
	Base int64 `json:"base"`
	Size int64 `json:"size"` // bytes in the .log file
	// Batches are the positions of the batches whose headers parse, walked
	// from the start until the first header that does not (or overruns
	// the file). CRCs are not checked.
	Batches []BatchSpan `json:"batches,omitempty"`
}

// BatchSpan is where one batch lies in a segment file.
type BatchSpan struct {
	Pos        int64 `json:"pos"`
	Size       int64 `json:"size"`
	BaseOffset int64 `json:"base_offset"` // as its header says
}

// Layout lists the segments of a partition directory with their batch
// positions, reading headers only (52 bytes per batch, with ReadAt). It
// opens files read-only and never changes a byte. The UI uses it for the
// crash lab's default positions.
func Layout(dir string) ([]SegmentLayout, error) {
	bases, err := segment.List(dir)
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", dir, err)
	}
	out := make([]SegmentLayout, 0, len(bases))
	for _, b := range bases {
		sl, err := segmentLayout(filepath.Join(dir, segment.LogFile(b)), b)
		if err != nil {
			return nil, err
		}
		out = append(out, sl)
	}
	return out, nil
}

func segmentLayout(path string, base int64) (SegmentLayout, error) {
	f, err := os.Open(path)
	if err != nil {
		return SegmentLayout{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return SegmentLayout{}, err
	}
	sl := SegmentLayout{Base: base, Size: fi.Size()}
	rd := segment.NewReader(f, sl.Size, segment.ReaderOptions{Level: segment.LevelHeader})
	for {
		fr, ok := rd.Next()
		if !ok || !fr.OK() {
			break
		}
		sl.Batches = append(sl.Batches, BatchSpan{Pos: fr.Position, Size: fr.Size, BaseOffset: fr.Header.BaseOffset})
	}
	return sl, nil
}

// lastWithData is the last segment holding at least one batch, else the
// last segment.
func lastWithData(segs []SegmentLayout) (SegmentLayout, bool) {
	for i := len(segs) - 1; i >= 0; i-- {
		if len(segs[i].Batches) > 0 {
			return segs[i], true
		}
	}
	if len(segs) == 0 {
		return SegmentLayout{}, false
	}
	return segs[len(segs)-1], true
}

// Resolve fills the defaults of f (segment, position) from the partition in
// dir, reading batch headers only. It checks that the fault fits the
// partition: the segment exists, the position lies inside it.
func Resolve(dir string, f Fault) (Fault, error) {
	if !f.Kind.takesSegment() {
		return f, nil
	}
	segs, err := Layout(dir)
	if err != nil {
		return f, err
	}
	if len(segs) == 0 {
		return f, fmt.Errorf("%w: %s: the partition has no segment files", ErrNotApplicable, f.Kind)
	}
	var seg SegmentLayout
	switch {
	case f.Segment >= 0:
		found := false
		for _, s := range segs {
			if s.Base == f.Segment {
				seg, found = s, true
			}
		}
		if !found {
			return f, fmt.Errorf("%w: %s: no segment with base %d (have %s)", ErrNotApplicable, f.Kind, f.Segment, baseList(segs))
		}
	case f.Kind == CompactionCrash:
		if len(segs) < 2 {
			return f, fmt.Errorf("%w: %s needs a sealed segment; the partition has only its active one (produce until it rolls)", ErrNotApplicable, f.Kind)
		}
		seg = segs[0]
	default:
		seg, _ = lastWithData(segs)
	}
	f.Segment = seg.Base
	switch f.Kind {
	case Cut:
		if f.Pos < 0 {
			if len(seg.Batches) == 0 {
				return f, fmt.Errorf("%w: cut: segment %d holds no batch to cut into", ErrNotApplicable, seg.Base)
			}
			last := seg.Batches[len(seg.Batches)-1]
			f.Pos = last.Pos + last.Size/2
		}
		if f.Pos >= seg.Size {
			return f, fmt.Errorf("%w: cut at %d: segment %d is %d bytes, N must be below that", ErrNotApplicable, f.Pos, seg.Base, seg.Size)
		}
	case Flip:
		if f.Pos < 0 {
			if len(seg.Batches) == 0 {
				return f, fmt.Errorf("%w: flip: segment %d holds no batch", ErrNotApplicable, seg.Base)
			}
			first := seg.Batches[0]
			f.Pos = first.Pos + codec.HeaderLen + (first.Size-codec.HeaderLen)/2
			f.Bit = 0
		}
		if f.Pos >= seg.Size {
			return f, fmt.Errorf("%w: flip at %d: segment %d is %d bytes, POS must be below that", ErrNotApplicable, f.Pos, seg.Base, seg.Size)
		}
	case CompactionCrash:
		if seg.Base == segs[len(segs)-1].Base {
			return f, fmt.Errorf("%w: %s: segment %d is the active segment; compaction rewrites sealed ones only", ErrNotApplicable, f.Kind, seg.Base)
		}
		if len(seg.Batches) == 0 {
			return f, fmt.Errorf("%w: %s: segment %d holds no batch", ErrNotApplicable, f.Kind, seg.Base)
		}
	}
	return f, nil
}

func baseList(segs []SegmentLayout) string {
	s := ""
	for i, sg := range segs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(sg.Base)
	}
	return s
}

// PartitionDir is where partition p of topic keeps its files in the data
// directory data (topics/<topic>/p00003, docs/architecture.md).
func PartitionDir(data, topic string, p int) string { return layout.PartitionDir(data, topic, p) }
