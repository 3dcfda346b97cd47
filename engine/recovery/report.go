package recovery

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// Recovery paths, in Report.Path.
const (
	PathNew      = "new"       // empty directory: a fresh segment at the start offset
	PathSnapshot = "snapshot"  // valid snapshot, active segment exactly as checkpointed
	PathDelta    = "delta"     // valid snapshot, the active segment's growth since scanned
	PathFullScan = "full-scan" // no usable snapshot: every segment scanned
)

// Truncation is one cut of a segment's torn tail.
type Truncation struct {
	Segment  string `json:"segment"`  // path of the .log file
	Position int64  `json:"position"` // new size: the last valid batch boundary
	Bytes    int64  `json:"bytes"`    // bytes removed
	Reason   string `json:"reason"`   // what was wrong with the first removed byte
}

// CorruptRange is a damaged region of a segment with valid data after it.
// It is never truncated: reads skip it and count the records it held.
type CorruptRange struct {
	Segment     string `json:"segment"`      // path of the .log file
	StartPos    int64  `json:"start_pos"`    // first damaged byte
	EndPos      int64  `json:"end_pos"`      // position of the next valid batch (or the file end)
	FirstOffset int64  `json:"first_offset"` // first offset that may have been stored there
	EndOffset   int64  `json:"end_offset"`   // exclusive: base of the next valid batch (or the segment end)
	Err         string `json:"error"`        // why the bytes at StartPos were rejected
}

// Records is the number of offsets the range may have held.
func (c CorruptRange) Records() int64 { return c.EndOffset - c.FirstOffset }

// Gap is a range of offsets Pulse handed out whose bytes are gone (a deleted
// or renamed segment, a log end below the persisted HWM). Its offsets are
// never handed out again: reads skip them and count them as skipped.
type Gap struct {
	FirstOffset int64  `json:"first_offset"`
	EndOffset   int64  `json:"end_offset"` // exclusive
	Reason      string `json:"reason"`
}

// Records is the number of offsets the gap covers.
func (g Gap) Records() int64 { return g.EndOffset - g.FirstOffset }

// Report says what recovery did (or, read-only, would do) to one partition.
// It is stored in meta.db, shown by the terminal UI and printed by
// `pulse inspect`; Lines renders it the same way for both.
type Report struct {
	Topic     string `json:"topic,omitempty"`
	Partition int    `json:"partition"`
	Dir       string `json:"dir"`
	ReadOnly  bool   `json:"read_only,omitempty"` // computed without changing a byte

	Path            string        `json:"path"` // PathNew, PathSnapshot, PathDelta or PathFullScan
	Duration        time.Duration `json:"duration_ns"`
	BytesScanned    int64         `json:"bytes_scanned"` // bytes read and CRC-checked
	SegmentsChecked int           `json:"segments_checked"`
	BatchesChecked  int64         `json:"batches_checked"` // CRC-verified batches

	IndexesRebuilt   []string       `json:"indexes_rebuilt,omitempty"`    // .index paths
	TempFilesRemoved []string       `json:"temp_files_removed,omitempty"` // file names
	Truncations      []Truncation   `json:"truncations,omitempty"`
	Corrupt          []CorruptRange `json:"corrupt,omitempty"`
	// Gaps are lost offset ranges (recorded in the manifest, so every
	// later open reports them again).
	Gaps []Gap `json:"gaps,omitempty"`
	// Segments the manifest lists that are not on disk, and .log files on
	// disk the manifest does not list (reported, left alone, never read).
	MissingSegments []string `json:"missing_segments,omitempty"`
	StraySegments   []string `json:"stray_segments,omitempty"`

	PersistedHWM     int64            `json:"persisted_hwm"` // -1 when the hwm file was missing or unreadable
	RecoveredEnd     int64            `json:"recovered_end"` // log end offset after recovery
	HiddenTail       int64            `json:"hidden_tail"`   // recovered end minus the clamped persisted HWM
	HiddenTailPolicy HiddenTailPolicy `json:"hidden_tail_policy"`
	HWM              int64            `json:"hwm"` // the high-watermark the log starts with
	LogStart         int64            `json:"log_start"`
	Degraded         bool             `json:"degraded"` // corrupt ranges, gaps, missing or stray segments present

	SnapshotNote string   `json:"snapshot_note,omitempty"` // why the snapshot was not used
	Notes        []string `json:"notes,omitempty"`
}

// NeedsWork says whether recovery had anything to do beyond a clean open:
// true for anything other than a new partition or a snapshot path with
// nothing removed, rebuilt, truncated, corrupt or hidden.
func (r *Report) NeedsWork() bool {
	if r.Path != PathNew && r.Path != PathSnapshot {
		return true
	}
	return len(r.IndexesRebuilt) > 0 || len(r.TempFilesRemoved) > 0 || len(r.Truncations) > 0 ||
		len(r.Corrupt) > 0 || len(r.Gaps) > 0 || len(r.MissingSegments) > 0 || len(r.StraySegments) > 0 ||
		r.HiddenTail > 0 || r.Degraded
}

// TruncatedBytes is the total of all truncations.
func (r *Report) TruncatedBytes() int64 {
	var n int64
	for _, t := range r.Truncations {
		n += t.Bytes
	}
	return n
}

// CorruptRecords is the number of offsets inside corrupt ranges.
func (r *Report) CorruptRecords() int64 {
	var n int64
	for _, c := range r.Corrupt {
		n += c.Records()
	}
	return n
}

// GapRecords is the number of offsets inside gaps.
func (r *Report) GapRecords() int64 {
	var n int64
	for _, g := range r.Gaps {
		n += g.Records()
	}
	return n
}

// Name is "topic/pN" when the topic is known, else the directory.
func (r *Report) Name() string {
	if r.Topic != "" {
		return fmt.Sprintf("%s/p%d", r.Topic, r.Partition)
	}
	return r.Dir
}

// Summary is a one-line human summary, as logged for a partition that
// needed work.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s in %s", r.Name(), r.Path, r.Duration.Round(time.Microsecond))
	if r.BytesScanned > 0 {
		fmt.Fprintf(&b, ", scanned %s in %d batches", humanBytes(r.BytesScanned), r.BatchesChecked)
	}
	fmt.Fprintf(&b, ", end %d, hwm %d", r.RecoveredEnd, r.HWM)
	if r.HiddenTail > 0 {
		fmt.Fprintf(&b, ", hidden tail %d (%s)", r.HiddenTail, r.HiddenTailPolicy)
	}
	if n := len(r.Truncations); n > 0 {
		fmt.Fprintf(&b, ", truncated %d bytes", r.TruncatedBytes())
	}
	if len(r.Corrupt) > 0 {
		fmt.Fprintf(&b, ", DEGRADED: %d corrupt ranges (%d offsets)", len(r.Corrupt), r.CorruptRecords())
	}
	if len(r.Gaps) > 0 {
		fmt.Fprintf(&b, ", DEGRADED: %d lost offset ranges (%d offsets)", len(r.Gaps), r.GapRecords())
	}
	if n := len(r.MissingSegments); n > 0 {
		fmt.Fprintf(&b, ", %d segments missing", n)
	}
	if n := len(r.StraySegments); n > 0 {
		fmt.Fprintf(&b, ", %d stray segment files left alone", n)
	}
	if n := len(r.IndexesRebuilt); n > 0 {
		fmt.Fprintf(&b, ", %d indexes rebuilt", n)
	}
	if n := len(r.TempFilesRemoved); n > 0 {
		fmt.Fprintf(&b, ", %d temp files removed", n)
	}
	if r.ReadOnly && r.NeedsWork() {
		b.WriteString(" (read-only: nothing changed)")
	}
	return b.String()
}

// Lines renders the report as text lines, the form shared by `pulse
// inspect` and the terminal UI's recovery inspector.
func (r *Report) Lines() []string {
	var l []string
	add := func(format string, a ...any) { l = append(l, fmt.Sprintf(format, a...)) }
	verb := func(done, would string) string {
		if r.ReadOnly {
			return would
		}
		return done
	}
	state := "ok"
	switch {
	case r.Degraded:
		state = "DEGRADED"
	case r.NeedsWork():
		state = "recovered"
	}
	add("partition %s  [%s]", r.Name(), state)
	add("  dir             %s", r.Dir)
	path := r.Path
	if r.SnapshotNote != "" {
		path += " (" + r.SnapshotNote + ")"
	}
	add("  path            %s", path)
	add("  duration        %s", r.Duration.Round(time.Microsecond))
	add("  scanned         %s, %d segments, %d batches", humanBytes(r.BytesScanned), r.SegmentsChecked, r.BatchesChecked)
	add("  log             start %d, end %d", r.LogStart, r.RecoveredEnd)
	persisted := "none"
	if r.PersistedHWM >= 0 {
		persisted = fmt.Sprint(r.PersistedHWM)
	}
	add("  hwm             %d (persisted %s, hidden tail %d, policy %s)", r.HWM, persisted, r.HiddenTail, r.HiddenTailPolicy)
	for _, t := range r.TempFilesRemoved {
		add("  temp file       %s %s", t, verb("removed", "would be removed"))
	}
	for _, p := range r.IndexesRebuilt {
		add("  index           %s %s", filepath.Base(p), verb("rebuilt", "would be rebuilt"))
	}
	for _, t := range r.Truncations {
		add("  truncation      %s %s at %d: %d bytes (%s)", filepath.Base(t.Segment), verb("truncated", "would be truncated"), t.Position, t.Bytes, t.Reason)
	}
	for _, c := range r.Corrupt {
		add("  CORRUPT         %s bytes [%d, %d) offsets [%d, %d): %s", filepath.Base(c.Segment), c.StartPos, c.EndPos, c.FirstOffset, c.EndOffset, c.Err)
	}
	for _, g := range r.Gaps {
		add("  LOST            offsets [%d, %d): %s", g.FirstOffset, g.EndOffset, g.Reason)
	}
	for _, m := range r.MissingSegments {
		add("  MISSING         %s", m)
	}
	for _, m := range r.StraySegments {
		add("  STRAY           %s", m)
	}
	for _, n := range r.Notes {
		add("  note            %s", n)
	}
	return l
}

// Render writes Lines to w, one per line.
func (r *Report) Render(w io.Writer) error {
	for _, s := range r.Lines() {
		if _, err := io.WriteString(w, s+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
