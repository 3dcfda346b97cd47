package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TopicState is where a topic is in its lifecycle.
type TopicState string

const (
	// TopicActive: created, usable.
	TopicActive TopicState = "active"
	// TopicDeleting: MarkTopicDeleting committed, DeleteTopic not yet. The
	// engine finishes the delete on its next start.
	TopicDeleting TopicState = "deleting"
)

// Topic is the stored record of one topic.
type Topic struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"` // partitions 0..Partitions-1 each have a Partition record
	// Config is the engine's topic configuration, stored as given. meta only
	// checks that it is valid JSON; the engine owns its type.
	Config    json.RawMessage `json:"config"`
	CreatedAt time.Time       `json:"created_at"`
	State     TopicState      `json:"state"`
	// Rebuilt is set when the topic was recorded again from its directory
	// because meta.db was missing: why, and what was lost.
	Rebuilt string `json:"rebuilt,omitempty"`
}

// Partition is the stored record of one partition of a topic.
type Partition struct {
	Topic     string    `json:"topic"`
	Partition int       `json:"partition"`
	CreatedAt time.Time `json:"created_at"`
	// HWM is the partition's high-watermark as the engine last recorded it
	// (RecordHWMs: at most every HWM interval while it moves, and at close):
	// every offset below it was handed out, whatever later happens to the
	// partition's directory.
	HWM int64 `json:"hwm,omitempty"`
}

// encodeTopic validates t and returns its stored form.
func encodeTopic(t Topic) ([]byte, error) {
	if err := validateTopic(t); err != nil {
		return nil, err
	}
	return json.Marshal(t)
}

func validateTopic(t Topic) error {
	if err := ValidateTopicName(t.Name); err != nil {
		return err
	}
	if t.Partitions < 1 || t.Partitions > MaxPartitions {
		return fmt.Errorf("%w: topic %s has %d partitions (want 1..%d)", ErrInvalidPartition, t.Name, t.Partitions, MaxPartitions)
	}
	if !json.Valid(t.Config) {
		return fmt.Errorf("%w: topic %s: config is not valid JSON", ErrInvalidConfig, t.Name)
	}
	if t.State != TopicActive && t.State != TopicDeleting {
		return fmt.Errorf("topic %s: unknown state %q", t.Name, t.State)
	}
	return nil
}

// decodeTopic decodes the value stored under key in the topics bucket and
// checks it: the name matches the key, the partition count is in range, the
// config is JSON and the state is known. Every failure is a *CorruptError.
func decodeTopic(key, value []byte) (Topic, error) {
	var t Topic
	if err := json.Unmarshal(value, &t); err != nil {
		return Topic{}, corrupt(BucketTopics, key, "%v", err)
	}
	if t.Name != string(key) {
		return Topic{}, corrupt(BucketTopics, key, "record name %q does not match its key", t.Name)
	}
	if err := validateTopic(t); err != nil {
		return Topic{}, corrupt(BucketTopics, key, "%v", err)
	}
	return t, nil
}

// decodePartition decodes the value stored under key in the partitions
// bucket; the record must agree with the key.
func decodePartition(key, value []byte) (Partition, error) {
	topic, p, err := parsePartitionKey(key)
	if err != nil {
		return Partition{}, corrupt(BucketPartitions, key, "bad key: %v", err)
	}
	var rec Partition
	if err := json.Unmarshal(value, &rec); err != nil {
		return Partition{}, corrupt(BucketPartitions, key, "%v", err)
	}
	if rec.Topic != topic || rec.Partition != p {
		return Partition{}, corrupt(BucketPartitions, key, "record says %s/%d", rec.Topic, rec.Partition)
	}
	if rec.HWM < 0 {
		return Partition{}, corrupt(BucketPartitions, key, "high-watermark %d", rec.HWM)
	}
	return rec, nil
}

// getTopic returns the topic record, ErrTopicNotFound when there is none.
func getTopic(tx *bolt.Tx, name string) (Topic, error) {
	b, err := bucket(tx, BucketTopics)
	if err != nil {
		return Topic{}, err
	}
	v := b.Get([]byte(name))
	if v == nil {
		return Topic{}, fmt.Errorf("%w: %s", ErrTopicNotFound, name)
	}
	return decodeTopic([]byte(name), v)
}

// activeTopic is getTopic that also refuses a topic being deleted, and
// checks that p (when >= 0) is one of its partitions.
func activeTopic(tx *bolt.Tx, name string, p int) (Topic, error) {
	if err := ValidateTopicName(name); err != nil {
		return Topic{}, err
	}
	t, err := getTopic(tx, name)
	if err != nil {
		return t, err
	}
	if t.State == TopicDeleting {
		return t, fmt.Errorf("%w: %w: %s", ErrTopicNotFound, ErrTopicDeleting, name)
	}
	if p >= t.Partitions {
		return t, fmt.Errorf("%w: topic %s has no partition %d (partitions: %d)", ErrInvalidPartition, name, p, t.Partitions)
	}
	return t, nil
}

// PutTopic creates a topic: its record (state active) and a record for each
// of its partitions, in one synced commit. A zero CreatedAt is set to now; a
// nil Config is stored as {}. The name must be free: ErrTopicExists otherwise,
// even while a topic of that name is being deleted.
func (s *Store) PutTopic(t Topic) error {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = s.opts.Now()
	}
	t.CreatedAt = t.CreatedAt.UTC()
	if t.Config == nil {
		t.Config = json.RawMessage("{}")
	}
	t.State = TopicActive
	data, err := encodeTopic(t)
	if err != nil {
		return err
	}
	err = s.update(func(tx *bolt.Tx) error {
		topics, err := bucket(tx, BucketTopics)
		if err != nil {
			return err
		}
		if topics.Get([]byte(t.Name)) != nil {
			return fmt.Errorf("%w: %s", ErrTopicExists, t.Name)
		}
		parts, err := bucket(tx, BucketPartitions)
		if err != nil {
			return err
		}
		if err := topics.Put([]byte(t.Name), data); err != nil {
			return err
		}
		for p := 0; p < t.Partitions; p++ {
			if err := putJSON(parts, string(partitionKey(t.Name, p)), Partition{Topic: t.Name, Partition: p, CreatedAt: t.CreatedAt}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("meta: create topic %s: %w", t.Name, err)
	}
	return nil
}

// GetTopic returns the record of a topic, in any state.
func (s *Store) GetTopic(name string) (Topic, error) {
	if err := ValidateTopicName(name); err != nil {
		return Topic{}, err
	}
	var t Topic
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		t, err = getTopic(tx, name)
		return err
	})
	return t, err
}

// ListTopics returns every topic record, in any state, sorted by name. The
// engine finishes the delete of topics in state TopicDeleting at startup.
func (s *Store) ListTopics() ([]Topic, error) {
	var out []Topic
	err := s.view(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketTopics)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			t, err := decodeTopic(k, v)
			if err != nil {
				return err
			}
			out = append(out, t)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Partitions returns the partition records of a topic, by partition number.
func (s *Store) Partitions(topic string) ([]Partition, error) {
	if err := ValidateTopicName(topic); err != nil {
		return nil, err
	}
	var out []Partition
	err := s.view(func(tx *bolt.Tx) error {
		if _, err := getTopic(tx, topic); err != nil {
			return err
		}
		b, err := bucket(tx, BucketPartitions)
		if err != nil {
			return err
		}
		return forEachPrefix(b, []byte(topic+"/"), func(k, v []byte) error {
			p, err := decodePartition(k, v)
			if err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out, nil
}

// MarkTopicDeleting is the first commit of a delete: the topic's state
// becomes TopicDeleting. From then on cursor commits, reports and config
// changes for it are refused, and the engine may remove its files. Marking a
// topic that is already deleting is a no-op.
func (s *Store) MarkTopicDeleting(name string) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		t, err := getTopic(tx, name)
		if err != nil {
			return err
		}
		if t.State == TopicDeleting {
			return nil
		}
		t.State = TopicDeleting
		return putTopic(tx, t)
	})
	if err != nil {
		return fmt.Errorf("meta: mark topic %s deleting: %w", name, err)
	}
	return nil
}

// DeleteTopic is the last commit of a delete: it removes the topic record,
// its partition records, every cursor on it and every report about it, in one
// synced commit. The topic must have been marked with MarkTopicDeleting
// (ErrTopicNotDeleting otherwise), so that files are only ever removed for a
// topic whose delete is recorded.
func (s *Store) DeleteTopic(name string) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		t, err := getTopic(tx, name)
		if err != nil {
			return err
		}
		if t.State != TopicDeleting {
			return fmt.Errorf("%w: %s is %s", ErrTopicNotDeleting, name, t.State)
		}
		if err := tx.Bucket([]byte(BucketTopics)).Delete([]byte(name)); err != nil {
			return err
		}
		parts, err := bucket(tx, BucketPartitions)
		if err != nil {
			return err
		}
		if err := deletePrefix(parts, []byte(name+"/")); err != nil {
			return err
		}
		// Cursor and report keys start with the consumer or kind: scan.
		onTopic := func(k []byte) bool {
			_, topic, _, err := parseTripleKey(k)
			return err == nil && topic == name
		}
		for _, bn := range []string{BucketCursors, BucketReports} {
			b, err := bucket(tx, bn)
			if err != nil {
				return err
			}
			if err := deleteMatching(b, onTopic); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("meta: delete topic %s: %w", name, err)
	}
	return nil
}

// UndoGrowTopic lowers an active topic's partition count back to partitions
// after a grow (GrowTopic) whose new partitions could not be opened, so were
// never served, and stores config with it, in one synced commit: the
// partition records past the count go, and any cursor or report of those
// partitions with them. It is the one way a count goes down; a count above
// the current one is ErrInvalidPartition.
func (s *Store) UndoGrowTopic(name string, partitions int, config json.RawMessage) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	if !json.Valid(config) {
		return fmt.Errorf("%w: topic %s: config is not valid JSON", ErrInvalidConfig, name)
	}
	err := s.update(func(tx *bolt.Tx) error {
		t, err := activeTopic(tx, name, -1)
		if err != nil {
			return err
		}
		if partitions < 1 || partitions > t.Partitions {
			return fmt.Errorf("%w: topic %s has %d partitions, cannot undo a grow back to %d", ErrInvalidPartition, name, t.Partitions, partitions)
		}
		parts, err := bucket(tx, BucketPartitions)
		if err != nil {
			return err
		}
		for p := partitions; p < t.Partitions; p++ {
			if err := parts.Delete(partitionKey(name, p)); err != nil {
				return err
			}
		}
		past := func(k []byte) bool {
			_, topic, p, err := parseTripleKey(k)
			return err == nil && topic == name && p >= partitions
		}
		for _, bn := range []string{BucketCursors, BucketReports} {
			b, err := bucket(tx, bn)
			if err != nil {
				return err
			}
			if err := deleteMatching(b, past); err != nil {
				return err
			}
		}
		t.Partitions, t.Config = partitions, config
		return putTopic(tx, t)
	})
	if err != nil {
		return fmt.Errorf("meta: undo the grow of topic %s back to %d partitions: %w", name, partitions, err)
	}
	return nil
}

// UpdateTopicConfig replaces the stored config of an active topic. The
// partition count is not part of it and does not change.
func (s *Store) UpdateTopicConfig(name string, config json.RawMessage) error {
	if err := s.changeTopic(name, -1, config); err != nil {
		return fmt.Errorf("meta: update config of topic %s: %w", name, err)
	}
	return nil
}

// GrowTopic raises an active topic's partition count to partitions and
// stores config with it, in one synced commit: the topic record and a
// partition record for each new partition. A count below the current one is
// ErrInvalidPartition (partitions never shrink); the same count only
// replaces the config.
func (s *Store) GrowTopic(name string, partitions int, config json.RawMessage) error {
	if err := s.changeTopic(name, partitions, config); err != nil {
		return fmt.Errorf("meta: grow topic %s to %d partitions: %w", name, partitions, err)
	}
	return nil
}

// changeTopic stores config for the active topic name and, when partitions
// is not -1, raises its partition count to partitions, in one synced commit.
func (s *Store) changeTopic(name string, partitions int, config json.RawMessage) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	if !json.Valid(config) {
		return fmt.Errorf("%w: topic %s: config is not valid JSON", ErrInvalidConfig, name)
	}
	return s.update(func(tx *bolt.Tx) error {
		t, err := activeTopic(tx, name, -1)
		if err != nil {
			return err
		}
		if partitions == -1 {
			partitions = t.Partitions
		}
		if partitions < t.Partitions {
			return fmt.Errorf("%w: topic %s has %d partitions, cannot shrink to %d", ErrInvalidPartition, name, t.Partitions, partitions)
		}
		parts, err := bucket(tx, BucketPartitions)
		if err != nil {
			return err
		}
		now := s.opts.Now().UTC()
		for p := t.Partitions; p < partitions; p++ {
			if err := putJSON(parts, string(partitionKey(name, p)), Partition{Topic: name, Partition: p, CreatedAt: now}); err != nil {
				return err
			}
		}
		t.Partitions, t.Config = partitions, config
		return putTopic(tx, t)
	})
}

func putTopic(tx *bolt.Tx, t Topic) error {
	data, err := encodeTopic(t)
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(BucketTopics)).Put([]byte(t.Name), data)
}

// forEachPrefix calls fn for every key starting with prefix, in key order.
func forEachPrefix(b *bolt.Bucket, prefix []byte, fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// deletePrefix deletes every key starting with prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	var doomed [][]byte
	if err := forEachPrefix(b, prefix, func(k, _ []byte) error {
		doomed = append(doomed, bytes.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	return deleteKeys(b, doomed)
}

// deleteMatching deletes every key for which match is true. Keys are
// collected first: deleting while iterating a bbolt cursor skips keys.
func deleteMatching(b *bolt.Bucket, match func(k []byte) bool) error {
	var doomed [][]byte
	if err := b.ForEach(func(k, _ []byte) error {
		if match(k) {
			doomed = append(doomed, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	return deleteKeys(b, doomed)
}

func deleteKeys(b *bolt.Bucket, keys [][]byte) error {
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
