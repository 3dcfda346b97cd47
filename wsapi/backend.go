package wsapi

import (
	"context"

	"github.com/pulselog/pulse/engine"
)

// Backend is what the server needs from a source: the core every source
// has. *engine.Engine satisfies it (the method set is the engine facade's,
// signature for signature, docs/architecture.md), and so does a Kafka
// cluster, *cluster.Source of package kafka/cluster (docs/cluster.md); it
// maps cluster errors to the engine's sentinels so that the error codes are
// the same. Nothing engine-only is part of it.
type Backend interface {
	// Produce appends recs to one partition of topic (partition -1: the
	// engine picks per record, murmur2 of the key or round-robin) and returns
	// one Ack per record once the topic's sync mode promise holds.
	Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error)
	// Read returns visible records of one partition from offset from.
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
	// NotifyC returns a channel closed on the partition's next HWM advance.
	NotifyC(topic string, partition int) (<-chan struct{}, error)
	CreateTopic(name string, cfg engine.TopicConfig) error
	DeleteTopic(name string) error
	Topics() ([]engine.TopicInfo, error)
	Describe(name string) (engine.TopicInfo, error)
	// OffsetForTimestamp returns the first offset whose timestamp is >= ms.
	OffsetForTimestamp(topic string, partition int, ms int64) (int64, error)
	CommitCursor(consumer, topic string, partition int, offset int64) error
	Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error)
}
