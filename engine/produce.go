package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
)

// PartialError is the error of a Produce whose records went to several
// partitions and failed in some of them after others had stored theirs:
// Acks[i] is record i's ack where Stored[i], and record i was not stored
// where !Stored[i] (its partition's append failed with Err; an append cut
// short by its context may or may not have stored it). Records of one
// partition are stored together or not at all: a failed write is rewound
// before it is answered (docs/architecture.md).
type PartialError struct {
	Acks   []Ack
	Stored []bool
	Err    error // the first partition's failure
}

func (e *PartialError) Error() string {
	n := 0
	for _, s := range e.Stored {
		if s {
			n++
		}
	}
	return fmt.Sprintf("%v (%d of %d records were stored in other partitions)", e.Err, n, len(e.Stored))
}

func (e *PartialError) Unwrap() error { return e.Err }

// Produce appends recs to topic and returns one Ack per record, in order.
// With partition >= 0 every record goes there; with partition < 0 keyed
// records go to murmur2(key) (Kafka's default partitioner) and keyless ones
// round-robin. Produce returns once the topic's sync mode promise holds for
// every record. A failed append stores nothing of its partition's records.
// Records sent to different partitions are not atomic together: when some
// partitions stored theirs and another failed, the error is a
// *PartialError naming exactly which records were stored, with their acks;
// any other error means nothing was stored.
func (e *Engine) Produce(ctx context.Context, topicName string, partition int, recs []Record) ([]Ack, error) {
	t, err := e.topic(topicName)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if partition >= len(t.parts) {
		return nil, partitionOutOfRange(topicName, len(t.parts), partition)
	}
	acks := make([]Ack, len(recs))
	if partition >= 0 || len(t.parts) == 1 {
		partition = max(partition, 0)
		return acks, e.appendTo(ctx, t, partition, recs, nil, acks)
	}

	// Group by partition, keeping each group in produce order.
	groups := map[int][]int{}
	for i := range recs {
		p := t.part.partition(recs[i].Key, len(t.parts))
		groups[p] = append(groups[p], i)
	}
	if len(groups) == 1 {
		for p, idx := range groups {
			return acks, e.appendTo(ctx, t, p, recs, idx, acks)
		}
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		first  error
		failed []int // record indexes of failed groups
	)
	for p, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.appendTo(ctx, t, p, recs, idx, acks); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if first == nil {
					first = err
				}
				failed = append(failed, idx...)
			}
		}()
	}
	wg.Wait()
	if first == nil {
		return acks, nil
	}
	if len(failed) == len(recs) {
		return nil, first // nothing stored
	}
	pe := &PartialError{Acks: acks, Stored: make([]bool, len(recs)), Err: first}
	for i := range pe.Stored {
		pe.Stored[i] = true
	}
	for _, i := range failed {
		pe.Stored[i] = false
		pe.Acks[i] = Ack{}
	}
	return nil, pe
}

// appendTo appends recs[idx] (all of recs when idx is nil) to partition p
// and fills their acks.
func (e *Engine) appendTo(ctx context.Context, t *topic, p int, recs []Record, idx []int, acks []Ack) error {
	batch := recs
	if idx != nil {
		batch = make([]Record, len(idx))
		for i, j := range idx {
			batch[i] = recs[j]
		}
	}
	base, ts, err := t.parts[p].Append(ctx, batch)
	if err != nil {
		return fmt.Errorf("topic %s partition %d: %w", t.name, p, e.mapPartitionErr(t, err))
	}
	for i := range batch {
		j := i
		if idx != nil {
			j = idx[i]
		}
		acks[j] = Ack{Partition: p, Offset: base + int64(i), Timestamp: ts}
	}
	return nil
}

// ProducerStamp names an idempotent Kafka producer and the sequence number
// of the first record of an append (engine/codec/doc.go).
type ProducerStamp = codec.ProducerStamp

// ProducerBatch is a stored batch stamped with its idempotent producer.
type ProducerBatch = plog.ProducerBatch

// ProduceIdempotent appends recs, the records of one batch of an idempotent
// producer, to one partition as Produce does, as one stored batch of their
// own stamped with producer (record i has sequence producer.BaseSequence+i),
// so that ProducerBatches finds it after a restart. A zero producer is a
// plain Produce to the partition.
func (e *Engine) ProduceIdempotent(ctx context.Context, topicName string, partition int, recs []Record, producer ProducerStamp) ([]Ack, error) {
	if producer.ID == 0 {
		return e.Produce(ctx, topicName, max(partition, 0), recs)
	}
	t, l, err := e.topicPartition(topicName, partition)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	base, ts, err := l.AppendProducer(ctx, recs, producer)
	if err != nil {
		return nil, fmt.Errorf("topic %s partition %d: %w", topicName, partition, e.mapPartitionErr(t, err))
	}
	acks := make([]Ack, len(recs))
	for i := range acks {
		acks[i] = Ack{Partition: partition, Offset: base + int64(i), Timestamp: ts}
	}
	return acks, nil
}

// ProducerBatches calls fn for each visible batch stamped with an
// idempotent producer in the partition's last two segments, oldest first:
// see plog.Log.ProducerBatches.
func (e *Engine) ProducerBatches(topic string, partition int, fn func(ProducerBatch)) error {
	t, l, err := e.topicPartition(topic, partition)
	if err != nil {
		return err
	}
	if err := l.ProducerBatches(fn); err != nil {
		return fmt.Errorf("topic %s partition %d: %w", topic, partition, e.mapPartitionErr(t, err))
	}
	return nil
}

// Read returns records of one partition with offsets in [from, HWM): see
// plog.Log.Read. The records are read-only. The offsets it skips are
// counted in the partition's SkippedRecords.
func (e *Engine) Read(topic string, partition int, from int64, maxRecords, maxBytes int) (ReadResult, error) {
	return e.read(topic, partition, from, maxRecords, maxBytes, (*plog.Log).Read)
}

// ReadUncounted is Read without counting the offsets it skips in
// SkippedRecords (plog.Log.ReadUncounted): its caller counts, with
// CountSkipped, those it hands on.
func (e *Engine) ReadUncounted(topic string, partition int, from int64, maxRecords, maxBytes int) (ReadResult, error) {
	return e.read(topic, partition, from, maxRecords, maxBytes, (*plog.Log).ReadUncounted)
}

// CountSkipped counts, in the partition's SkippedRecords, n offsets that a
// ReadUncounted of it skipped and its caller handed on.
func (e *Engine) CountSkipped(topic string, partition int, n int64) error {
	_, l, err := e.topicPartition(topic, partition)
	if err != nil {
		return err
	}
	l.CountSkipped(n)
	return nil
}

func (e *Engine) read(topic string, partition int, from int64, maxRecords, maxBytes int, read func(*plog.Log, int64, int, int) (plog.ReadResult, error)) (ReadResult, error) {
	t, l, err := e.topicPartition(topic, partition)
	if err != nil {
		return ReadResult{}, err
	}
	r, err := read(l, from, maxRecords, maxBytes)
	if err != nil {
		return ReadResult{}, fmt.Errorf("topic %s partition %d: %w", topic, partition, e.mapPartitionErr(t, err))
	}
	return ReadResult{Records: r.Records, Next: r.Next, HWM: r.HWM, LogStart: r.LogStart, Skipped: r.Skipped, Skips: r.Skips}, nil
}

// LogStart returns the first offset one partition still stores (after
// retention), as Read and Describe report it, without reading or sizing
// anything: the Kafka listener answers it on every produce.
func (e *Engine) LogStart(topic string, partition int) (int64, error) {
	_, l, err := e.topicPartition(topic, partition)
	if err != nil {
		return 0, err
	}
	return l.LogStart(), nil
}

// NotifyC returns a channel closed at the partition's next HWM advance; take
// it before reading (see docs/architecture.md).
func (e *Engine) NotifyC(topic string, partition int) (<-chan struct{}, error) {
	l, err := e.partition(topic, partition)
	if err != nil {
		return nil, err
	}
	return l.NotifyC(), nil
}

// OffsetForTimestamp returns the first visible offset committed at or after
// ms (Unix milliseconds), or the HWM when there is none.
func (e *Engine) OffsetForTimestamp(topic string, partition int, ms int64) (int64, error) {
	l, err := e.partition(topic, partition)
	if err != nil {
		return 0, err
	}
	off, err := l.OffsetForTimestamp(ms)
	if err != nil {
		return 0, fmt.Errorf("topic %s partition %d: %w", topic, partition, err)
	}
	return off, nil
}

// Segments describes the segments of one partition, oldest first.
func (e *Engine) Segments(topic string, partition int) ([]SegmentInfo, error) {
	l, err := e.partition(topic, partition)
	if err != nil {
		return nil, err
	}
	segs, err := l.Segments()
	if err != nil {
		return nil, fmt.Errorf("topic %s partition %d: %w", topic, partition, err)
	}
	out := make([]SegmentInfo, len(segs))
	for i, s := range segs {
		out[i] = segmentInfo(s)
	}
	return out, nil
}

func segmentInfo(s plog.SegmentInfo) SegmentInfo {
	return SegmentInfo{
		Base: s.Base, Next: s.Next, Bytes: s.Bytes, Records: s.Records, Batches: s.Batches,
		FirstTimestamp: s.FirstTimestamp, LastTimestamp: s.LastTimestamp, Codec: s.Codec,
		RawBytes: s.RawBytes, Sealed: s.Sealed, Sparse: s.Sparse,
	}
}

// Sync makes everything appended to topic durable and visible now.
func (e *Engine) Sync(topic string) error {
	t, err := e.topic(topic)
	if err != nil {
		return err
	}
	for p, l := range t.parts {
		if err := l.Sync(); err != nil {
			return fmt.Errorf("topic %s partition %d: %w", topic, p, err)
		}
	}
	return nil
}

// ExposeHiddenTail makes a partition's hidden tail (records recovery kept
// above the persisted HWM under the "hide" policy) visible now.
func (e *Engine) ExposeHiddenTail(topic string, partition int) error {
	l, err := e.partition(topic, partition)
	if err != nil {
		return err
	}
	if _, err := l.ExposeHiddenTail(); err != nil {
		return fmt.Errorf("topic %s partition %d: %w", topic, partition, err)
	}
	return nil
}
