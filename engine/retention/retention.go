// Package retention deletes whole sealed segments of a partition log by age
// and by total size (docs/architecture.md, "engine/retention and engine/compact").
//
// A sealed segment is deleted by age when its newest record is older than
// Policy.MaxAge; sealed segments are deleted by size while the whole log,
// active segment included, is larger than Policy.MaxBytes. Deletion always
// takes the oldest segment first and stops at the first segment that may
// stay, so the log keeps a contiguous suffix and surviving offsets never
// change. The active segment is never deleted. With cursor protection, the
// segment holding a consumer's next offset is kept, and with it everything
// after it.
//
// Plan is a pure function over segment descriptions; Run applies it to a
// log inside a maintenance pass (which excludes compaction of the same log).
package retention

import (
	"fmt"
	"time"

	"github.com/pulselog/pulse/engine/plog"
)

// Reason says why a segment was deleted.
type Reason string

const (
	ReasonAge  Reason = "age"  // its newest record is older than MaxAge
	ReasonSize Reason = "size" // the log was larger than MaxBytes
)

// Outcomes of a retention run.
const (
	OutcomeTrimmed   = "trimmed"
	OutcomeNothing   = "nothing to do"
	OutcomeProtected = "kept by a consumer cursor" // something was due but a cursor holds it
)

// Policy is a topic's retention. A zero limit disables its axis.
type Policy struct {
	MaxAge   time.Duration
	MaxBytes int64
	// Cursors, when not nil, are the next offsets of live consumers: the
	// segment holding any of them is kept (retention.protect-cursors).
	Cursors []int64
}

// Segment is what Plan needs to know about one segment.
type Segment struct {
	Base          int64
	Next          int64 // exclusive end offset
	Bytes         int64
	Records       int64
	LastTimestamp int64 // newest record, Unix ms
	Sealed        bool
}

// Deletion is one segment Plan deletes.
type Deletion struct {
	Segment
	Reason Reason
}

// Counters count deleted segments, bytes and records.
type Counters struct {
	Segments int64 `json:"segments"`
	Bytes    int64 `json:"bytes"`
	Records  int64 `json:"records"`
}

// Add adds the figures of d.
func (c *Counters) Add(d Deletion) {
	c.Segments++
	c.Bytes += d.Bytes
	c.Records += d.Records
}

// Plan returns the segments to delete, oldest first, and whether a cursor
// kept a segment that would otherwise have been deleted. segs are all the
// segments of the log, oldest first, the active one last.
func Plan(segs []Segment, p Policy, now time.Time) (dels []Deletion, protected bool) {
	var total int64
	for _, s := range segs {
		total += s.Bytes
	}
	nowMS := now.UnixMilli()
	for _, s := range segs {
		if !s.Sealed {
			break
		}
		var reason Reason
		switch {
		case p.MaxAge > 0 && nowMS-s.LastTimestamp > p.MaxAge.Milliseconds():
			reason = ReasonAge
		case p.MaxBytes > 0 && total > p.MaxBytes:
			reason = ReasonSize
		default:
			return dels, false
		}
		if holdsCursor(s, p.Cursors) {
			return dels, true
		}
		dels = append(dels, Deletion{Segment: s, Reason: reason})
		total -= s.Bytes
	}
	return dels, false
}

func holdsCursor(s Segment, cursors []int64) bool {
	for _, c := range cursors {
		if c >= s.Base && c < s.Next {
			return true
		}
	}
	return false
}

// Result is one retention run over one partition.
type Result struct {
	Start       time.Time     `json:"start"`
	Duration    time.Duration `json:"duration"`
	Outcome     string        `json:"outcome"`
	Deleted     []Deletion    `json:"deleted,omitempty"`
	BytesBefore int64         `json:"bytes_before"` // whole log, active segment included
	BytesAfter  int64         `json:"bytes_after"`
	LogStart    int64         `json:"log_start"` // first offset kept
	Error       string        `json:"error,omitempty"`
}

// ByReason sums the deletions of r per reason.
func (r Result) ByReason() map[Reason]Counters {
	out := map[Reason]Counters{}
	for _, d := range r.Deleted {
		c := out[d.Reason]
		c.Add(d)
		out[d.Reason] = c
	}
	return out
}

// Run applies p to the log l at time now: it begins a maintenance pass
// (waiting for a running compaction to finish), deletes the segments Plan
// names, oldest first, and ends the pass. A failed deletion stops the run;
// the segments deleted before it stay deleted and are in the result.
func Run(l *plog.Log, p Policy, now time.Time) (Result, error) {
	start := time.Now()
	res := Result{Start: now}
	pass, err := l.BeginMaintenance(plog.PassRetention)
	if err != nil {
		res.Error = err.Error()
		return res, fmt.Errorf("retention of %s: %w", l.Dir(), err)
	}
	defer pass.End()
	all, err := l.Segments()
	if err != nil {
		res.Error = err.Error()
		return res, fmt.Errorf("retention of %s: %w", l.Dir(), err)
	}
	segs := make([]Segment, len(all))
	for i, s := range all {
		segs[i] = Segment{Base: s.Base, Next: s.Next, Bytes: s.Bytes, Records: s.Records, LastTimestamp: s.LastTimestamp, Sealed: s.Sealed}
		res.BytesBefore += s.Bytes
	}
	dels, protected := Plan(segs, p, now)
	res.BytesAfter = res.BytesBefore
	var runErr error
	for _, d := range dels {
		if err := pass.TrimOldest(d.Base); err != nil {
			runErr = fmt.Errorf("retention of %s: %w", l.Dir(), err)
			break
		}
		res.Deleted = append(res.Deleted, d)
		res.BytesAfter -= d.Bytes
	}
	res.LogStart = l.LogStart()
	switch {
	case len(res.Deleted) > 0:
		res.Outcome = OutcomeTrimmed
	case protected:
		res.Outcome = OutcomeProtected
	default:
		res.Outcome = OutcomeNothing
	}
	res.Duration = time.Since(start)
	if runErr != nil {
		res.Error = runErr.Error()
	}
	return res, runErr
}
