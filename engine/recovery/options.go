package recovery

import (
	"fmt"

	"github.com/pulselog/pulse/engine/segment"
)

// HiddenTailPolicy says what recovery does with the records between the
// persisted high-watermark and the recovered log end (the hidden tail). It
// is the one type of the policy: engine.HiddenTailPolicy and the partition
// log's option are this type, and Report.HiddenTailPolicy holds its value.
type HiddenTailPolicy string

// Hidden-tail policies, in Options.HiddenTail and Report.HiddenTailPolicy.
const (
	// HiddenTailExpose fsyncs the records between the persisted hwm and the
	// recovered end and makes them visible (the default).
	HiddenTailExpose HiddenTailPolicy = "expose"
	// HiddenTailHide keeps them hidden until the next commit moves the HWM
	// over them.
	HiddenTailHide HiddenTailPolicy = "hide"
)

// DefaultIndexIntervalBytes is the sparse index spacing when
// Options.IndexIntervalBytes is zero.
const DefaultIndexIntervalBytes = 4 << 10

// Options configure Run. The zero value is valid: it recovers in place with
// the defaults noted on each field.
type Options struct {
	// Topic and Partition label the report.
	Topic     string
	Partition int

	// IndexIntervalBytes is the spacing of sparse index entries the log
	// writes (0: the default 4 KiB; below 0 is refused). An index with a gap wider than this between
	// indexed batches is treated as short and rebuilt.
	IndexIntervalBytes int

	// HiddenTail is HiddenTailExpose (default) or HiddenTailHide.
	HiddenTail HiddenTailPolicy

	// FilePool bounds the descriptors of the segments Run opens (see
	// segment.Pool); nil: no bound.
	FilePool *segment.Pool

	// RecordedHWM is the partition's high-watermark as meta.db recorded it
	// (0: none), kept outside the partition's directory: offsets below it
	// were handed out even when the directory lost its hwm file, snapshot,
	// manifest and segments, or is gone altogether, so it counts as
	// acknowledged as the hwm file does.
	RecordedHWM int64

	// ReadOnly computes the same report without changing a byte: segments
	// are opened read-only, nothing is truncated, removed, rebuilt, written
	// or fsynced, and Result.Segments is empty. For `pulse inspect`.
	ReadOnly bool
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.IndexIntervalBytes < 0:
		return o, fmt.Errorf("%w: index interval %d bytes (want 0 for the default, or more)", ErrInvalidOptions, o.IndexIntervalBytes)
	case o.IndexIntervalBytes == 0:
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	switch o.HiddenTail {
	case "":
		o.HiddenTail = HiddenTailExpose
	case HiddenTailExpose, HiddenTailHide:
	default:
		return o, fmt.Errorf("%w: hidden tail policy %q (want %q or %q)", ErrInvalidOptions, o.HiddenTail, HiddenTailExpose, HiddenTailHide)
	}
	return o, nil
}
