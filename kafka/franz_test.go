package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
)

func kgoClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceKgo produces n keyed records with headers to topic with codec,
// through an idempotent franz-go producer, and returns them.
func produceKgo(t testing.TB, addr, topic, tag string, n int, codec kgo.CompressionCodec) []rec {
	t.Helper()
	cl := kgoClient(t, addr, kgo.ProducerBatchCompression(codec), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	var want []rec
	var rs []*kgo.Record
	for i := range n {
		r := &kgo.Record{
			Topic: topic,
			Key:   fmt.Appendf(nil, "%s-key-%d", tag, i%7),
			Value: fmt.Appendf(nil, "%s value %d \x00\xff", tag, i),
			Headers: []kgo.RecordHeader{
				{Key: "h1", Value: fmt.Appendf(nil, "v%d", i)},
				{Key: "empty", Value: []byte{}},
			},
		}
		rs = append(rs, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", tag, err)
	}
	for _, r := range rs {
		want = append(want, rec{Topic: topic, Partition: r.Partition, Key: string(r.Key), Value: string(r.Value),
			Headers: headerString([2][]byte{[]byte("h1"), r.Headers[0].Value}, [2][]byte{[]byte("empty"), {}})})
	}
	return want
}

// consumeKgo reads n records of topic with a group consumer.
func consumeKgo(t testing.TB, addr, group, topic string, n int) []rec {
	t.Helper()
	cl := kgoClient(t, addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.Balancers(kgo.CooperativeStickyBalancer()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []rec
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(got), n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			var hs [][2][]byte
			for _, h := range r.Headers {
				hs = append(hs, [2][]byte{[]byte(h.Key), h.Value})
			}
			got = append(got, rec{Topic: r.Topic, Partition: r.Partition, Key: string(r.Key), Value: string(r.Value), Headers: headerString(hs...)})
		})
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return got
}

func TestFranzProduceConsume(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := p.eng.CreateTopic("orders-check", engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	var want []rec
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, c := range codecs {
		want = append(want, produceKgo(t, p.addr, "orders", name, 50, c)...)
	}
	got := consumeKgo(t, p.addr, "g1", "orders", len(want))
	sameRecs(t, got, want)

	// franz-go's default partitioner put each key where the engine's own
	// (murmur2) partitioner puts it, so websocket and Kafka producers agree.
	seen := map[string]int32{}
	for _, r := range want {
		seen[r.Key] = r.Partition
	}
	for key, part := range seen {
		acks, err := p.eng.Produce(ctx, "orders-check", -1, []engine.Record{{Key: []byte(key)}})
		if err != nil {
			t.Fatal(err)
		}
		if int32(acks[0].Partition) != part {
			t.Fatalf("key %q: franz-go chose partition %d, the engine %d", key, part, acks[0].Partition)
		}
	}
	// The group's commit is the Pulse cursor of the same name.
	cs, err := p.eng.Consumers("orders")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, c := range cs {
		if c.Consumer == "g1" {
			total += c.Offset
		}
	}
	if total != int64(len(want)) {
		t.Fatalf("cursors of g1 sum to %d, want %d (%v)", total, len(want), cs)
	}
}

// TestTimestampsArePulses: whatever timestamp the producer sets, a record
// comes back with its Pulse commit time, flagged LogAppendTime, at the
// offset and with the bytes the engine holds.
func TestTimestampsArePulses(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr, kgo.ConsumeTopics("ts"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AllowAutoTopicCreation())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for i := range 5 {
		rs = append(rs, &kgo.Record{Topic: "ts", Key: []byte{byte(i)}, Value: []byte("v"), Timestamp: time.Unix(1000, 0)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stored, err := p.eng.Read("ts", 0, 0, 100, 1<<20)
	if err != nil || len(stored.Records) != 5 {
		t.Fatalf("engine read: %d records, %v", len(stored.Records), err)
	}
	for got := 0; got < 5; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			e := stored.Records[r.Offset]
			if r.Timestamp.UnixMilli() != e.Timestamp || r.Attrs.TimestampType() != 1 || string(r.Key) != string(e.Key) {
				t.Errorf("offset %d: timestamp %d (type %d), the engine's %d", r.Offset, r.Timestamp.UnixMilli(), r.Attrs.TimestampType(), e.Timestamp)
			}
			got++
		})
	}
}
