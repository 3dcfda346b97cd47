package cluster

import (
	"context"
	"fmt"
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
// produced. Records are produced concurrently and may partly succeed when
// the cluster fails some of them; the first failure is returned.
func (s *Source) Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if partition < -1 {
		return nil, fmt.Errorf("%w: partition %d of topic %q", engine.ErrPartitionOutOfRange, partition, topic)
	}
	if partition >= 0 {
		if err := s.checkPartition(topic, partition); err != nil {
			return nil, err
		}
	} else if _, err := s.partitions(topic); err != nil {
		return nil, err
	}
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
				errOnce.Do(func() { firstErr = mapErr(fmt.Sprintf("produce to %s/%d", topic, r.Partition), err) })
				return
			}
			acks[i] = engine.Ack{Partition: int(r.Partition), Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli()}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return acks, nil
}
