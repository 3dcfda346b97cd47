package plog

import (
	"fmt"
	"math"
	"sync"

	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// corruptSet is the list of corrupt ranges reads skip: the ones recovery
// reported at open and the ones reads discover in sealed segments later.
type corruptSet struct {
	// mu guards ranges.
	mu     sync.Mutex
	ranges []recovery.CorruptRange
}

func (c *corruptSet) add(rs ...recovery.CorruptRange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ranges = append(c.ranges, rs...)
}

func (c *corruptSet) list() []recovery.CorruptRange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]recovery.CorruptRange(nil), c.ranges...)
}

// find returns the known range of segment path that holds pos.
func (c *corruptSet) find(path string, pos int64) (recovery.CorruptRange, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.ranges {
		if r.Segment == path && r.StartPos <= pos && pos < r.EndPos {
			return r, true
		}
	}
	return recovery.CorruptRange{}, false
}

// corruptAt handles a batch at pos of st that failed to read with cause. A
// known corrupt range is returned as is. Otherwise the damage is new (bit rot
// in a sealed segment shows up here, on read): the segment is searched
// forward for the next batch whose header and CRC check out, the range up to
// it is recorded, the partition becomes degraded, and the loss is logged.
// Nothing is ever truncated or silently returned.
func (l *Log) corruptAt(st *segState, pos, from, limit, nextBase int64, cause error) (recovery.CorruptRange, error) {
	path := st.seg.Path()
	if r, ok := l.corrupt.find(path, pos); ok {
		return r, nil
	}
	r := recovery.CorruptRange{Segment: path, StartPos: pos, EndPos: limit, FirstOffset: from, Err: cause.Error()}
	endOffset := nextBase
	if endOffset < 0 {
		endOffset = l.durable.Load()
	}
	limitOffset := nextBase
	if limitOffset < 0 {
		limitOffset = math.MaxInt64
	}
	if next, base, ok := segment.NextValidBatch(st.seg, limit, pos+1, st.seg.Base(), limitOffset); ok {
		r.EndPos, endOffset = next, base
	}
	r.EndOffset = max(endOffset, from)
	l.corrupt.add(r)
	l.degraded.Store(true)
	l.opts.Logger.Error("corrupt batch skipped", "segment", path, "position", pos,
		"offsets", fmt.Sprintf("[%d,%d)", r.FirstOffset, r.EndOffset), "err", cause)
	return r, nil
}
