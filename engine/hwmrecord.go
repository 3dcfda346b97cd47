package engine

import (
	"sync"
	"time"

	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/meta"
)

// hwmRecorder keeps meta.db's record of every partition's high-watermark
// (meta.Partition.HWM) at most about one HWM interval behind the
// partition's, and exact after a clean close. Recovery counts it as
// acknowledged (recovery.Options.RecordedHWM), so a partition whose
// directory lost its hwm file, snapshot, manifest and segments, or is gone
// altogether, never hands out the offsets below it again.
type hwmRecorder struct {
	mu       sync.Mutex
	recorded map[*plog.Log]int64 // what meta.db holds for each open partition
	stop     chan struct{}
	done     chan struct{}
}

// startHWMRecorder records the high-watermarks that moved, every HWM
// interval, until stopHWMRecorder.
func (e *Engine) startHWMRecorder() {
	every := e.opts.HWMInterval
	if every <= 0 {
		every = plog.DefaultOptions().HWMInterval
	}
	r := &e.hwms
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				e.recordHWMs()
			}
		}
	}()
}

// stopHWMRecorder ends the loop startHWMRecorder began, if it did.
func (e *Engine) stopHWMRecorder() {
	r := &e.hwms
	if r.stop != nil {
		close(r.stop)
		<-r.done
		r.stop = nil
	}
}

// noteRecordedHWM says what meta.db already holds for l (at open).
func (e *Engine) noteRecordedHWM(l *plog.Log, hwm int64) {
	r := &e.hwms
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recorded == nil {
		r.recorded = map[*plog.Log]int64{}
	}
	r.recorded[l] = hwm
}

// recordHWMs writes, in one meta.db commit, the high-watermark of every
// open partition whose HWM moved past what meta.db holds. A failure (a full
// disk) is logged and retried at the next pass. Each value carries its
// topic's creation time, so a topic deleted and created again meanwhile
// never gets the old one's.
func (e *Engine) recordHWMs() {
	type part struct {
		l   *plog.Log
		hwm meta.PartitionHWM
	}
	var parts []part
	e.mu.RLock()
	for _, t := range e.topics {
		if t.state == topicCreating || t.state == topicDeleting {
			// A create writes t.parts without the lock until it ends; a
			// delete has closed them. Neither has an HWM to keep.
			continue
		}
		for p, l := range t.parts {
			if l != nil {
				parts = append(parts, part{l, meta.PartitionHWM{Topic: t.name, Partition: p, TopicCreated: t.createdAt, HWM: l.HWM()}})
			}
		}
	}
	e.mu.RUnlock()

	r := &e.hwms
	r.mu.Lock()
	defer r.mu.Unlock()
	live := make(map[*plog.Log]int64, len(parts))
	var moved []meta.PartitionHWM
	for _, p := range parts {
		live[p.l] = r.recorded[p.l]
		if p.hwm.HWM > r.recorded[p.l] {
			moved = append(moved, p.hwm)
		}
	}
	r.recorded = live // forgets the partitions of deleted topics
	if len(moved) == 0 {
		return
	}
	if err := e.meta.RecordHWMs(moved); err != nil {
		e.opts.Logger.Warn("record high-watermarks in meta.db", "dir", e.opts.Dir, "partitions", len(moved), "err", err)
		return
	}
	for _, p := range parts {
		live[p.l] = max(live[p.l], p.hwm.HWM)
	}
}
