package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kgo"
)

// pulsePartitioner places records as the engine does: a record produced
// to a given partition stays there (Record.Partition >= 0), keyed records go
// to murmur2 of the key (engine.KeyPartition, Kafka's default), keyless
// ones round-robin.
type pulsePartitioner struct{}

func (pulsePartitioner) ForTopic(string) kgo.TopicPartitioner { return &topicPartitioner{} }

type topicPartitioner struct{ next atomic.Uint32 }

func (*topicPartitioner) RequiresConsistency(*kgo.Record) bool { return true }

func (t *topicPartitioner) Partition(r *kgo.Record, n int) int {
	switch {
	case r.Partition >= 0:
		return int(r.Partition)
	case r.Key != nil:
		return engine.KeyPartition(r.Key, n)
	}
	return int((t.next.Add(1) - 1) % uint32(n))
}

// Produce appends recs to one partition of topic (partition -1: per
// record, murmur2 of the key or round-robin) with acks=all, and returns one
// Ack per record with the cluster's partition, offset and timestamp. A
// topic that does not exist is engine.ErrTopicNotFound (nothing is
// created); a bad partition is engine.ErrPartitionOutOfRange and nothing is
// produced. While the cluster is away (Unreachable) a produce fails at once
// with ErrUnreachable and sends nothing; one under way when it goes away
// (or when ctx ends) returns then with that error, without waiting for
// the records the Kafka client already sent, which it may still store. Records are
// produced concurrently and may partly succeed when the cluster fails some
// of them; the first failure is returned. The errors name the partition,
// not the topic: the caller names the topic it produced to.
func (s *Source) Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if partition < -1 {
		return nil, fmt.Errorf("%w: partition %d of topic %q", engine.ErrPartitionOutOfRange, partition, topic)
	}
	if err := s.reachable(); err != nil {
		return nil, err
	}
	if partition >= 0 {
		if err := s.checkPartition(topic, partition); err != nil {
			return nil, err
		}
	} else if _, err := s.partitions(topic); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go s.cancelWhenAway(ctx, cancel)
	acks := make([]engine.Ack, len(recs))
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	wg.Add(len(recs))
	for i := range recs {
		kr := &kgo.Record{Topic: topic, Partition: int32(partition), Key: recs[i].Key, Value: recs[i].Value}
		if recs[i].Value == nil {
			kr.Value = nil // a tombstone stays a tombstone
		} else if len(recs[i].Value) == 0 {
			kr.Value = []byte{}
		}
		for _, h := range recs[i].Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		s.cl.Produce(ctx, kr, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				errOnce.Do(func() { firstErr = produceErr(ctx, r, err) })
				return
			}
			acks[i] = engine.Ack{Partition: int(r.Partition), Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli()}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done:
		default:
			// kgo fails a record whose context ended only while it is
			// safe to (an idempotent producer keeps a batch it may have
			// written until the cluster answers for it): do not wait for
			// the cluster's return.
			err := context.Cause(ctx)
			if !errors.Is(err, ErrUnreachable) {
				err = mapErr("waiting for the cluster's acks", err)
			}
			return nil, fmt.Errorf("%w (records the Kafka client already sent may still be stored once the cluster answers)", err)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return acks, nil
}

// produceErr is the error of a record kgo failed: the cluster's being away
// when that cancelled the produce, else the Kafka client's error under the
// record's partition (under "metadata" when none was chosen: kgo fails a
// record before partitioning it when it cannot learn the topic's
// partitions).
func produceErr(ctx context.Context, r *kgo.Record, err error) error {
	if cause := context.Cause(ctx); errors.Is(err, context.Canceled) && (errors.Is(cause, ErrUnreachable) || errors.Is(cause, ErrBrokerUnreachable)) {
		return cause
	}
	if r.Partition < 0 {
		return mapErr("metadata", err)
	}
	return mapErr(fmt.Sprintf("partition %d", r.Partition), err)
}

// reachable is nil unless the cluster is away (Unreachable says
// ErrUnreachable) and still is: then it dials once more (Ping) before
// saying so, so that a cluster back since the clients last dialled it is
// used at once.
func (s *Source) reachable() error {
	if _, err := s.health.state(); !errors.Is(err, ErrUnreachable) {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.DialTimeout)
	defer cancel()
	perr := s.cl.Ping(ctx)
	if perr == nil {
		return nil
	}
	if _, err := s.health.state(); errors.Is(err, ErrUnreachable) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrUnreachable, strings.Join(s.cfg.Brokers, ","), perr)
}

// cancelWhenAway cancels a produce under way, with the Unreachable error
// as its cause, once every broker's last dial failed; it returns when ctx
// ends.
func (s *Source) cancelWhenAway(ctx context.Context, cancel context.CancelCauseFunc) {
	for {
		changed, err := s.health.state()
		if errors.Is(err, ErrUnreachable) {
			cancel(err)
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}
