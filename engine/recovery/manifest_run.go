package recovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/fsutil"
)

// applyManifest compares the segment files found (disk, ascending) with the
// manifest and returns the segments recovery works on: the listed ones that
// are there. A listed segment that is gone becomes a gap (its offsets up to
// the next listed segment); a file the manifest does not list is reported
// as stray and left alone, never opened, read, truncated or deleted. Leftovers
// of a deletion the manifest recorded (Retired) are deleted. Without a
// (valid) manifest, every file found is taken, and the report says so.
func (r *runner) applyManifest(disk []int64) ([]int64, error) {
	m, err := ReadManifest(r.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if len(disk) > 0 {
			r.note("no manifest: recorded from the %d segment files found", len(disk))
		}
		return disk, nil
	case err != nil:
		r.note("manifest unreadable, recorded again from the %d segment files found: %v", len(disk), err)
		return disk, nil
	}
	var dropped []Gap
	if len(m.Segments) > 0 {
		m.Gaps, dropped = gapsFrom(m.Gaps, m.Segments[0])
	}
	for _, g := range dropped {
		r.note("offsets [%d, %d), recorded as lost (%s), end below the log start %d (retention deleted the segments around them): no longer recorded",
			g.FirstOffset, g.EndOffset, g.Reason, m.Segments[0])
	}
	r.man, r.haveMan, r.gapsDropped = m, true, len(dropped) > 0
	for _, g := range m.Gaps {
		r.addGap(g)
	}
	onDisk := map[int64]bool{}
	for _, b := range disk {
		onDisk[b] = true
	}
	for _, b := range m.Retired {
		// The .log goes first, so a crash may leave the .log and its
		// .index, or the .index alone.
		name := segment.LogFile(b)
		if !onDisk[b] {
			if _, err := os.Lstat(filepath.Join(r.dir, segment.IndexFile(b))); err != nil {
				continue
			}
			name = segment.IndexFile(b)
		}
		delete(onDisk, b)
		if r.opts.ReadOnly {
			r.note("%s: its deletion was recorded and would be finished", name)
			continue
		}
		for _, f := range []string{segment.LogFile(b), segment.IndexFile(b)} {
			if err := os.Remove(filepath.Join(r.dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("finish deleting %s: %w", f, err)
			}
		}
		if err := fsutil.SyncDir(r.dir); err != nil {
			return nil, err
		}
		r.note("%s: its deletion was recorded (retention or compaction) and is now finished", name)
	}
	listed := map[int64]bool{}
	for _, b := range m.Segments {
		listed[b] = true
	}
	var present []int64
	for _, b := range disk {
		switch {
		case !onDisk[b]:
		case listed[b]:
			present = append(present, b)
		default:
			size := int64(-1)
			if fi, err := os.Stat(filepath.Join(r.dir, segment.LogFile(b))); err == nil {
				size = fi.Size()
			}
			r.rep.StraySegments = append(r.rep.StraySegments, fmt.Sprintf("%s (%d bytes, named for offset %d): not in the manifest, left alone and never read", segment.LogFile(b), size, b))
			r.strays = append(r.strays, b)
			r.rep.Degraded = true
		}
	}
	r.limitOf = map[int64]int64{}
	for i, b := range m.Segments {
		if i+1 < len(m.Segments) {
			r.limitOf[b] = m.Segments[i+1]
		}
		if onDisk[b] {
			continue
		}
		if i == len(m.Segments)-1 {
			r.missingActive = b // what it cost is settled by finish
			continue
		}
		end := m.Segments[i+1]
		r.rep.MissingSegments = append(r.rep.MissingSegments, fmt.Sprintf("%s: offsets [%d, %d) gone", segment.LogFile(b), b, end))
		g := Gap{FirstOffset: b, EndOffset: end, Reason: fmt.Sprintf("segment %s, listed in the manifest, is missing", segment.LogFile(b))}
		r.missing = append(r.missing, g)
		r.addGap(g)
	}
	if r.missingActive >= 0 && len(present) > 0 {
		// The last present segment becomes the active one.
		delete(r.limitOf, present[len(present)-1])
	}
	return present, nil
}

// addGap records a lost range unless a recorded one already covers it.
func (r *runner) addGap(g Gap) {
	for _, h := range r.rep.Gaps {
		if h.FirstOffset <= g.FirstOffset && g.EndOffset <= h.EndOffset {
			return
		}
	}
	r.rep.Gaps = append(r.rep.Gaps, g)
	r.rep.Degraded = true
}

// gapsFrom splits gaps into the ones inside a log whose first listed segment
// starts at first (every gap ending at or after it, and every gap ending at
// or after the start of one kept: the first segments lost), and the ones
// that end below all of that: only retention gets there, deleting every
// segment up to the gap and past it, so those offsets are gone with them.
func gapsFrom(gaps []Gap, first int64) (kept, dropped []Gap) {
	lo := first
	in := make([]bool, len(gaps))
	for moved := true; moved; {
		moved = false
		for i, g := range gaps {
			if !in[i] && g.EndOffset >= lo {
				in[i], moved = true, true
				lo = min(lo, g.FirstOffset)
			}
		}
	}
	for i, g := range gaps {
		if in[i] {
			kept = append(kept, g)
		} else {
			dropped = append(dropped, g)
		}
	}
	return kept, dropped
}

// writeManifest records segs (ascending) and the gaps, unless the manifest
// on disk already says exactly that.
func (r *runner) writeManifest(segs []int64) error {
	m := Manifest{Version: manifestVersion, Segments: segs, Gaps: r.rep.Gaps}
	if r.haveMan && len(r.man.Retired) == 0 && !r.gapsDropped && slices.Equal(r.man.Segments, m.Segments) && slices.Equal(r.man.Gaps, m.Gaps) {
		return nil
	}
	return WriteManifest(r.dir, m)
}

// SegmentFiles is what a partition directory's manifest says of the segment
// files in it (SegmentFilesOf), as recovery sees it.
type SegmentFiles struct {
	// Segments are the listed segments whose .log is there, ascending: the
	// ones recovery reads (all .log files found when there is no valid
	// manifest).
	Segments []int64
	// Limits maps a segment's base to the base of the segment after it in
	// the manifest (absent for the last one, the active segment).
	Limits map[int64]int64
	// Recorded are the gaps the manifest records from earlier opens;
	// Missing the listed sealed segments whose .log is gone now.
	Recorded, Missing []Gap
	// MissingActive is the listed last segment when its .log is gone, else -1.
	MissingActive int64
	// Stray are the .log files the manifest does not list (never read).
	Stray []int64
	// Notes: no manifest, an unreadable one, deletions left to finish.
	Notes []string
}

// SegmentFilesOf compares the .log files of dir with its manifest exactly as
// Run does, changing nothing.
func SegmentFilesOf(dir string) (SegmentFiles, error) {
	disk, err := segment.List(dir)
	if err != nil {
		return SegmentFiles{}, err
	}
	r := &runner{dir: dir, opts: Options{ReadOnly: true}, missingActive: -1}
	present, err := r.applyManifest(disk)
	if err != nil {
		return SegmentFiles{}, err
	}
	return SegmentFiles{
		Segments: present, Limits: r.limitOf, Recorded: r.man.Gaps, Missing: r.missing,
		MissingActive: r.missingActive, Stray: r.strays, Notes: r.rep.Notes,
	}, nil
}
