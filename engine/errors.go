package engine

import (
	"errors"
	"fmt"

	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/meta"
)

// Errors returned by the engine facade, matched with errors.Is.
var (
	// Opening a data directory.
	ErrLocked = fsutil.ErrLocked // the data dir's LOCK is fsutil's; its error names the dir and the holder once
	ErrClosed = errors.New("engine is closed")

	// Topics and partitions.
	ErrInvalidTopic        = meta.ErrInvalidTopic // the name rule lives in meta
	ErrTopicNotFound       = errors.New("topic not found")
	ErrTopicExists         = errors.New("topic already exists")
	ErrInvalidConfig       = errors.New("invalid topic config")
	ErrPartitionOutOfRange = errors.New("partition out of range")
	// ErrTooManyTopics: creating the topic (or auto-creating it on produce)
	// would pass Options.MaxTopics or Options.MaxPartitions.
	ErrTooManyTopics = errors.New("too many topics or partitions")

	// Consumers (cursors).
	ErrConsumerNotFound = meta.ErrConsumerNotFound // DeleteConsumer of cursors that do not exist
	ErrInvalidConsumer  = meta.ErrInvalidConsumer  // a consumer name meta's rule refuses
	// ErrConsumerActive: DeleteConsumer of a consumer with live members (a
	// Kafka group whose members are connected; Kafka's NON_EMPTY_GROUP).
	ErrConsumerActive = errors.New("consumer has live members")

	// Produce and read.
	ErrRecordTooLarge = plog.ErrRecordTooLarge // a record past the partition log's MaxRecordBytes
	// ErrLogFailed: the partition's write, fsync or verification failed (a
	// full disk, an I/O error). Nothing of the failed produce is stored: the
	// partition returns to its last acknowledged record, and the next
	// produce is tried again, so a produce repeated once space is freed
	// succeeds.
	ErrLogFailed        = plog.ErrFailed
	ErrOffsetOutOfRange = plog.ErrOffsetOutOfRange

	// Reading segment files (SegmentFrames, SegmentBatch).

	// ErrBadPosition: a negative byte position or length in a segment file.
	ErrBadPosition = errors.New("bad position in a segment file")
)

// partitionOutOfRange is ErrPartitionOutOfRange for partition p of topic,
// which has n partitions.
func partitionOutOfRange(topic string, n, p int) error {
	noun := "partitions"
	if n == 1 {
		noun = "partition"
	}
	return fmt.Errorf("%w: topic %s has %d %s, asked for %d", ErrPartitionOutOfRange, topic, n, noun, p)
}
