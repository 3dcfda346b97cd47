package tui

import (
	"context"
	"time"

	"github.com/pulselog/pulse/engine"
)

// Source is what the UI needs from the storage engine: exactly the facade's
// methods (docs/architecture.md), so *engine.Engine satisfies it directly.
// Every call is made from a tea.Cmd, never from Update or View.
type Source interface {
	Dir() string
	Topics() ([]engine.TopicInfo, error)
	Describe(name string) (engine.TopicInfo, error)
	CreateTopic(name string, cfg engine.TopicConfig) error
	DeleteTopic(name string) error
	Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error)
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
	NotifyC(topic string, partition int) (<-chan struct{}, error)
	OffsetForTimestamp(topic string, partition int, ms int64) (int64, error)
	Segments(topic string, partition int) ([]engine.SegmentInfo, error)
	Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error)
}

// The interfaces below are optional: the UI checks for them with a type
// assertion on the Source and shows "not available" where one is missing.

// ConsumerLister lists the consumers that committed a cursor on a topic,
// with their lag (the engine facade's Consumers).
type ConsumerLister interface {
	Consumers(topic string) ([]engine.ConsumerInfo, error)
}

// PassStatus is the last run of one maintenance pass (retention or
// compaction) on one partition.
type PassStatus struct {
	LastRun           time.Time // zero: never ran since open
	Duration          time.Duration
	Outcome           string // "compacted", "skipped: gain gate", "aborted: key cap", "nothing to do", "deleted", ...
	SegmentsRewritten int
	SegmentsDeleted   int
	BytesBefore       int64
	BytesAfter        int64
	RecordsDropped    int64
	TombstonesDropped int64
	NextRun           time.Time // zero: not scheduled
	Running           bool
	Err               string // last failure, if any
}

// SnapshotStatus is a partition's recovery checkpoint as last written.
type SnapshotStatus struct {
	Written     time.Time
	ActiveBase  int64 // base offset of the active segment it describes
	ActiveSize  int64 // bytes of that segment it vouches for
	HWM         int64
	LEO         int64
	Valid       bool
	Description string // free text from the engine, shown as is
}

// Maintenance is what the segments screen shows about a partition's
// snapshot, retention and compaction.
type Maintenance struct {
	Snapshot   *SnapshotStatus // nil: unknown
	Retention  PassStatus
	Compaction PassStatus
	DirtyRatio float64 // share of sealed bytes not yet compacted, 0..1; <0 unknown
}

// MaintenanceReporter reports a partition's maintenance status.
type MaintenanceReporter interface {
	Maintenance(topic string, partition int) (Maintenance, error)
}

// MaintenanceTrigger runs a retention or compaction pass on one partition
// now, returning when the pass finished.
type MaintenanceTrigger interface {
	CompactNow(ctx context.Context, topic string, partition int) error
	RetainNow(ctx context.Context, topic string, partition int) error
}
