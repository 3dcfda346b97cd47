package kafka

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestCommitMetadataSurvivesRestart: kadm commits offsets with metadata
// strings; after a restart of Pulse on the same data dir OffsetFetch
// returns both, and the websocket API's cursor is the same offset.
func TestCommitMetadataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	p := startPulse(t, dir, Options{})
	if err := p.eng.CreateTopic("md", engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(kgoClient(t, p.addr))
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "md", Partition: 0, At: 5, LeaderEpoch: -1, Metadata: "worker-1 checkpoint \u00e9"})
	offs.Add(kadm.Offset{Topic: "md", Partition: 1, At: 9, LeaderEpoch: -1, Metadata: ""})
	offs.Add(kadm.Offset{Topic: "md", Partition: 2, At: 1 << 40, LeaderEpoch: -1, Metadata: string(make([]byte, maxCommitMetadata))})
	resp, err := adm.CommitOffsets(ctx, "mdgroup", offs)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	// Over the limit: refused, the stored commit unchanged.
	big := kadm.Offsets{}
	big.Add(kadm.Offset{Topic: "md", Partition: 0, At: 6, LeaderEpoch: -1, Metadata: string(make([]byte, maxCommitMetadata+1))})
	if resp, err := adm.CommitOffsets(ctx, "mdgroup", big); err != nil || resp.Error() == nil {
		t.Fatalf("over-long metadata: %v %v", err, resp)
	}

	p.stop(t)
	p = startPulse(t, dir, Options{})
	adm = kadm.NewClient(kgoClient(t, p.addr))
	got, err := adm.FetchOffsets(ctx, "mdgroup")
	if err != nil || got.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, got.Error())
	}
	for _, want := range offs.Sorted() {
		o, ok := got.Lookup("md", want.Partition)
		if !ok || o.At != want.At || o.Metadata != want.Metadata {
			t.Errorf("partition %d after restart: %+v, want offset %d metadata %q", want.Partition, o, want.At, want.Metadata)
		}
	}
	if off, ok, err := p.eng.Cursor("mdgroup", "md", 1); err != nil || !ok || off != 9 {
		t.Errorf("engine cursor: %d %v %v, want 9", off, ok, err)
	}
	// A websocket-style commit of the same cursor replaces offset and
	// metadata, as a Kafka commit without metadata would.
	if err := p.eng.CommitCursor("mdgroup", "md", 0, 0); err != nil {
		t.Fatal(err)
	}
	got, err = adm.FetchOffsets(ctx, "mdgroup")
	if o, _ := got.Lookup("md", 0); err != nil || o.At != 0 || o.Metadata != "" {
		t.Errorf("after a cursor commit: %+v %v", o, err)
	}
}

// initProducer asks for a producer id.
func initProducer(t *testing.T, cl *kgo.Client) int64 {
	t.Helper()
	init, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(context.Background(), cl)
	if err != nil || init.ErrorCode != 0 || init.ProducerID <= 0 || init.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %+v %v", init, err)
	}
	return init.ProducerID
}

func numbered(tag string, n int) []engine.Record {
	out := make([]engine.Record, n)
	for i := range out {
		out[i] = engine.Record{Key: fmt.Appendf(nil, "k%d", i%3), Value: fmt.Appendf(nil, "%s-%d", tag, i)}
	}
	return out
}

// readAll returns every value of topic/partition below the HWM.
func readAll(t *testing.T, eng *engine.Engine, topic string, partition int) []string {
	t.Helper()
	var out []string
	for from := int64(0); ; {
		res, err := eng.Read(topic, partition, from, 10000, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			out = append(out, string(r.Value))
		}
		if res.Next >= res.HWM || len(res.Records) == 0 {
			return out
		}
		from = res.Next
	}
}

// TestIdempotentRetryAfterRestart: an idempotent batch retried after Pulse
// restarted is answered with its original offsets and time and stored
// once, also one the log cut into several Pulse batches (more records than
// a flush holds) and one followed by websocket-style records; a sequence
// gap after the restart is OUT_OF_ORDER_SEQUENCE_NUMBER; the next batch is
// accepted; the new process hands out a new producer id.
func TestIdempotentRetryAfterRestart(t *testing.T) {
	dir := t.TempDir()
	p := startPulse(t, dir, Options{})
	if err := p.eng.CreateTopic("idem", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	cl := kgoClient(t, p.addr)
	pid := initProducer(t, cl)
	other := initProducer(t, cl)
	a := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("a", 3), pid, 0, 0)))
	big := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("big", 2500), pid, 0, 3)))
	o := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("o", 2), other, 0, 0)))
	if _, err := p.eng.Produce(context.Background(), "idem", 0, numbered("ws", 2)); err != nil {
		t.Fatal(err)
	}
	c := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("c", 4), pid, 0, 2503)))
	for _, r := range []kmsg.ProduceResponseTopicPartition{a, big, o, c} {
		if r.ErrorCode != 0 {
			t.Fatalf("produce: %+v", r)
		}
	}
	if a.BaseOffset != 0 || big.BaseOffset != 3 || o.BaseOffset != 2503 || c.BaseOffset != 2507 {
		t.Fatalf("offsets %d %d %d %d", a.BaseOffset, big.BaseOffset, o.BaseOffset, c.BaseOffset)
	}
	before := readAll(t, p.eng, "idem", 0)

	p.stop(t)
	p = startPulse(t, dir, Options{})
	cl = kgoClient(t, p.addr)
	for _, tc := range []struct {
		name  string
		batch []byte
		want  kmsg.ProduceResponseTopicPartition
	}{
		{"first batch", producerBatch(numbered("a", 3), pid, 0, 0), a},
		{"batch of more records than a flush holds", producerBatch(numbered("big", 2500), pid, 0, 3), big},
		{"other producer", producerBatch(numbered("o", 2), other, 0, 0), o},
		{"last batch", producerBatch(numbered("c", 4), pid, 0, 2503), c},
	} {
		got := produceRaw(t, cl, produceReq("idem", 0, tc.batch))
		if got.ErrorCode != 0 || got.BaseOffset != tc.want.BaseOffset || got.LogAppendTime != tc.want.LogAppendTime {
			t.Errorf("retry of the %s after restart: error %d offset %d time %d, want offset %d time %d",
				tc.name, got.ErrorCode, got.BaseOffset, got.LogAppendTime, tc.want.BaseOffset, tc.want.LogAppendTime)
		}
	}
	if gap := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("gap", 1), pid, 0, 2600))); gap.ErrorCode != errOutOfOrderSequence {
		t.Errorf("sequence gap after restart: error %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", gap.ErrorCode)
	}
	if old := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("old", 1), pid, 0, 1))); old.ErrorCode != errOutOfOrderSequence {
		t.Errorf("part of a batch at a sequence already used: error %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", old.ErrorCode)
	}
	next := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("next", 1), pid, 0, 2507)))
	if next.ErrorCode != 0 || next.BaseOffset != 2511 {
		t.Errorf("next batch after restart: %+v, want offset 2511", next)
	}
	// The same producer on the other partition is a stranger there.
	if r := produceRaw(t, cl, produceReq("idem", 1, producerBatch(numbered("p1", 1), pid, 0, 7))); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Errorf("partition 1: %+v", r)
	}
	if got := readAll(t, p.eng, "idem", 0); len(got) != len(before)+1 || got[len(got)-1] != "next-0" || fmt.Sprint(got[:len(before)]) != fmt.Sprint(before) {
		t.Errorf("partition 0 holds %d records, want the %d from before the restart and next-0", len(got), len(before))
	}
	if id := initProducer(t, cl); id == pid || id == other {
		t.Errorf("producer id %d handed out again after a restart", id)
	}
	// Ids Pulse never hands out are refused; nothing is stored.
	if r := produceRaw(t, cl, produceReq("idem", 0, producerBatch(numbered("x", 1), 1<<40, 0, 0))); r.ErrorCode != errUnknownProducerID {
		t.Errorf("producer id 2^40: error %d, want UNKNOWN_PRODUCER_ID", r.ErrorCode)
	}
	if got := readAll(t, p.eng, "idem", 0); len(got) != len(before)+1 {
		t.Errorf("%d records after the refused batch, want %d", len(got), len(before)+1)
	}
}

// TestIdempotenceSurvivesSIGKILL: `pulse serve` is killed with SIGKILL after
// a franz-go idempotent producer and a raw idempotent batch were
// acknowledged, and started again on the same data dir and address. The raw
// batch sent again gets its original offsets; the franz-go producer goes on
// with its producer id and sequence, accepted; every record is stored once;
// InitProducerId hands out an id neither producer had.
func TestIdempotenceSurvivesSIGKILL(t *testing.T) {
	bin := buildPulse(t)
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd, _ := serveProcessOn(t, bin, dir, addr)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod := kgoClient(t, addr, kgo.DefaultProduceTopic("sk"), kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	produce := func(tag string, n int) {
		t.Helper()
		var rs []*kgo.Record
		for i := range n {
			rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", tag, i)})
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("franz-go produce %s: %v", tag, err)
		}
	}
	produce("before", 100)
	kpid, kepoch, err := prod.ProducerID(ctx)
	if err != nil || kpid <= 0 {
		t.Fatalf("franz-go producer id %d: %v", kpid, err)
	}
	raw := kgoClient(t, addr)
	pid := initProducer(t, raw)
	batch := producerBatch(numbered("raw", 5), pid, 0, 0)
	first := produceRaw(t, raw, produceReq("sk", 0, batch))
	if first.ErrorCode != 0 || first.BaseOffset != 100 {
		t.Fatalf("raw batch: %+v", first)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	serveProcessOn(t, bin, dir, addr)

	retry := produceRaw(t, raw, produceReq("sk", 0, producerBatch(numbered("raw", 5), pid, 0, 0)))
	if retry.ErrorCode != 0 || retry.BaseOffset != first.BaseOffset || retry.LogAppendTime != first.LogAppendTime {
		t.Fatalf("retry after SIGKILL: error %d offset %d time %d, want offset %d time %d",
			retry.ErrorCode, retry.BaseOffset, retry.LogAppendTime, first.BaseOffset, first.LogAppendTime)
	}
	produce("after", 100)
	if id, epoch, err := prod.ProducerID(ctx); err != nil || id != kpid || epoch != kepoch {
		t.Errorf("franz-go producer id after the restart: %d/%d (%v), before %d/%d: it was reset", id, epoch, err, kpid, kepoch)
	}
	if id := initProducer(t, raw); id == pid || id == kpid {
		t.Errorf("producer id %d handed out again after SIGKILL", id)
	}

	rd := kgoClient(t, addr, kgo.ConsumeTopics("sk"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 205 {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 205 records", len(got))
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	want := make([]string, 0, 205)
	for i := range 100 {
		want = append(want, fmt.Sprintf("before-%d", i))
	}
	for i := range 5 {
		want = append(want, fmt.Sprintf("raw-%d", i))
	}
	for i := range 100 {
		want = append(want, fmt.Sprintf("after-%d", i))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stored records:\n got %v\nwant %v", got, want)
	}
	// Nothing more than those.
	adm := kadm.NewClient(raw)
	ends, err := adm.ListEndOffsets(ctx, "sk")
	if o, ok := ends.Lookup("sk", 0); err != nil || !ok || o.Offset != 205 {
		t.Fatalf("end offset %+v %v, want 205", o, err)
	}
}
