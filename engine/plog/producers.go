package plog

import (
	"fmt"

	"github.com/pulselog/pulse/engine/codec"
)

// ProducerBatch is a visible batch stamped with an idempotent producer
// (codec/doc.go): what a Kafka listener rebuilds its producer state from
// after a restart.
type ProducerBatch struct {
	Producer   codec.ProducerStamp
	BaseOffset int64 // offset of the batch's first record
	Records    int   // records in the batch, at offsets BaseOffset, BaseOffset+1, ...
	Timestamp  int64 // commit time of its records (Unix ms)
}

// producerScanSegments is how many of the newest segments ProducerBatches
// reads: the active one and the sealed one before it, so that the batches
// just before a roll are found too.
const producerScanSegments = 2

// ProducerBatches calls fn for every stamped batch below the HWM in the
// partition's last two segments, oldest first. It reads batch headers only
// (they were checked by recovery or by the sync pass that exposed them);
// compacted batches carry no stamp and are skipped.
func (l *Log) ProducerBatches(fn func(ProducerBatch)) error {
	l.pinReads() // segments picked below stay open (maintenance.go)
	defer l.unpinReads()
	hwm := l.hwm.Load()
	l.segMu.RLock()
	segs := append([]*segState(nil), l.segs[max(0, len(l.segs)-producerScanSegments):]...)
	l.segMu.RUnlock()
	for _, st := range segs {
		err := scanHeaders(st.seg, 0, st.durable.Load(), func(_ int64, h codec.BatchHeader) bool {
			next, ok := h.NextOffset()
			if !ok {
				return true // sparse: compacted, unstamped
			}
			if next > hwm {
				return false // not visible yet
			}
			if h.ProducerID != 0 {
				fn(ProducerBatch{Producer: h.Producer(), BaseOffset: h.BaseOffset, Records: int(h.RecordCount), Timestamp: h.FirstTimestamp})
			}
			return true
		})
		if cerr := closedErr(err); cerr != nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("partition %s: producer batches: %w", l.dir, err)
		}
	}
	return nil
}
