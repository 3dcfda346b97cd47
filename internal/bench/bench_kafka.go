package bench

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka"
)

// Sizes of the Kafka listener's end-to-end latency run.
const (
	kafkaBenchE2ERate    = 2000 // records/s
	kafkaBenchE2ERecords = 6000
)

// runKafkaBench measures the Kafka listener in this process, over a fresh
// engine in dir, with franz-go over loopback: produce throughput with acks=1
// and acks=-1 (idempotent) of the append runs' records to an interval-mode,
// codec-none partition like the append_interval run's, consumer throughput
// reading them back, and produce-to-fetch latency. Ratios to the engine's
// own append_interval and read figures of the same run are added. total is
// the volume of the append runs (--mb), which the produce runs repeat.
func runKafkaBench(ctx context.Context, dir string, total int64, res benchResult) error {
	e, err := openBenchEngine(dir, "kafka")
	if err != nil {
		return err
	}
	defer e.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := kafka.New(e, kafka.DefaultOptions())
	go srv.Serve(l)
	defer srv.Close()
	addr := l.Addr().String()

	recs := benchRecords(total)
	cfg := engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval}
	stored := func(topic string) (int64, error) {
		segs, err := e.Segments(topic, 0)
		var n int64
		for _, s := range segs {
			n += s.Bytes
		}
		return n, err
	}
	produce := func(topic string, acks kgo.Acks, idempotent bool) (time.Duration, error) {
		if err := e.CreateTopic(topic, cfg); err != nil {
			return 0, err
		}
		opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(acks),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
			kgo.MaxBufferedRecords(1 << 16), kgo.ProducerBatchMaxBytes(1 << 20),
			kgo.ProducerBatchCompression(kgo.NoCompression())} // the append run's records are not compressed either
		if !idempotent {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		start := time.Now()
		for i := range recs {
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Key: recs[i].Key, Value: recs[i].Value, Partition: 0}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
				wg.Done()
			})
		}
		wg.Wait()
		if firstErr != nil {
			return 0, firstErr
		}
		if err := e.Sync(topic); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}

	for _, run := range []struct {
		name       string
		acks       kgo.Acks
		idempotent bool
	}{{"acks1", kgo.LeaderAck(), false}, {"acksall", kgo.AllISRAcks(), true}} {
		runtime.GC()
		topic := "kafka-bench-" + run.name
		elapsed, err := produce(topic, run.acks, run.idempotent)
		if err != nil {
			return fmt.Errorf("produce %s: %w", run.name, err)
		}
		n, err := stored(topic)
		if err != nil {
			return err
		}
		res["kafka_produce_"+run.name+"_mbps"] = mbps(n, elapsed)
		res["kafka_produce_"+run.name+"_rps"] = float64(len(recs)) / elapsed.Seconds()
		if a := res["append_interval_mbps"]; a > 0 {
			res["kafka_produce_"+run.name+"_vs_append"] = mbps(n, elapsed) / a
		}
	}

	// Consumer throughput: the acks=-1 run's partition read back.
	n, _ := stored("kafka-bench-acksall")
	recs = nil
	runtime.GC()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"kafka-bench-acksall": {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
	if err != nil {
		return err
	}
	info, err := e.Describe("kafka-bench-acksall")
	if err != nil {
		return err
	}
	want := info.Partitions[0].HWM
	start := time.Now()
	var got int64
	for got < want {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			cl.Close()
			return fmt.Errorf("consume: %w", err)
		}
		got += int64(fs.NumRecords())
	}
	elapsed := time.Since(start)
	cl.Close()
	res["kafka_consume_mbps"] = mbps(n, elapsed)
	if r := res["read_mbps"]; r > 0 {
		res["kafka_consume_vs_read"] = mbps(n, elapsed) / r
	}

	lat, err := kafkaE2E(ctx, e, addr)
	if err != nil {
		return err
	}
	res["kafka_e2e_p50_us"] = percentile(lat, 0.50)
	res["kafka_e2e_p99_us"] = percentile(lat, 0.99)
	return nil
}

// kafkaE2E produces small records at a steady rate (acks=1, interval
// mode) while a consumer long-polls, and returns each record's
// produce-to-fetch latency in microseconds.
func kafkaE2E(ctx context.Context, e *engine.Engine, addr string) ([]float64, error) {
	const topic = "kafka-bench-e2e"
	if err := e.CreateTopic(topic, engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval}); err != nil {
		return nil, err
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		topic: {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(time.Second))
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	lat := make([]float64, 0, kafkaBenchE2ERecords)
	done := make(chan error, 1)
	go func() {
		for len(lat) < kafkaBenchE2ERecords {
			fs := cons.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				done <- err
				return
			}
			now := time.Now().UnixMicro()
			fs.EachRecord(func(r *kgo.Record) {
				sent, _ := strconv.ParseInt(string(r.Value), 10, 64)
				lat = append(lat, float64(now-sent))
			})
		}
		done <- nil
	}()
	tick := time.NewTicker(time.Second / kafkaBenchE2ERate)
	defer tick.Stop()
	for range kafkaBenchE2ERecords {
		<-tick.C
		prod.Produce(ctx, &kgo.Record{Value: strconv.AppendInt(nil, time.Now().UnixMicro(), 10)}, nil)
	}
	select {
	case err := <-done:
		return lat, err
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("end-to-end run: %d of %d records arrived", len(lat), kafkaBenchE2ERecords)
	}
}
