package metrics

import (
	"context"
	"time"

	"github.com/pulselog/pulse/engine"
)

// Backend is the engine as the APIs see it, counting what they produce and
// read: give it to wsapi.New instead of the engine. Every other method is
// the engine's own.
type Backend struct {
	*engine.Engine
	m *Metrics
}

// Wrap returns e counted by m.
func (m *Metrics) Wrap(e *engine.Engine) *Backend { return &Backend{Engine: e, m: m} }

func recordBytes(recs []engine.Record) int {
	n := 0
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value)
		for _, h := range recs[i].Headers {
			n += len(h.Key) + len(h.Value)
		}
	}
	return n
}

// Produce is engine.Produce, timed, and counted once acknowledged.
func (b *Backend) Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	t0 := time.Now()
	acks, err := b.Engine.Produce(ctx, topic, partition, recs)
	if err != nil {
		return acks, err
	}
	b.produced(topic, recs, t0)
	return acks, nil
}

// ProduceIdempotent is engine.ProduceIdempotent, counted as Produce.
func (b *Backend) ProduceIdempotent(ctx context.Context, topic string, partition int, recs []engine.Record, producer engine.ProducerStamp) ([]engine.Ack, error) {
	t0 := time.Now()
	acks, err := b.Engine.ProduceIdempotent(ctx, topic, partition, recs, producer)
	if err != nil {
		return acks, err
	}
	b.produced(topic, recs, t0)
	return acks, nil
}

// produced counts an acknowledged produce that started at t0.
func (b *Backend) produced(topic string, recs []engine.Record, t0 time.Time) {
	b.m.produceSeconds.Observe(time.Since(t0).Seconds())
	b.m.producedRecords.WithLabelValues(topic).Add(float64(len(recs)))
	b.m.producedBytes.WithLabelValues(topic).Add(float64(recordBytes(recs)))
	b.m.count(topic) // after the series exist: a scrape in between keeps them
}

// Read is engine.Read, timed, and counted when it returns records.
func (b *Backend) Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error) {
	res, err := b.timed(b.Engine.Read, topic, partition, from, maxRecords, maxBytes)
	if err != nil {
		return res, err
	}
	b.CountRead(topic, res.Records)
	return res, nil
}

// ReadUncounted is engine.ReadUncounted, timed: the Kafka fetch reads with
// it and counts only the records of the response it sends (CountRead) and
// the skipped offsets that response passes on (engine.CountSkipped), as
// kafka.ReadCounter asks.
func (b *Backend) ReadUncounted(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error) {
	return b.timed(b.Engine.ReadUncounted, topic, partition, from, maxRecords, maxBytes)
}

// timed is read, observed in the fetch duration when it succeeds.
func (b *Backend) timed(read func(string, int, int64, int, int) (engine.ReadResult, error), topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error) {
	t0 := time.Now()
	res, err := read(topic, partition, from, maxRecords, maxBytes)
	if err != nil {
		return res, err
	}
	b.m.fetchSeconds.Observe(time.Since(t0).Seconds())
	return res, nil
}

// CountRead counts recs as read from topic.
func (b *Backend) CountRead(topic string, recs []engine.Record) {
	if len(recs) == 0 {
		return
	}
	b.m.readRecords.WithLabelValues(topic).Add(float64(len(recs)))
	b.m.readBytes.WithLabelValues(topic).Add(float64(recordBytes(recs)))
	b.m.count(topic) // after the series exist: a scrape in between keeps them
}
