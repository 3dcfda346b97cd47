package engine

import (
	"fmt"
	"sort"

	"github.com/pulselog/pulse/meta"
)

// ConsumerInfo is one consumer's cursor on one partition, with its lag.
type ConsumerInfo struct {
	Consumer  string `json:"consumer"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"` // next offset the consumer will read
	Lag       int64  `json:"lag"`    // HWM minus Offset
}

// CommitCursor stores consumer's position on a partition (a synced meta.db
// commit): the next offset it will read.
func (e *Engine) CommitCursor(consumer, topic string, partition int, offset int64) error {
	l, err := e.partition(topic, partition)
	if err != nil {
		return err
	}
	if offset < 0 || offset > l.LEO() {
		return fmt.Errorf("%w: cursor %d for topic %s partition %d (log end %d)", ErrOffsetOutOfRange, offset, topic, partition, l.LEO())
	}
	if err := e.meta.CommitCursor(consumer, topic, partition, offset); err != nil {
		return fmt.Errorf("cursor %s/%s/%d: %w", consumer, topic, partition, mapMetaErr(err))
	}
	return nil
}

// Cursor is one consumer's position on one partition, for CommitCursors.
type Cursor = meta.Cursor

// CommitCursors stores several cursors in one synced meta.db commit, all or
// none (a Kafka OffsetCommit). Unlike CommitCursor it does not bound the
// offsets by the log end: a Kafka group may commit any offset >= 0. Errors
// wrap meta's sentinels (meta.ErrTopicNotFound, meta.ErrInvalidConsumer).
func (e *Engine) CommitCursors(cs []Cursor) error {
	if err := e.meta.CommitCursors(cs); err != nil {
		return fmt.Errorf("cursors: %w", mapMetaErr(err))
	}
	return nil
}

// Cursor returns consumer's stored position on a partition; ok is false
// when it never committed one.
func (e *Engine) Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error) {
	if _, err := e.partition(topic, partition); err != nil {
		return 0, false, err
	}
	offset, ok, err = e.meta.Cursor(consumer, topic, partition)
	if err != nil {
		return 0, false, fmt.Errorf("cursor %s/%s/%d: %w", consumer, topic, partition, mapMetaErr(err))
	}
	return offset, ok, nil
}

// Consumers lists every consumer cursor of topic with its lag, sorted by
// consumer then partition.
func (e *Engine) Consumers(topic string) ([]ConsumerInfo, error) {
	t, err := e.topic(topic)
	if err != nil {
		return nil, err
	}
	cs, err := e.meta.ListCursors(topic)
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, mapMetaErr(err))
	}
	out := make([]ConsumerInfo, 0, len(cs))
	for _, c := range cs {
		ci := ConsumerInfo{Consumer: c.Consumer, Topic: c.Topic, Partition: c.Partition, Offset: c.Offset}
		if c.Partition < len(t.parts) {
			ci.Lag = max(0, t.parts[c.Partition].HWM()-c.Offset)
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Consumer != out[j].Consumer {
			return out[i].Consumer < out[j].Consumer
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}
