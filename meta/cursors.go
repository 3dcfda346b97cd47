package meta

import (
	"bytes"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Cursor is a consumer's committed offset on one partition: the offset of
// the next record it will read.
type Cursor struct {
	Consumer  string `json:"consumer"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
}

// CommitCursor stores consumer's offset on topic/partition in one synced
// commit. The topic must exist, not be being deleted, and have the partition;
// the offset must not be negative. Whether the offset is within the log is the
// engine's business.
func (s *Store) CommitCursor(consumer, topic string, partition int, offset int64) error {
	if err := ValidateConsumerName(consumer); err != nil {
		return err
	}
	if err := validatePartition(partition); err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("%w: %d is negative", ErrInvalidOffset, offset)
	}
	err := s.update(func(tx *bolt.Tx) error {
		if _, err := activeTopic(tx, topic, partition); err != nil {
			return err
		}
		b, err := bucket(tx, BucketCursors)
		if err != nil {
			return err
		}
		return b.Put(cursorKey(consumer, topic, partition), encodeInt64(offset))
	})
	if err != nil {
		return fmt.Errorf("meta: commit cursor %s/%s/%d: %w", consumer, topic, partition, err)
	}
	return nil
}

// CommitCursors stores several cursors in one synced commit: all of them or,
// when any is invalid (same checks as CommitCursor), none.
func (s *Store) CommitCursors(cs []Cursor) error {
	for _, c := range cs {
		if err := ValidateConsumerName(c.Consumer); err != nil {
			return err
		}
		if err := validatePartition(c.Partition); err != nil {
			return err
		}
		if c.Offset < 0 {
			return fmt.Errorf("%w: %s/%s/%d: %d is negative", ErrInvalidOffset, c.Consumer, c.Topic, c.Partition, c.Offset)
		}
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketCursors)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if _, err := activeTopic(tx, c.Topic, c.Partition); err != nil {
				return fmt.Errorf("%s/%s/%d: %w", c.Consumer, c.Topic, c.Partition, err)
			}
			if err := b.Put(cursorKey(c.Consumer, c.Topic, c.Partition), encodeInt64(c.Offset)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("meta: commit %d cursors: %w", len(cs), err)
	}
	return nil
}

// Cursor returns consumer's committed offset on topic/partition; ok is false
// when it never committed one.
func (s *Store) Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error) {
	if err := ValidateConsumerName(consumer); err != nil {
		return 0, false, err
	}
	if err := ValidateTopicName(topic); err != nil {
		return 0, false, err
	}
	if err := validatePartition(partition); err != nil {
		return 0, false, err
	}
	err = s.view(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketCursors)
		if err != nil {
			return err
		}
		k := cursorKey(consumer, topic, partition)
		v := b.Get(k)
		if v == nil {
			return nil
		}
		offset, err = decodeOffset(v)
		if err != nil {
			return corrupt(BucketCursors, k, "%v", err)
		}
		ok = true
		return nil
	})
	return offset, ok, err
}

// ListCursors returns every cursor on topic, or every cursor of every topic
// when topic is "", sorted by topic, consumer and partition.
func (s *Store) ListCursors(topic string) ([]Cursor, error) {
	if topic != "" {
		if err := ValidateTopicName(topic); err != nil {
			return nil, err
		}
	}
	var out []Cursor
	err := s.view(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketCursors)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			c, err := decodeCursor(k, v)
			if err != nil {
				return err
			}
			if topic == "" || c.Topic == topic {
				out = append(out, c)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Consumer != b.Consumer {
			return a.Consumer < b.Consumer
		}
		return a.Partition < b.Partition
	})
	return out, nil
}

// decodeCursor decodes one entry of the cursors bucket; failures are
// *CorruptError naming the key.
func decodeCursor(k, v []byte) (Cursor, error) {
	consumer, topic, p, err := parseCursorKey(k)
	if err != nil {
		return Cursor{}, corrupt(BucketCursors, k, "bad key: %v", err)
	}
	off, err := decodeOffset(v)
	if err != nil {
		return Cursor{}, corrupt(BucketCursors, k, "%v", err)
	}
	return Cursor{Consumer: consumer, Topic: topic, Partition: p, Offset: off}, nil
}

// DeleteConsumer removes every cursor of consumer in one synced commit.
// ErrConsumerNotFound when it has none.
func (s *Store) DeleteConsumer(consumer string) error {
	_, err := s.DeleteCursors(consumer, "", nil)
	return err
}

// DeleteCursors removes consumer's cursors in one synced commit and returns
// them, sorted by topic and partition: on topic only ("" every topic), and
// on the given partitions only (nil every partition). ErrConsumerNotFound
// when none matches; nothing changes then.
func (s *Store) DeleteCursors(consumer, topic string, partitions []int) ([]Cursor, error) {
	if err := ValidateConsumerName(consumer); err != nil {
		return nil, err
	}
	if topic != "" {
		if err := ValidateTopicName(topic); err != nil {
			return nil, err
		}
	}
	want := map[int]bool{}
	for _, p := range partitions {
		if err := validatePartition(p); err != nil {
			return nil, err
		}
		want[p] = true
	}
	var gone []Cursor
	err := s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketCursors)
		if err != nil {
			return err
		}
		prefix := []byte(consumer + "/")
		if topic != "" {
			prefix = []byte(consumer + "/" + topic + "/")
		}
		var doomed [][]byte
		if err := forEachPrefix(b, prefix, func(k, v []byte) error {
			c, err := decodeCursor(k, v)
			if err != nil {
				return err
			}
			if c.Consumer != consumer || (topic != "" && c.Topic != topic) || (partitions != nil && !want[c.Partition]) {
				return nil // a longer consumer or topic name sharing the prefix
			}
			gone = append(gone, c)
			doomed = append(doomed, bytes.Clone(k))
			return nil
		}); err != nil {
			return err
		}
		if len(gone) == 0 {
			what := fmt.Sprintf("%q has no cursor", consumer)
			if topic != "" {
				what += " on topic " + topic
			}
			if partitions != nil {
				what += fmt.Sprintf(" partitions %v", partitions)
			}
			return fmt.Errorf("%w: %s", ErrConsumerNotFound, what)
		}
		return deleteKeys(b, doomed)
	})
	if err != nil {
		return nil, fmt.Errorf("meta: delete cursors of consumer %q: %w", consumer, err)
	}
	sort.Slice(gone, func(i, j int) bool {
		if gone[i].Topic != gone[j].Topic {
			return gone[i].Topic < gone[j].Topic
		}
		return gone[i].Partition < gone[j].Partition
	})
	return gone, nil
}
