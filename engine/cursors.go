package engine

import (
	"errors"
	"fmt"
	"sort"
	"sync"

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
		out = append(out, consumerInfo(t, c))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Consumer != out[j].Consumer {
			return out[i].Consumer < out[j].Consumer
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// ConsumerMember is one live member of a consumer: a client of a protocol
// listener that coordinates the consumer as a group (a Kafka group member).
type ConsumerMember struct {
	ID       string `json:"id"`
	ClientID string `json:"client_id,omitempty"`
	Host     string `json:"host,omitempty"`
}

// MemberSource reports the live members of the consumers a listener
// coordinates (the Kafka listener's groups). ConsumerMembers must be quick
// and must not call back into the engine.
type MemberSource interface {
	ConsumerMembers(consumer string) []ConsumerMember
}

// memberSources is the set of registered MemberSources.
type memberSources struct {
	mu   sync.Mutex // guards srcs and next
	srcs map[int]MemberSource
	next int
}

// AddMemberSource registers src, whose members then show in
// ConsumerMembers and keep DeleteConsumer from deleting their cursors;
// remove unregisters it (a listener calls it when it stops).
func (e *Engine) AddMemberSource(src MemberSource) (remove func()) {
	m := &e.members
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srcs == nil {
		m.srcs = map[int]MemberSource{}
	}
	id := m.next
	m.next++
	m.srcs[id] = src
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.srcs, id)
	}
}

// ConsumerMembers returns the live members every registered MemberSource
// reports for consumer, sorted by id; none for a websocket consumer (its
// cursor is all there is of it).
func (e *Engine) ConsumerMembers(consumer string) []ConsumerMember {
	m := &e.members
	m.mu.Lock()
	srcs := make([]MemberSource, 0, len(m.srcs))
	for _, s := range m.srcs {
		srcs = append(srcs, s)
	}
	m.mu.Unlock()
	var out []ConsumerMember
	for _, s := range srcs {
		out = append(out, s.ConsumerMembers(consumer)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// DeleteConsumer deletes consumer's cursors on topic ("" every topic) in
// one synced meta.db commit and returns them with their lag as they were;
// with dryRun it only returns them. A consumer with live members is
// ErrConsumerActive, one without a matching cursor ErrConsumerNotFound, and
// nothing changes then. A subscription of the consumer that is running
// keeps its position; its next commit creates the cursor again.
func (e *Engine) DeleteConsumer(consumer, topic string, dryRun bool) ([]ConsumerInfo, error) {
	if err := meta.ValidateConsumerName(consumer); err != nil {
		return nil, err
	}
	if topic != "" {
		if _, err := e.topic(topic); err != nil {
			return nil, err
		}
	}
	if ms := e.ConsumerMembers(consumer); len(ms) > 0 {
		if len(ms) == 1 {
			return nil, fmt.Errorf("%w: consumer %s has 1 live member (%s): stop it before deleting the consumer", ErrConsumerActive, consumer, ms[0].ID)
		}
		return nil, fmt.Errorf("%w: consumer %s has %d live members (%s first): stop them before deleting the consumer", ErrConsumerActive, consumer, len(ms), ms[0].ID)
	}
	var infos []ConsumerInfo
	if dryRun {
		// One read of the cursors (sorted by topic, consumer and partition),
		// those of topics being served.
		e.mu.RLock()
		closed := e.closed
		e.mu.RUnlock()
		if closed {
			return nil, ErrClosed
		}
		cs, err := e.meta.ListCursors(topic)
		if err != nil {
			return nil, fmt.Errorf("consumer %s: %w", consumer, mapMetaErr(err))
		}
		for _, c := range cs {
			if c.Consumer != consumer {
				continue
			}
			t, err := e.topic(c.Topic)
			if errors.Is(err, ErrTopicNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			infos = append(infos, consumerInfo(t, c))
		}
		if len(infos) == 0 {
			return nil, fmt.Errorf("%w: %q has no cursor%s", ErrConsumerNotFound, consumer, onTopic(topic))
		}
		return infos, nil
	}
	gone, err := e.meta.DeleteCursors(consumer, topic, nil)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", consumer, mapMetaErr(err))
	}
	for _, c := range gone {
		t, _ := e.topic(c.Topic)
		infos = append(infos, consumerInfo(t, c))
	}
	return infos, nil
}

// consumerInfo is cursor c with its lag on t, 0 when t is nil or has no
// such partition.
func consumerInfo(t *topic, c meta.Cursor) ConsumerInfo {
	ci := ConsumerInfo{Consumer: c.Consumer, Topic: c.Topic, Partition: c.Partition, Offset: c.Offset}
	if t != nil && c.Partition < len(t.parts) {
		ci.Lag = max(0, t.parts[c.Partition].HWM()-c.Offset)
	}
	return ci
}

// DeleteCursors deletes consumer's cursors on the given partitions (nil:
// all) of topic ("" every topic) without the live-member check: it is for
// the listener that coordinates the consumer and has checked its members
// itself (Kafka's DeleteGroups and OffsetDelete). ErrConsumerNotFound when
// none of them exists.
func (e *Engine) DeleteCursors(consumer, topic string, partitions []int) ([]ConsumerInfo, error) {
	if topic != "" {
		if _, err := e.topic(topic); err != nil {
			return nil, err
		}
	}
	gone, err := e.meta.DeleteCursors(consumer, topic, partitions)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", consumer, mapMetaErr(err))
	}
	infos := make([]ConsumerInfo, 0, len(gone))
	for _, c := range gone {
		infos = append(infos, ConsumerInfo{Consumer: c.Consumer, Topic: c.Topic, Partition: c.Partition, Offset: c.Offset})
	}
	return infos, nil
}

func onTopic(topic string) string {
	if topic == "" {
		return ""
	}
	return " on topic " + topic
}

// CommitCursorsMetadata stores cursors with a commit metadata string each
// (Kafka's OffsetCommit metadata; "" for none), in one synced meta.db
// commit.
func (e *Engine) CommitCursorsMetadata(cs []Cursor, metadata []string) error {
	if err := e.meta.CommitCursorsMetadata(cs, metadata); err != nil {
		return fmt.Errorf("cursors: %w", mapMetaErr(err))
	}
	return nil
}

// CursorMetadata is Cursor with the commit metadata string stored with the
// position.
func (e *Engine) CursorMetadata(consumer, topic string, partition int) (offset int64, metadata string, ok bool, err error) {
	if _, err := e.partition(topic, partition); err != nil {
		return 0, "", false, err
	}
	offset, metadata, ok, err = e.meta.CursorMetadata(consumer, topic, partition)
	if err != nil {
		return 0, "", false, fmt.Errorf("cursor %s/%s/%d: %w", consumer, topic, partition, mapMetaErr(err))
	}
	return offset, metadata, ok, nil
}

// ReserveProducerIDs reserves n producer ids for idempotent Kafka producers
// and returns the first; ids are never handed out twice, across restarts
// too (the reservation is a synced meta.db commit).
func (e *Engine) ReserveProducerIDs(n uint32) (uint32, error) {
	first, err := e.meta.ReserveProducerIDs(n)
	if err != nil {
		return 0, fmt.Errorf("producer ids: %w", err)
	}
	return first, nil
}
