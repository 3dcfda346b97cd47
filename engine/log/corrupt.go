package log

import (
	"fmt"
	"sync"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
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
	if next, base, ok, err := resync(st.seg, pos+1, limit); err != nil {
		return r, fmt.Errorf("partition %s: search past corruption at %s:%d: %w", l.dir, path, pos, err)
	} else if ok {
		r.EndPos, endOffset = next, base
	}
	r.EndOffset = max(endOffset, from)
	l.corrupt.add(r)
	l.degraded.Store(true)
	l.opts.Logger.Error("corrupt batch skipped", "segment", path, "position", pos,
		"offsets", fmt.Sprintf("[%d,%d)", r.FirstOffset, r.EndOffset), "err", cause)
	return r, nil
}

// resync finds the first position in [from, limit) holding a whole batch
// whose header parses and whose CRC checks out.
func resync(seg segmentReader, from, limit int64) (pos, base int64, ok bool, err error) {
	if from >= limit {
		return 0, 0, false, nil
	}
	buf := make([]byte, limit-from)
	if _, err := seg.ReadAt(buf, from); err != nil {
		return 0, 0, false, err
	}
	for i := 0; i+codec.HeaderLen <= len(buf); i++ {
		h, err := codec.ParseHeader(buf[i:])
		if err != nil || int64(i)+h.Size() > int64(len(buf)) {
			continue
		}
		if _, err := codec.VerifyBatch(buf[i : int64(i)+h.Size()]); err == nil {
			return from + int64(i), h.BaseOffset, true, nil
		}
	}
	return 0, 0, false, nil
}
