package engine

import (
	"errors"
	"fmt"

	"github.com/pulselog/pulse/meta"
)

// Errors returned by the engine facade, matched with errors.Is.
var (
	// Opening a data directory.
	ErrLocked = errors.New("data directory is locked by another pulse process")
	ErrClosed = errors.New("engine is closed")

	// Topics and partitions.
	ErrInvalidTopic        = meta.ErrInvalidTopic // the name rule lives in meta
	ErrTopicNotFound       = errors.New("topic not found")
	ErrTopicExists         = errors.New("topic already exists")
	ErrInvalidConfig       = errors.New("invalid topic config")
	ErrPartitionOutOfRange = errors.New("partition out of range")
	// ErrTooManyTopics: creating the topic (or auto-creating it on produce)
	// would pass Options.MaxTopics or Options.MaxPartitions.
	ErrTooManyTopics = errors.New("too many topics")

	// Produce and read.
	ErrRecordTooLarge   = errors.New("record too large")
	ErrOffsetOutOfRange = errors.New("offset out of range")
)

// PartialProduceError is Produce's error when the records of one request
// went to several partitions and the appends of some partitions failed
// while others succeeded. Each partition's append is all or nothing (a
// failed write is rewound before it is answered), so Stored says exactly
// which records are stored; the acks Produce returns beside it are valid
// for those, and only those. errors.Is / errors.As see through it to the
// first partition's failure.
type PartialProduceError struct {
	Stored []bool // Stored[i]: recs[i] was stored, its ack is valid
	Err    error  // the first failure
}

func (e *PartialProduceError) Error() string {
	n := 0
	for _, s := range e.Stored {
		if s {
			n++
		}
	}
	return fmt.Sprintf("%d of %d records stored: %v", n, len(e.Stored), e.Err)
}

func (e *PartialProduceError) Unwrap() error { return e.Err }
