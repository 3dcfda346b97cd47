package tui

import (
	"context"

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
// *engine.Engine implements all of them.

// ConsumerLister lists the consumers that committed a cursor on a topic,
// with their lag.
type ConsumerLister interface {
	Consumers(topic string) ([]engine.ConsumerInfo, error)
}

// MaintenanceReporter reports a partition's retention and compaction status.
type MaintenanceReporter interface {
	MaintenanceStatus(topic string, partition int) (engine.MaintenanceStatus, error)
}

// MaintenanceTrigger runs a retention or compaction pass over every
// partition of a topic now, returning when it is done.
type MaintenanceTrigger interface {
	RunRetention(topic string) error
	RunCompaction(topic string) error
}
