package meta

import (
	"bytes"
	"encoding/binary"
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
// when any is invalid (same checks as CommitCursor), none. It stores no
// commit metadata: a cursor that had some loses it.
func (s *Store) CommitCursors(cs []Cursor) error {
	return s.CommitCursorsMetadata(cs, nil)
}

// MaxCursorMetadata bounds the commit metadata string stored with a cursor.
const MaxCursorMetadata = 64 << 10

// CommitCursorsMetadata is CommitCursors with a commit metadata string for
// each cursor (Kafka's OffsetCommit metadata), stored with its offset and
// returned by CursorMetadata: metadata[i] goes with cs[i]; a nil metadata, or
// an empty string, stores none. A string over MaxCursorMetadata bytes is
// ErrInvalidOffset and nothing is written.
func (s *Store) CommitCursorsMetadata(cs []Cursor, metadata []string) error {
	if metadata != nil && len(metadata) != len(cs) {
		return fmt.Errorf("%w: %d metadata strings for %d cursors", ErrInvalidOffset, len(metadata), len(cs))
	}
	for i, c := range cs {
		if err := ValidateConsumerName(c.Consumer); err != nil {
			return err
		}
		if err := validatePartition(c.Partition); err != nil {
			return err
		}
		if c.Offset < 0 {
			return fmt.Errorf("%w: %s/%s/%d: %d is negative", ErrInvalidOffset, c.Consumer, c.Topic, c.Partition, c.Offset)
		}
		if metadata != nil && len(metadata[i]) > MaxCursorMetadata {
			return fmt.Errorf("%w: %s/%s/%d: metadata of %d bytes, the limit is %d", ErrInvalidOffset, c.Consumer, c.Topic, c.Partition, len(metadata[i]), MaxCursorMetadata)
		}
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketCursors)
		if err != nil {
			return err
		}
		for i, c := range cs {
			if _, err := activeTopic(tx, c.Topic, c.Partition); err != nil {
				return fmt.Errorf("%s/%s/%d: %w", c.Consumer, c.Topic, c.Partition, err)
			}
			md := ""
			if metadata != nil {
				md = metadata[i]
			}
			if err := b.Put(cursorKey(c.Consumer, c.Topic, c.Partition), encodeCursorValue(c.Offset, md)); err != nil {
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

// A cursor's value is its offset, 8 bytes big-endian, followed by its
// commit metadata string, if any (the rest of the value). Values written
// before commit metadata was kept are the 8 bytes alone: a cursor with no
// metadata.
func encodeCursorValue(offset int64, metadata string) []byte {
	v := make([]byte, offsetLen, offsetLen+len(metadata))
	binary.BigEndian.PutUint64(v, uint64(offset))
	return append(v, metadata...)
}

// decodeCursorValue decodes a cursor value: an offset (not negative) and
// the metadata after it.
func decodeCursorValue(v []byte) (int64, string, error) {
	if len(v) < offsetLen {
		return 0, "", fmt.Errorf("offset is %d bytes, want at least %d", len(v), offsetLen)
	}
	if n := len(v) - offsetLen; n > MaxCursorMetadata {
		return 0, "", fmt.Errorf("metadata of %d bytes, the limit is %d", n, MaxCursorMetadata)
	}
	off, err := decodeOffset(v[:offsetLen])
	if err != nil {
		return 0, "", err
	}
	return off, string(v[offsetLen:]), nil
}

// Cursor returns consumer's committed offset on topic/partition; ok is false
// when it never committed one.
func (s *Store) Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error) {
	offset, _, ok, err = s.CursorMetadata(consumer, topic, partition)
	return offset, ok, err
}

// CursorMetadata returns consumer's committed offset on topic/partition and
// the commit metadata stored with it ("" when none); ok is false when it
// never committed one.
func (s *Store) CursorMetadata(consumer, topic string, partition int) (offset int64, metadata string, ok bool, err error) {
	if err := ValidateConsumerName(consumer); err != nil {
		return 0, "", false, err
	}
	if err := ValidateTopicName(topic); err != nil {
		return 0, "", false, err
	}
	if err := validatePartition(partition); err != nil {
		return 0, "", false, err
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
		offset, metadata, err = decodeCursorValue(v)
		if err != nil {
			return corrupt(BucketCursors, k, "%v", err)
		}
		ok = true
		return nil
	})
	return offset, metadata, ok, err
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
	off, _, err := decodeCursorValue(v)
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
