package kafka

import (
	"bytes"
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestProduceAnswersTheLogStart: a Produce response (v5+) carries each
// partition's log start offset, the first offset still stored, also once
// retention moved it, for plain and idempotent batches and for a retried
// idempotent batch; a partition refused gets -1, as in Kafka.
func TestProduceAnswersTheLogStart(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cfg := engine.TopicConfig{Partitions: 2, Codec: "none", SegmentMaxBytes: 1 << 20}
	if err := p.eng.CreateTopic("start", cfg); err != nil {
		t.Fatal(err)
	}
	val := bytes.Repeat([]byte("x"), 64<<10)
	for range 64 { // 4 MiB in partition 0: four segments
		if _, err := p.eng.Produce(context.Background(), "start", 0, []engine.Record{{Value: val}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg.RetentionMaxBytes = 2 << 20
	if err := p.eng.AlterTopic("start", cfg); err != nil {
		t.Fatal(err)
	}
	if err := p.eng.RunRetention("start"); err != nil {
		t.Fatal(err)
	}
	info, err := p.eng.Describe("start")
	if err != nil {
		t.Fatal(err)
	}
	start := info.Partitions[0].LogStart
	if start == 0 {
		t.Fatal("retention deleted nothing; the test needs a log start above 0")
	}

	cl := kgoClient(t, p.addr)
	ctx := context.Background()
	init, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil || init.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %v", init, err)
	}
	one := func() []engine.Record { return []engine.Record{{Key: []byte("k"), Value: []byte("v")}} }
	idem := producerBatch(one(), init.ProducerID, 0, 0)

	// One request: both partitions, one the topic does not have.
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "start"
	for _, part := range []struct {
		partition int32
		batch     []byte
	}{{0, producerBatch(one(), -1, -1, -1)}, {1, idem}, {7, producerBatch(one(), -1, -1, -1)}} {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = part.partition, part.batch
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if v := req.GetVersion(); v < 5 {
		t.Fatalf("Produce v%d: log_start_offset is in v5 and later", v)
	}
	want := map[int32]struct {
		code  int16
		start int64
	}{0: {0, start}, 1: {0, 0}, 7: {errUnknownTopicOrPartition, -1}}
	for _, rp := range resp.Topics[0].Partitions {
		w := want[rp.Partition]
		if rp.ErrorCode != w.code || rp.LogStartOffset != w.start {
			t.Errorf("partition %d: error %d, log_start_offset %d; want error %d, log_start_offset %d", rp.Partition, rp.ErrorCode, rp.LogStartOffset, w.code, w.start)
		}
	}

	// A retry of the idempotent batch, answered from memory, and the
	// next one: the log start too.
	retry := produceRaw(t, cl, produceReq("start", 1, idem))
	next := produceRaw(t, cl, produceReq("start", 1, producerBatch(one(), init.ProducerID, 0, 1)))
	for what, rp := range map[string]kmsg.ProduceResponseTopicPartition{"retried batch": retry, "next batch": next} {
		if rp.ErrorCode != 0 || rp.LogStartOffset != 0 {
			t.Errorf("%s to partition 1: error %d, log_start_offset %d; want 0, 0", what, rp.ErrorCode, rp.LogStartOffset)
		}
	}
	// A refused batch of a partition that exists: -1.
	gap := produceRaw(t, cl, produceReq("start", 1, producerBatch(one(), init.ProducerID, 0, 9)))
	if gap.ErrorCode != errOutOfOrderSequence || gap.LogStartOffset != -1 {
		t.Errorf("sequence gap: error %d, log_start_offset %d; want %d, -1", gap.ErrorCode, gap.LogStartOffset, errOutOfOrderSequence)
	}
}
