package meta

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// PartitionHWM is one partition's high-watermark, for RecordHWMs.
type PartitionHWM struct {
	Topic     string
	Partition int
	// TopicCreated is the topic's CreatedAt as the caller knows it: a
	// topic of that name created since (deleted and created again) is not
	// the one the value is of, and keeps its own record.
	TopicCreated time.Time
	HWM          int64
}

// RecordHWMs records the high-watermarks of partitions in their partition
// records, in one synced commit. A record only moves up: a value at or below
// the recorded one is ignored, and so is a partition of a topic that is not
// active, was created at another time than TopicCreated, or has no such
// partition (deleted, or being deleted, meanwhile). A
// negative value is ErrInvalidOffset.
func (s *Store) RecordHWMs(hwms []PartitionHWM) error {
	return s.putHWMs(hwms, true)
}

// SetHWM records hwm as the high-watermark of partition p of an active
// topic, below the recorded one too: for a tool that rewrites a
// partition's files as a crash would have left them (the tests' crash
// simulations), where the engine only ever raises it (RecordHWMs).
func (s *Store) SetHWM(topic string, p int, hwm int64) error {
	return s.putHWMs([]PartitionHWM{{Topic: topic, Partition: p, HWM: hwm}}, false)
}

// putHWMs is RecordHWMs when up: each value raises its record, for the
// topic created at TopicCreated. Else it is SetHWM: each value is set, on
// whichever topic of that name is active, and a partition it cannot be set
// on is an error.
func (s *Store) putHWMs(hwms []PartitionHWM, up bool) error {
	for _, h := range hwms {
		if err := ValidateTopicName(h.Topic); err != nil {
			return err
		}
		if h.HWM < 0 {
			return fmt.Errorf("%w: topic %s partition %d: high-watermark %d", ErrInvalidOffset, h.Topic, h.Partition, h.HWM)
		}
	}
	err := s.update(func(tx *bolt.Tx) error {
		parts, err := bucket(tx, BucketPartitions)
		if err != nil {
			return err
		}
		for _, h := range hwms {
			t, err := activeTopic(tx, h.Topic, h.Partition)
			if err != nil {
				if up && (errors.Is(err, ErrTopicNotFound) || errors.Is(err, ErrInvalidPartition)) {
					continue
				}
				return err
			}
			if up && !t.CreatedAt.Equal(h.TopicCreated) {
				continue
			}
			key := partitionKey(h.Topic, h.Partition)
			v := parts.Get(key)
			if v == nil && up {
				continue
			}
			rec, err := decodePartition(key, v)
			if err != nil {
				return err
			}
			if up && h.HWM <= rec.HWM {
				continue
			}
			rec.HWM = h.HWM
			if err := putJSON(parts, string(key), rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("meta: record high-watermarks: %w", err)
	}
	return nil
}
