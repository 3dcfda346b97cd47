package recovery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/fsutil"
)

// Result is a recovered partition, ready for the log to append to.
type Result struct {
	// Segments are open for append (read-only never: empty then), in
	// ascending base order; the last one is the active segment.
	Segments []*segment.Segment
	LEO      int64 // log end offset: the next offset to assign
	HWM      int64 // the high-watermark the log starts with
	LogStart int64 // first offset still stored
	// Corrupt are the damaged ranges reads must skip (and count).
	Corrupt []CorruptRange
	// Gaps are offset ranges handed out whose bytes are gone; reads skip
	// and count them too.
	Gaps   []Gap
	Report Report
}

// segState is one segment while Run works on it.
type segState struct {
	seg    *segment.Segment
	base   int64
	limit  int64 // next segment's base, or maxOffset for the active one
	sealed bool
	size   int64 // .log size at open
	// disk is the on-disk index; diskProblem says why it cannot be trusted
	// whatever the data says (missing file, partial entry).
	disk        []indexEntry
	diskProblem string
	end         int64 // offset after the segment's last record (sealed: limit)
}

// runner carries one Run.
type runner struct {
	dir  string
	opts Options
	rep  Report
	segs []*segState
	buf  []byte // scan buffer, reused across segments

	snapExists bool     // a snapshot file was there (valid or not)
	snap       Snapshot // its contents, when valid

	// promised is the offset below which Pulse acknowledged everything: the
	// persisted HWM, or a valid snapshot's end (a snapshot only ever
	// checkpoints fsynced, verified batches), whichever is higher; -1 when
	// neither exists. Nothing below it is truncated, and the log end never
	// ends up below it.
	promised int64
	snapLEO  int64 // the valid snapshot's LEO, -1 without one

	// The manifest as read (man, haveMan) and what Run learnt against it.
	man           Manifest
	haveMan       bool
	gapsDropped   bool            // man.Gaps lost ranges the manifest on disk still records
	limitOf       map[int64]int64 // present segment base -> next listed base
	missingActive int64           // the listed active segment when its file is gone, else -1
	missing       []Gap           // the listed sealed segments whose file is gone
	strays        []int64         // .log files the manifest does not list
}

// Run recovers the partition directory dir (doc.go): deletes temp files,
// restores from the snapshot when it matches the disk or scans every segment,
// truncates a torn tail, reports mid-file corruption without truncating it,
// rebuilds bad indexes and settles the high-watermark. With opts.ReadOnly it
// computes the same report without changing a byte.
//
// Damage is never an error: it is in the report. Errors are I/O failures and
// a directory Run cannot read.
func Run(dir string, opts Options) (*Result, error) {
	start := time.Now()
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &runner{
		dir:           dir,
		opts:          opts,
		missingActive: -1,
		rep: Report{
			Topic: opts.Topic, Partition: opts.Partition, Dir: dir, ReadOnly: opts.ReadOnly,
			PersistedHWM: -1, HiddenTailPolicy: opts.HiddenTail,
		},
	}
	res, err := r.run()
	if err != nil {
		r.closeAll()
		return nil, fmt.Errorf("recover %s: %w", dir, err)
	}
	r.rep.Duration = time.Since(start)
	res.Report = r.rep
	if opts.ReadOnly {
		r.closeAll()
	}
	return res, nil
}

func (r *runner) closeAll() {
	for _, s := range r.segs {
		if s.seg != nil {
			s.seg.Close()
		}
	}
}

func (r *runner) note(format string, a ...any) {
	r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(format, a...))
}

func (r *runner) run() (*Result, error) {
	if fi, err := os.Stat(r.dir); err != nil {
		if !errors.Is(err, fs.ErrNotExist) || r.opts.ReadOnly {
			return nil, err
		}
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return nil, err
		}
		if err := fsutil.SyncDir(filepath.Dir(filepath.Clean(r.dir))); err != nil {
			return nil, err
		}
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", r.dir)
	}
	if err := r.removeTemps(); err != nil {
		return nil, err
	}
	r.readHWM()
	bases, err := segment.List(r.dir)
	if err != nil {
		return nil, err
	}
	if bases, err = r.applyManifest(bases); err != nil {
		return nil, err
	}
	snap, snapErr := ReadSnapshot(r.dir)
	r.promised, r.snapLEO = max(acknowledgedEnd(r.rep.PersistedHWM, snap, snapErr), r.opts.RecordedHWM), -1
	if snapErr == nil {
		r.snapLEO = snap.LEO
	}
	if len(bases) == 0 {
		return r.newLog(snap, snapErr)
	}
	if err := r.openSegments(bases); err != nil {
		return nil, err
	}
	r.snapExists = !errors.Is(snapErr, fs.ErrNotExist)
	r.snap = snap
	if r.useSnapshot(snap, snapErr) {
		if err := r.fastPath(snap); err != nil {
			return nil, err
		}
	} else {
		r.rep.Path = PathFullScan
		for _, s := range r.segs {
			if err := r.scan(s, 0, s.base, -1, nil); err != nil {
				return nil, err
			}
		}
	}
	return r.finish()
}

// removeTemps deletes every .tmp-* file (only lists them when read-only).
func (r *runner) removeTemps() error {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !fsutil.IsTemp(e.Name()) || e.IsDir() {
			continue
		}
		if !r.opts.ReadOnly {
			if err := os.Remove(filepath.Join(r.dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove temp file: %w", err)
			}
		}
		r.rep.TempFilesRemoved = append(r.rep.TempFilesRemoved, e.Name())
	}
	if len(r.rep.TempFilesRemoved) > 0 && !r.opts.ReadOnly {
		return fsutil.SyncDir(r.dir)
	}
	return nil
}

// acknowledgedEnd is the offset below which Pulse acknowledged every record
// of a partition: the higher of the persisted hwm (-1 when unreadable) and
// the end a valid snapshot records (snapErr nil); -1 when neither says.
func acknowledgedEnd(hwm int64, snap Snapshot, snapErr error) int64 {
	if snapErr == nil {
		return max(hwm, snap.LEO)
	}
	return hwm
}

// AcknowledgedEnd is acknowledgedEnd of the partition directory dir, as Run
// takes it, reading its hwm file and snapshot and changing nothing.
func AcknowledgedEnd(dir string) int64 {
	hwm, err := ReadHWM(dir)
	if err != nil {
		hwm = -1
	}
	snap, snapErr := ReadSnapshot(dir)
	return acknowledgedEnd(hwm, snap, snapErr)
}

// acknowledgedBy names what said which offsets were acknowledged, for a
// lost range's reason.
func (r *runner) acknowledgedBy() string {
	s := fmt.Sprintf("persisted hwm %d, snapshot end %d", r.rep.PersistedHWM, r.snapLEO)
	if r.opts.RecordedHWM > 0 {
		s += fmt.Sprintf(", meta.db hwm %d", r.opts.RecordedHWM)
	}
	return s
}

// readHWM sets Report.PersistedHWM (-1 when missing or unreadable).
func (r *runner) readHWM() {
	v, err := ReadHWM(r.dir)
	switch {
	case err == nil:
		r.rep.PersistedHWM = v
	case errors.Is(err, fs.ErrNotExist):
	default:
		r.note("hwm file unreadable, treated as missing: %v", err)
	}
}

// newLog handles a directory without segments: a fresh segment, based past
// any offset the hwm, the snapshot or meta.db says was handed out, so none
// is reused.
func (r *runner) newLog(snap Snapshot, snapErr error) (*Result, error) {
	r.rep.Path = PathNew
	base := max(r.promised, 0)
	logStart := base
	switch {
	case r.haveMan:
		// Every listed segment is gone: what they held is a gap.
		first, last := r.man.Segments[0], r.man.Segments[len(r.man.Segments)-1]
		base = max(base, last)
		if base > first {
			r.addGap(Gap{FirstOffset: first, EndOffset: base, Reason: fmt.Sprintf("every segment the manifest lists (%d, from offset %d) is missing", len(r.man.Segments), first)})
			logStart = first
		}
	case r.rep.PersistedHWM < 0 && snapErr != nil && base > 0:
		// Nothing of the partition is left in its directory (emptied, or
		// gone), but meta.db recorded offsets up to base as handed out.
		r.addGap(Gap{FirstOffset: 0, EndOffset: base, Reason: fmt.Sprintf("the partition directory holds no segment, manifest, hwm or snapshot, and meta.db recorded offsets up to %d as handed out", base)})
		logStart = 0
	}
	if base > 0 {
		r.note("no segment files, but %s say offsets up to %d were used: the log restarts at %d", r.acknowledgedBy(), base, base)
	}
	// The lost range stays inside the log, as finish keeps it on every
	// later open, so reads from the earliest offset count it as skipped.
	r.rep.RecoveredEnd, r.rep.HWM, r.rep.LogStart = base, base, logStart
	r.rep.HiddenTail = 0
	res := &Result{LEO: base, HWM: base, LogStart: logStart, Gaps: r.rep.Gaps}
	if r.opts.ReadOnly {
		r.note("a new segment at base %d would be created", base)
		return res, nil
	}
	if err := r.writeManifest([]int64{base}); err != nil {
		return nil, err
	}
	seg, err := segment.Create(r.dir, base, r.segOptions())
	if err != nil {
		return nil, err
	}
	res.Segments = []*segment.Segment{seg}
	if r.rep.PersistedHWM != base {
		if err := WriteHWM(r.dir, base); err != nil {
			seg.Close()
			return nil, err
		}
	}
	return res, nil
}

// openSegments opens every segment (read-only when asked) and loads the
// on-disk indexes, noting index files that are missing or hold a partial entry.
func (r *runner) openSegments(bases []int64) error {
	for i, b := range bases {
		s := &segState{base: b, limit: maxOffset, sealed: i < len(bases)-1}
		if s.sealed {
			s.limit = bases[i+1]
			if l, ok := r.limitOf[b]; ok {
				s.limit = l // the next listed segment, whose file may be gone
			}
		}
		disk, problem, err := readIndexFile(filepath.Join(r.dir, segment.IndexFile(b)), b)
		if err != nil {
			return err
		}
		s.disk, s.diskProblem = disk, problem
		if r.opts.ReadOnly {
			s.seg, err = segment.OpenReadOnly(r.dir, b)
		} else {
			s.seg, err = segment.Open(r.dir, b, r.segOptions())
		}
		if err != nil {
			return err
		}
		r.segs = append(r.segs, s)
		s.size = s.seg.Size()
	}
	r.rep.LogStart = bases[0]
	return nil
}

// useSnapshot decides whether the snapshot describes the active segment on
// disk; when not, it records why in Report.SnapshotNote.
func (r *runner) useSnapshot(snap Snapshot, err error) bool {
	active := r.segs[len(r.segs)-1]
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.rep.SnapshotNote = "no snapshot"
	case err != nil:
		r.rep.SnapshotNote = fmt.Sprintf("snapshot unreadable: %v", err)
	case snap.ActiveBase != active.base:
		r.rep.SnapshotNote = fmt.Sprintf("snapshot names active segment %d, the disk has %d", snap.ActiveBase, active.base)
	case snap.ActiveSize > active.size:
		r.rep.SnapshotNote = fmt.Sprintf("snapshot is ahead of the log: %d bytes checkpointed, the active segment holds %d", snap.ActiveSize, active.size)
	default:
		return true
	}
	return false
}

// acknowledgedTail turns the torn tail out found at the end of an active
// segment of size bytes into a corrupt range when it holds offsets below
// promised, the acknowledged end. Those bytes
// hold offsets Pulse acknowledged (the persisted HWM and a snapshot only ever
// cover fsynced, verified batches): whatever field is damaged, this is
// corruption, never a torn write. Nothing is cut; the offsets up to the
// acknowledged end are a corrupt range that reads skip and count. Recovery
// and CheckSegmentFile (pulse verify) both decide with it.
func acknowledgedTail(out *scanOutput, size, promised int64) {
	if out.torn == nil || out.next >= promised {
		return
	}
	out.corrupt = append(out.corrupt, CorruptRange{
		Segment: out.torn.Segment, StartPos: out.torn.Position, EndPos: size,
		FirstOffset: out.next, EndOffset: promised,
		Err: fmt.Sprintf("%s (below the acknowledged end %d: kept, not truncated)", out.torn.Reason, promised),
	})
	out.torn = nil
	out.next = promised
}

// scan checks one segment from startPos (full scan: 0) and applies what it
// found: truncation of a torn tail, corrupt ranges, index rebuild.
// lastIndexed is the last on-disk index position before startPos (-1: none)
// and prefix the index entries kept before startPos.
func (r *runner) scan(s *segState, startPos, startOff, lastIndexed int64, prefix []indexEntry) error {
	out := scanSegment(scanInput{
		path: s.seg.Path(), r: s.seg, size: s.size, base: s.base, limit: s.limit, sealed: s.sealed,
		startPos: startPos, startOff: startOff, interval: int64(r.opts.IndexIntervalBytes),
		disk: s.disk, lastIndexed: lastIndexed, buf: r.buf,
	})
	r.buf = out.buf
	r.rep.SegmentsChecked++
	r.rep.BytesScanned += out.bytes
	r.rep.BatchesChecked += out.batches
	if !s.sealed {
		acknowledgedTail(&out, s.size, r.promised)
	}
	if len(out.corrupt) > 0 {
		r.rep.Corrupt = append(r.rep.Corrupt, out.corrupt...)
		r.rep.Degraded = true
	}
	if out.torn != nil {
		r.rep.Truncations = append(r.rep.Truncations, *out.torn)
		if !r.opts.ReadOnly {
			if err := s.seg.Truncate(out.torn.Position); err != nil {
				return err
			}
		}
		s.size = out.torn.Position
		kept := s.disk[:0:0]
		for _, e := range s.disk {
			if e.pos < out.torn.Position {
				kept = append(kept, e)
			}
		}
		s.disk = kept
	}
	if s.sealed {
		if g, ok := sealedShortfall(filepath.Base(s.seg.Path()), s.size, s.limit, out); ok {
			r.addGap(g)
		}
		s.end = s.limit
	} else {
		s.end = out.next
	}
	problem := s.diskProblem
	if problem == "" {
		problem = out.indexProblem
	}
	if problem != "" {
		idx := append(append([]indexEntry(nil), prefix...), out.index...)
		if err := r.rebuildIndex(s, idx, problem); err != nil {
			return err
		}
	}
	return nil
}

// rebuildIndex replaces a segment's index with entries (only reports it when
// read-only).
func (r *runner) rebuildIndex(s *segState, entries []indexEntry, why string) error {
	r.rep.IndexesRebuilt = append(r.rep.IndexesRebuilt, s.seg.IndexPath())
	r.note("%s: %s", filepath.Base(s.seg.IndexPath()), why)
	s.disk = entries
	s.diskProblem = ""
	if r.opts.ReadOnly {
		return nil
	}
	return setIndex(s.seg, s.base, entries)
}

// finish settles the high-watermark and builds the result.
func (r *runner) finish() (*Result, error) {
	active := r.segs[len(r.segs)-1]
	leo := active.end
	logStart := r.rep.LogStart
	persisted := r.rep.PersistedHWM
	if persisted < 0 && r.opts.RecordedHWM <= 0 {
		if leo > logStart {
			r.note("no hwm file: treating the persisted hwm as %d", logStart)
		}
		persisted = logStart
	}
	if r.opts.RecordedHWM > persisted {
		// What meta.db recorded was visible too: none of it is hidden.
		if r.rep.PersistedHWM >= 0 || leo > logStart {
			r.note("the hwm meta.db recorded, %d, is past the persisted hwm %d: used as the persisted hwm", r.opts.RecordedHWM, r.rep.PersistedHWM)
		}
		persisted = r.opts.RecordedHWM
	}
	// A lost range at the start (the first segment is gone) stays inside
	// the log, so reads from the earliest offset count it as skipped; so
	// does one ending where such a range starts (the first segments gone),
	// whatever the order the gaps are listed in.
	for moved := true; moved; {
		moved = false
		for _, g := range r.rep.Gaps {
			if g.FirstOffset < logStart && g.EndOffset >= logStart {
				logStart, moved = g.FirstOffset, true
			}
		}
	}
	r.rep.LogStart = logStart
	dataEnd := leo // the end of the records found, before any gap
	if r.missingActive >= 0 && r.promised <= leo {
		r.note("the manifest lists segment %s, which was never created (a roll was interrupted): nothing lost", segment.LogFile(r.missingActive))
	}
	if r.promised > leo {
		// Offsets up to r.promised were handed out and acknowledged: they
		// are a lost range, never handed out again.
		g := Gap{FirstOffset: leo, EndOffset: r.promised,
			Reason: fmt.Sprintf("the segments end at offset %d but offsets up to %d were acknowledged (%s)", leo, r.promised, r.acknowledgedBy())}
		if r.missingActive >= 0 {
			g.Reason = fmt.Sprintf("the active segment %s is missing; offsets up to %d were acknowledged (%s)",
				segment.LogFile(r.missingActive), r.promised, r.acknowledgedBy())
			r.rep.MissingSegments = append(r.rep.MissingSegments, fmt.Sprintf("%s (the active segment): offsets [%d, %d) gone", segment.LogFile(r.missingActive), leo, r.promised))
		}
		r.addGap(g)
		leo = r.promised
		active.end = leo
	}
	clamped := min(max(persisted, logStart), leo)
	if persisted > leo {
		r.note("persisted hwm %d is ahead of the recovered end %d: clamped", persisted, leo)
	}
	if r.rep.PersistedHWM > leo && len(r.rep.Truncations) > 0 {
		r.note("offsets [%d, %d) were visible before the crash and did not survive it", leo, r.rep.PersistedHWM)
	}
	hidden := max(dataEnd-clamped, 0) // records, not the gap's offsets
	hwm := clamped
	if r.opts.HiddenTail == HiddenTailExpose {
		hwm = leo
		if hidden > 0 && !r.opts.ReadOnly {
			for _, s := range r.segs {
				if s.end > clamped {
					if err := s.seg.Sync(); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if !r.opts.ReadOnly && r.rep.PersistedHWM != hwm {
		if err := WriteHWM(r.dir, hwm); err != nil {
			return nil, err
		}
	}
	if err := r.replaceStaleSnapshot(leo); err != nil {
		return nil, err
	}
	if !r.opts.ReadOnly {
		var present []int64
		for _, s := range r.segs {
			present = append(present, s.base)
		}
		if err := r.writeManifest(present); err != nil {
			return nil, err
		}
	}
	r.rep.RecoveredEnd = leo
	r.rep.HiddenTail = hidden
	r.rep.HWM = hwm
	res := &Result{LEO: leo, HWM: hwm, LogStart: logStart, Corrupt: r.rep.Corrupt, Gaps: r.rep.Gaps}
	if !r.opts.ReadOnly {
		for _, s := range r.segs {
			res.Segments = append(res.Segments, s.seg)
		}
	}
	return res, nil
}

// replaceStaleSnapshot replaces a snapshot that no longer describes the log
// (the full scan ran, or a truncation cut the active segment below the
// checkpoint): left in place, a later log that regrows past the old
// checkpoint could line up with it by chance. The recovered active segment is
// fsynced and checkpointed; when it holds a corrupt range the snapshot is
// removed instead, so the next open scans and reports the range again.
func (r *runner) replaceStaleSnapshot(leo int64) error {
	active := r.segs[len(r.segs)-1]
	if r.opts.ReadOnly || !r.snapExists || (r.rep.Path != PathFullScan && r.snap.ActiveSize <= active.size && len(r.rep.Gaps) == 0) {
		return nil
	}
	remove := len(r.rep.Gaps) > 0 // a snapshot would let the next open skip reporting them
	for _, c := range r.rep.Corrupt {
		remove = remove || c.Segment == active.seg.Path()
	}
	if remove {
		if err := os.Remove(filepath.Join(r.dir, SnapshotFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale snapshot: %w", err)
		}
		return fsutil.SyncDir(r.dir)
	}
	if err := active.seg.Sync(); err != nil {
		return err
	}
	return WriteSnapshot(r.dir, Snapshot{LEO: leo, ActiveBase: active.base, ActiveSize: active.size, ActiveNext: leo})
}

// sealedShortfall says whether a sealed segment (name, size bytes, the next
// segment's base limit) lost whole batches at its end, as scanned (out): its
// batches end at the next segment's base unless compaction removed the last
// offsets (sparse batches), and it is never empty (a roll only seals a
// segment holding a batch; compaction deletes one it empties).
func sealedShortfall(name string, size, limit int64, out scanOutput) (Gap, bool) {
	switch {
	case out.next >= limit:
		return Gap{}, false
	case size == 0:
		return Gap{FirstOffset: out.next, EndOffset: limit,
			Reason: fmt.Sprintf("sealed segment %s is empty, its offsets up to the next segment's base %d are gone", name, limit)}, true
	case out.endsInBatch && !out.lastSparse:
		return Gap{FirstOffset: out.next, EndOffset: limit,
			Reason: fmt.Sprintf("sealed segment %s ends at offset %d, before the next segment's base %d", name, out.next, limit)}, true
	}
	return Gap{}, false
}
