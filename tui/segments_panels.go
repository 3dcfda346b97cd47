package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/pulselog/pulse/engine"
)

// The three panels under the segments table: the recovery snapshot, the
// retention status and the compaction status of the partition.

func (s *segmentsScreen) snapshotLines() []string {
	if s.snap == nil {
		return []string{"reading…"}
	}
	var lines []string
	switch sn, err := s.snap.snap, s.snap.err; {
	case errors.Is(err, fs.ErrNotExist):
		lines = append(lines, "file    none yet: written on roll", "        and close")
	case err != nil:
		lines = append(lines, "file    unusable: next open scans", "        "+err.Error())
	default:
		lines = append(lines,
			"leo     "+humanCount(sn.LEO),
			"active  segment "+humanCount(sn.ActiveBase),
			"covers  "+humanBytes(sn.ActiveSize)+" of it")
	}
	if r := s.snap.report; r != nil {
		lines = append(lines, fmt.Sprintf("open    %s in %s", r.Path, s.c.Opts.FormatDuration(r.Duration)))
		if r.SnapshotNote != "" {
			lines = append(lines, "        "+r.SnapshotNote)
		}
		if r.HiddenTail > 0 {
			lines = append(lines, fmt.Sprintf("hidden  %s records (%s)", humanCount(r.HiddenTail), r.HiddenTailPolicy))
		}
		if r.Degraded {
			lines = append(lines, fmt.Sprintf("DEGRADED: %d corrupt ranges", len(r.Corrupt)))
		}
	}
	return lines
}

func (s *segmentsScreen) retentionLines() []string {
	cfg := s.info.Config
	ft := s.c.Opts.FormatTime
	lines := []string{"limits  " + retention(cfg)}
	var sealed []engine.SegmentInfo
	var total int64
	for _, sg := range s.segs {
		total += sg.Bytes
		if sg.Sealed {
			sealed = append(sealed, sg)
		}
	}
	lines = append(lines, fmt.Sprintf("sealed  %d of %s, %s", len(sealed), plural(int64(len(s.segs)), "segment", "segments"), humanBytes(total)))
	next := "next    nothing due"
	switch {
	case len(sealed) == 0:
		next = "next    none (the active segment stays)"
	case cfg.RetentionMaxBytes > 0 && total > cfg.RetentionMaxBytes:
		next = fmt.Sprintf("next    segment %s: %s over", humanCount(sealed[0].Base), humanBytes(total-cfg.RetentionMaxBytes))
	case cfg.RetentionMaxAge > 0:
		due := time.UnixMilli(sealed[0].LastTimestamp).Add(cfg.RetentionMaxAge)
		when := "at " + ft(due.UnixMilli())
		if !s.c.Opts.Now().Before(due) {
			when = "due now"
		}
		next = fmt.Sprintf("next    segment %s %s", humanCount(sealed[0].Base), when)
	}
	lines = append(lines, next)
	switch {
	case s.maintEr != nil:
		lines = append(lines, "status  "+s.maintEr.Error())
	case s.maint == nil:
		lines = append(lines, "status  "+ErrNotAvailable.Error())
	default:
		m := s.maint
		lines = append(lines, s.runLines(m.LastRetention)...)
		if r := m.LastRetention; r != nil && r.SegmentsDeleted > 0 {
			lines = append(lines, fmt.Sprintf("freed   %s, %s", plural(int64(r.SegmentsDeleted), "segment", "segments"), humanBytes(r.BytesBefore-r.BytesAfter)))
		}
		if !m.NextRetention.IsZero() {
			lines = append(lines, "sweep   "+ft(m.NextRetention.UnixMilli()))
		}
	}
	return append(lines, s.c.Keys.RetainNow.Help().Key+": retention pass on the topic now")
}

func (s *segmentsScreen) compactionLines() []string {
	cfg := s.info.Config
	if cfg.Cleanup != engine.CleanupCompact {
		return []string{"cleanup " + string(cfg.Cleanup) + ": not compacted", "", "topics created with cleanup", "compact keep the newest value", "of every key"}
	}
	ft := s.c.Opts.FormatTime
	switch {
	case s.maintEr != nil:
		return []string{"status  " + s.maintEr.Error()}
	case s.maint == nil:
		return []string{"status  " + ErrNotAvailable.Error()}
	}
	m := s.maint
	lines := s.runLines(m.LastCompaction)
	if r := m.LastCompaction; r != nil {
		lines = append(lines,
			fmt.Sprintf("segs    %d rewritten, %d deleted", r.SegmentsRewritten, r.SegmentsDeleted),
			fmt.Sprintf("freed   %s, %s records", humanBytes(r.BytesBefore-r.BytesAfter), humanCount(r.RecordsDropped)))
	}
	dirty := fmt.Sprintf("dirty   %.0f%%", m.DirtyRatio*100)
	if r := m.LastCompaction; r != nil {
		dirty += fmt.Sprintf(", %s tombstones dropped", humanCount(r.TombstonesDropped))
	}
	if m.Compacting {
		dirty += "  (compacting now)"
	}
	lines = append(lines, dirty)
	if !m.NextCompaction.IsZero() {
		lines = append(lines, "sweep   "+ft(m.NextCompaction.UnixMilli()))
	}
	return append(lines, s.c.Keys.CompactNow.Help().Key+": compact the topic now")
}

// runLines renders the last run of one maintenance pass.
func (s *segmentsScreen) runLines(r *engine.MaintenanceRun) []string {
	if r == nil {
		return []string{"last    never"}
	}
	lines := []string{"last    " + s.c.Opts.FormatTime(r.At.UnixMilli()),
		fmt.Sprintf("        %s in %s", r.Outcome, s.c.Opts.FormatDuration(r.Duration))}
	if r.Error != "" {
		lines = append(lines, "error   "+r.Error)
	}
	return lines
}
