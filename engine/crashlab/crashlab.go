// Package crashlab shows what a crash does to a partition and what
// recovery does about it. It copies one partition directory to a scratch
// directory (the original's files are only ever opened read-only), damages
// the copy with one Fault — a torn write, a flipped bit, a lost or garbled
// index, snapshot or hwm file, an orphan temp file, a crash in the middle of
// a compaction — runs the real recovery (recovery.Run, not read-only: it
// is a copy) on it and on an untouched copy, and compares the two: the
// reports side by side, which records survive, which were truncated, which
// are now skipped as corrupt or hidden, and a one-line verdict.
//
// `pulse crashlab` and the terminal UI's crash lab screen both run it.
package crashlab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/textcol"
)

// Options configure Run. The zero value is valid.
type Options struct {
	// Topic and Partition label the reports.
	Topic     string
	Partition int
	// Label names the partition in the reports' dir line, e.g. the
	// partition directory relative to the data dir; default the
	// directory's base name. Scratch paths never appear in a Result.
	Label string

	// ScratchDir is where the copies are made (in a new directory inside
	// it); default os.TempDir(). The copies are removed when Run returns
	// unless Keep is set.
	ScratchDir string
	Keep       bool

	// HiddenTail and IndexIntervalBytes are passed to recovery (defaults:
	// recovery's, expose and 4 KiB).
	HiddenTail         recovery.HiddenTailPolicy
	IndexIntervalBytes int

	// Seed drives the garbage bytes of the corrupt faults; default 1, so a
	// fault gives the same bytes every time.
	Seed uint64
}

// Result is what one fault did.
type Result struct {
	Partition string `json:"partition"` // "topic/pN" or the label
	Fault     Fault  `json:"-"`
	FaultSpec string `json:"fault"`   // Fault.String(): defaults resolved
	Applied   string `json:"applied"` // what the surgery did to the copy
	// Healthy is recovery on the untouched copy, Faulted on the damaged
	// one. Their paths are relative: Dir is the label, segment and index
	// paths are file names.
	Healthy recovery.Report `json:"healthy"`
	Faulted recovery.Report `json:"faulted"`

	HealthyRecords int64 `json:"healthy_records"` // readable from the untouched copy
	Survivors      int64 `json:"survivors"`       // readable from the faulted copy after recovery
	Visible        int64 `json:"visible"`         // survivors below the faulted copy's HWM
	Hidden         int64 `json:"hidden"`          // survivors at or past it (hidden tail, policy hide)

	Lost []OffsetRange `json:"lost,omitempty"` // healthy records gone after recovery
	// Where the lost records went: cut off with a torn tail, inside a
	// corrupt range reads skip, or removed by the rewrite of a compaction
	// (superseded keys: not a loss).
	Truncated int64 `json:"truncated"`
	Skipped   int64 `json:"skipped"`
	Compacted int64 `json:"compacted"`
	// WasVisible counts lost records that were below the healthy HWM:
	// records a consumer could already have read.
	WasVisible int64 `json:"was_visible"`
	// FoundOnRead is damage recovery did not see at open (the snapshot
	// path trusts the checksummed data it does not scan) and the first
	// read of it finds: the log then skips it, counts the records and
	// marks the partition degraded, as for a range recovery reported.
	// Segment is a file name.
	FoundOnRead []recovery.CorruptRange `json:"found_on_read,omitempty"`
	// Changed are offsets whose record differs between the copies: never
	// expected, a silently wrong record.
	Changed []OffsetRange `json:"changed,omitempty"`

	Verdict  string   `json:"verdict"`
	Findings []string `json:"findings"`
}

// Run applies fault f to a scratch copy of the partition directory dir and
// compares recovery on it with recovery on an untouched copy. dir itself is
// only read. Errors: ErrBadFault, ErrNotApplicable, I/O failures.
func Run(dir string, f Fault, opts Options) (*Result, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("crashlab: partition %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("crashlab: %s is not a partition directory", dir)
	}
	if opts.Label == "" {
		opts.Label = filepath.Base(dir)
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	scratch, err := os.MkdirTemp(opts.ScratchDir, "pulse-crashlab-")
	if err != nil {
		return nil, fmt.Errorf("crashlab: scratch directory: %w", err)
	}
	if !opts.Keep {
		defer os.RemoveAll(scratch)
	}
	healthyDir, faultedDir := filepath.Join(scratch, "healthy"), filepath.Join(scratch, "faulted")
	if err := copyPartition(dir, healthyDir); err != nil {
		return nil, fmt.Errorf("crashlab: %w", err)
	}
	if err := copyPartition(dir, faultedDir); err != nil {
		return nil, fmt.Errorf("crashlab: %w", err)
	}
	resolved, err := Resolve(faultedDir, f)
	if err != nil {
		return nil, fmt.Errorf("crashlab: %w", err)
	}
	ropts := recovery.Options{Topic: opts.Topic, Partition: opts.Partition,
		HiddenTail: opts.HiddenTail, IndexIntervalBytes: opts.IndexIntervalBytes}
	healthy, err := recoverDir(healthyDir, ropts)
	if err != nil {
		return nil, fmt.Errorf("crashlab: healthy copy: %w", err)
	}
	applied, err := apply(faultedDir, resolved, healthy, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("crashlab: apply %s: %w", resolved, err)
	}
	faulted, err := recoverDir(faultedDir, ropts)
	if err != nil {
		return nil, fmt.Errorf("crashlab: faulted copy: %w", err)
	}
	hrecs, _, err := survey(healthyDir, healthy)
	if err != nil {
		return nil, fmt.Errorf("crashlab: healthy copy: %w", err)
	}
	frecs, onRead, err := survey(faultedDir, faulted)
	if err != nil {
		return nil, fmt.Errorf("crashlab: faulted copy: %w", err)
	}
	res := &Result{Fault: resolved, FaultSpec: resolved.String(), Applied: applied,
		HealthyRecords: int64(len(hrecs)), Survivors: int64(len(frecs)), FoundOnRead: onRead}
	for _, r := range frecs {
		if r.off < faulted.HWM {
			res.Visible++
		} else {
			res.Hidden++
		}
	}
	res.classify(compare(hrecs, frecs), healthy, faulted)
	res.Healthy = relReport(*healthy, healthyDir, opts.Label+" (healthy copy)")
	res.Faulted = relReport(*faulted, faultedDir, opts.Label+" (faulted copy)")
	res.Partition = res.Faulted.Name()
	if opts.Topic == "" {
		res.Partition = opts.Label
	}
	res.judge()
	return res, nil
}

// recoverDir runs the real recovery on a copy and closes what it opened.
func recoverDir(dir string, opts recovery.Options) (*recovery.Report, error) {
	res, err := recovery.Run(dir, opts)
	if err != nil {
		return nil, err
	}
	for _, s := range res.Segments {
		s.Close()
	}
	rep := res.Report
	return &rep, nil
}

// classify sorts the lost offsets into truncated, skipped and compacted.
func (res *Result) classify(d diff, healthy, faulted *recovery.Report) {
	res.Lost = ranges(d.lost)
	res.Changed = ranges(d.changed)
	for _, o := range d.lost {
		switch {
		case inCorrupt(faulted.Corrupt, o) || inCorrupt(res.FoundOnRead, o):
			res.Skipped++
		case o >= faulted.RecoveredEnd:
			res.Truncated++
		case res.Fault.Kind == CompactionCrash:
			res.Compacted++
		default:
			// Lost inside the log without a corrupt range: counted with
			// the truncated ones, and flagged by judge.
			res.Truncated++
		}
		if o < healthy.HWM {
			res.WasVisible++
		}
	}
	// Offsets only the faulted copy has are as wrong as changed ones.
	res.Changed = append(res.Changed, ranges(d.extra)...)
}

func inCorrupt(rs []recovery.CorruptRange, off int64) bool {
	for _, c := range rs {
		if off >= c.FirstOffset && (c.EndOffset < 0 || off < c.EndOffset) {
			return true
		}
	}
	return false
}

// relReport makes a report's paths relative to the copy it ran on.
func relReport(r recovery.Report, dir, label string) recovery.Report {
	r.Dir = label
	rel := func(p string) string {
		if q, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(q, "..") {
			return q
		}
		return filepath.Base(p)
	}
	r.IndexesRebuilt = append([]string(nil), r.IndexesRebuilt...)
	for i, p := range r.IndexesRebuilt {
		r.IndexesRebuilt[i] = rel(p)
	}
	r.Truncations = append([]recovery.Truncation(nil), r.Truncations...)
	for i := range r.Truncations {
		r.Truncations[i].Segment = rel(r.Truncations[i].Segment)
	}
	r.Corrupt = append([]recovery.CorruptRange(nil), r.Corrupt...)
	for i := range r.Corrupt {
		r.Corrupt[i].Segment = rel(r.Corrupt[i].Segment)
	}
	r.Notes = append([]string(nil), r.Notes...)
	for i, n := range r.Notes {
		r.Notes[i] = strings.ReplaceAll(n, dir+string(filepath.Separator), "")
	}
	if r.SnapshotNote != "" {
		r.SnapshotNote = strings.ReplaceAll(r.SnapshotNote, dir+string(filepath.Separator), "")
	}
	return r
}

// judge writes the verdict and the findings.
func (res *Result) judge() {
	h, f := &res.Healthy, &res.Faulted
	var find []string
	add := func(format string, a ...any) { find = append(find, fmt.Sprintf(format, a...)) }
	add("recovery path: %s (healthy copy: %s)", pathWithNote(f), pathWithNote(h))
	add("%d of %d records survive (%d visible, %d hidden)", res.Survivors, res.HealthyRecords, res.Visible, res.Hidden)
	if n := f.TruncatedBytes() - h.TruncatedBytes(); n > 0 || len(f.Truncations) > len(h.Truncations) {
		for _, t := range f.Truncations {
			add("torn tail: %s truncated at %d, %d bytes removed (%s)", filepath.Base(t.Segment), t.Position, t.Bytes, t.Reason)
		}
	}
	if res.Truncated > 0 {
		add("%d records lost with the truncated bytes", res.Truncated)
	}
	for _, c := range f.Corrupt {
		add("corrupt range: %s bytes [%d, %d) offsets [%d, %d): %s", filepath.Base(c.Segment), c.StartPos, c.EndPos, c.FirstOffset, c.EndOffset, c.Err)
	}
	for _, c := range res.FoundOnRead {
		add("not seen by recovery (%s path), found on the first read: %s bytes [%d, %d) offsets [%d, %s)",
			f.Path, c.Segment, c.StartPos, c.EndPos, c.FirstOffset, endString(c.EndOffset))
	}
	for _, g := range f.Gaps {
		add("lost offsets [%d, %d): %s; never handed out again, reads skip and count them", g.FirstOffset, g.EndOffset, g.Reason)
	}
	if res.Skipped > 0 {
		add("%d records inside corrupt ranges: reads skip and count them", res.Skipped)
	}
	if res.Compacted > 0 {
		add("%d superseded records removed by the interrupted compaction (the newest value of every key survives)", res.Compacted)
	}
	if res.WasVisible > 0 {
		add("%d lost records were below the healthy HWM %d: a consumer could have read them", res.WasVisible, h.HWM)
	}
	if len(res.Lost) > 0 {
		add("lost offsets: %s", rangeList(res.Lost, 4))
	}
	for _, p := range f.IndexesRebuilt {
		add("index %s rebuilt from the data", filepath.Base(p))
	}
	for _, t := range f.TempFilesRemoved {
		add("temp file %s removed", t)
	}
	if f.PersistedHWM != h.PersistedHWM {
		add("persisted hwm %s (healthy copy %s); recovered end %d, hwm %d, hidden tail %d (%s)",
			hwmString(f.PersistedHWM), hwmString(h.PersistedHWM), f.RecoveredEnd, f.HWM, f.HiddenTail, f.HiddenTailPolicy)
	}
	if len(res.Changed) > 0 {
		add("WRONG RECORDS: offsets %s differ from the healthy copy", rangeList(res.Changed, 4))
	}
	res.Findings = find

	var v []string
	switch {
	case len(res.Changed) > 0:
		v = append(v, "BUG: recovery returned records that differ from the healthy copy")
	case f.Degraded && len(f.Corrupt) == 0:
		if len(res.Lost) == 0 {
			v = append(v, "no record lost")
		}
		v = append(v, fmt.Sprintf("DEGRADED: %d lost offset range(s) (%d offsets), never handed out again", len(f.Gaps), f.GapRecords()))
	case f.Degraded:
		v = append(v, fmt.Sprintf("DEGRADED: %d corrupt range(s), %d records skipped, nothing truncated after them", len(f.Corrupt), res.Skipped))
	case len(res.FoundOnRead) > 0:
		v = append(v, fmt.Sprintf("recovery trusted the %s path; the first read finds %d corrupt range(s) and the partition turns DEGRADED, %d records skipped", f.Path, len(res.FoundOnRead), res.Skipped))
	case res.Truncated > 0:
		v = append(v, fmt.Sprintf("torn tail truncated: %d bytes, %d records lost", f.TruncatedBytes(), res.Truncated))
	case len(res.Lost) == 0:
		v = append(v, "no record lost")
	}
	if res.Compacted > 0 {
		v = append(v, fmt.Sprintf("%d superseded records compacted away", res.Compacted))
	}
	if n := len(f.IndexesRebuilt) - len(h.IndexesRebuilt); n > 0 {
		v = append(v, fmt.Sprintf("%d index(es) rebuilt", n))
	}
	if n := len(f.TempFilesRemoved) - len(h.TempFilesRemoved); n > 0 {
		v = append(v, fmt.Sprintf("%d temp file(s) removed", n))
	}
	if f.Path != h.Path {
		v = append(v, fmt.Sprintf("%s instead of %s", f.Path, h.Path))
	}
	if f.HiddenTail > h.HiddenTail {
		v = append(v, fmt.Sprintf("hidden tail %d (%s)", f.HiddenTail, f.HiddenTailPolicy))
	}
	if f.PersistedHWM > f.RecoveredEnd {
		v = append(v, fmt.Sprintf("persisted hwm %d clamped to %d", f.PersistedHWM, f.RecoveredEnd))
	}
	if len(f.Gaps) > 0 {
		v = append(v, fmt.Sprintf("log end kept at %d (offsets are never reused)", f.RecoveredEnd))
	}
	if res.Hidden > 0 {
		v = append(v, fmt.Sprintf("%d records hidden until the next commit", res.Hidden))
	}
	res.Verdict = res.FaultSpec + ": " + strings.Join(v, "; ")
}

func endString(v int64) string {
	if v < 0 {
		return "end"
	}
	return fmt.Sprint(v)
}

func pathWithNote(r *recovery.Report) string {
	if r.SnapshotNote != "" {
		return r.Path + " (" + r.SnapshotNote + ")"
	}
	return r.Path
}

func hwmString(v int64) string {
	if v < 0 {
		return "none"
	}
	return fmt.Sprint(v)
}

func rangeList(rs []OffsetRange, max int) string {
	var s []string
	for i, r := range rs {
		if i == max {
			s = append(s, fmt.Sprintf("and %d more", len(rs)-max))
			break
		}
		s = append(s, r.String())
	}
	return strings.Join(s, ", ")
}

// SideBySide lays two reports' lines out in two columns (textcol.SideBySide).
func SideBySide(leftTitle string, left []string, rightTitle string, right []string, width int) []string {
	return textcol.SideBySide(leftTitle, left, rightTitle, right, width)
}
