package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
)

// benchTopic fills an interval-mode, codec-none partition with mb MiB of
// ~1 KiB records, as `pulse bench`'s append runs do, and returns its HWM.
func benchTopic(b *testing.B, p *pulse, topic string, mb int) int64 {
	b.Helper()
	if err := p.eng.CreateTopic(topic, engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval}); err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 1000)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	var batch []engine.Record
	for i := 0; i < mb<<10; i++ {
		batch = append(batch, engine.Record{Key: fmt.Appendf(nil, "k%d", i%1000), Value: val})
		if len(batch) == 256 {
			if _, err := p.eng.Produce(context.Background(), topic, 0, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := p.eng.Sync(topic); err != nil {
		b.Fatal(err)
	}
	info, _ := p.eng.Describe(topic)
	return info.Partitions[0].HWM
}

// BenchmarkConsume reads a 64 MiB partition with a franz-go consumer, as
// `pulse bench --kafka-listener`'s consume run does; BenchmarkEngineRead
// reads it with the engine's Read, as its read run does.
func BenchmarkConsume(b *testing.B) {
	p := startPulse(b, "", DefaultOptions())
	hwm := benchTopic(b, p, "bc", 64)
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for range b.N {
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			"bc": {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for got := int64(0); got < hwm; {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				b.Fatal(err)
			}
			got += int64(fs.NumRecords())
		}
		cancel()
		cl.Close()
	}
}

func BenchmarkEngineRead(b *testing.B) {
	p := startPulse(b, "", DefaultOptions())
	benchTopic(b, p, "br", 64)
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for range b.N {
		for from := int64(0); ; {
			r, err := p.eng.Read("br", 0, from, 5000, 8<<20)
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Records) == 0 || r.Next >= r.HWM {
				break
			}
			from = r.Next
		}
	}
}

// BenchmarkEncodeBatches encodes 16 MiB of ~1 KiB records (runs of 256
// with one commit time) as fetched batches.
func BenchmarkEncodeBatches(b *testing.B) {
	val := make([]byte, 1000)
	recs := make([]engine.Record, 16<<10)
	for i := range recs {
		recs[i] = engine.Record{Offset: int64(i), Timestamp: int64(1_700_000_000_000 + i/256), Key: fmt.Appendf(nil, "k%d", i%1000), Value: val}
	}
	buf := make([]byte, 0, batchesLen(recs))
	b.SetBytes(16 << 20)
	b.ResetTimer()
	for range b.N {
		buf = appendBatches(buf[:0], recs)
	}
}

// BenchmarkProduceAcks1 produces 64 MiB of ~1 KiB records with a franz-go
// producer, acks=1 and idempotence off (one request in flight, franz-go's
// default then), to an interval-mode, codec-none partition, as `pulse
// bench --kafka-listener`'s acks1 run does.
func BenchmarkProduceAcks1(b *testing.B) {
	p := startPulse(b, "", DefaultOptions())
	val := make([]byte, 1000)
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for i := range b.N {
		topic := fmt.Sprintf("bp%d", i)
		if err := p.eng.CreateTopic(topic, engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval}); err != nil {
			b.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
			kgo.DisableIdempotentWrite(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
			kgo.MaxBufferedRecords(1<<16), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for j := 0; j < 64<<10; j++ {
			wg.Add(1)
			cl.Produce(context.Background(), &kgo.Record{Key: fmt.Appendf(nil, "k%d", j%1000), Value: val}, func(_ *kgo.Record, err error) {
				if err != nil {
					b.Error(err)
				}
				wg.Done()
			})
		}
		wg.Wait()
		cl.Close()
	}
}
