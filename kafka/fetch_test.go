package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestListOffsets: earliest is the log start, latest the HWM, a timestamp
// the first record committed at or after it.
func TestListOffsets(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	ctx := context.Background()
	if err := p.eng.CreateTopic("lo", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	first, err := p.eng.Produce(ctx, "lo", 0, []engine.Record{{Value: []byte("a")}, {Value: []byte("b")}})
	if err != nil {
		t.Fatal(err)
	}
	// A later commit time for the next append.
	for {
		second, err := p.eng.Produce(ctx, "lo", 0, []engine.Record{{Value: []byte("c")}})
		if err != nil {
			t.Fatal(err)
		}
		if second[0].Timestamp > first[0].Timestamp {
			break
		}
	}
	adm := kadm.NewClient(kgoClient(t, p.addr))
	start, err := adm.ListStartOffsets(ctx, "lo")
	if err != nil {
		t.Fatal(err)
	}
	end, err := adm.ListEndOffsets(ctx, "lo")
	if err != nil {
		t.Fatal(err)
	}
	after, err := adm.ListOffsetsAfterMilli(ctx, first[0].Timestamp+1, "lo")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := start.Lookup("lo", 0)
	e, _ := end.Lookup("lo", 0)
	a, _ := after.Lookup("lo", 0)
	info, _ := p.eng.Describe("lo")
	all, err := p.eng.Read("lo", 0, 0, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(-1)
	for _, r := range all.Records {
		if r.Timestamp > first[0].Timestamp {
			want = r.Offset
			break
		}
	}
	if s.Offset != 0 || e.Offset != info.Partitions[0].HWM || a.Offset != want || want < 2 {
		t.Fatalf("earliest %d, latest %d (HWM %d), after the first commit %d (want %d)", s.Offset, e.Offset, info.Partitions[0].HWM, a.Offset, want)
	}
	future, err := adm.ListOffsetsAfterMilli(ctx, time.Now().Add(time.Hour).UnixMilli(), "lo")
	if err != nil {
		t.Fatal(err)
	}
	// kadm reports "no such record" as the end offset, as Kafka clients do.
	if f, _ := future.Lookup("lo", 0); f.Err != nil || f.Offset != e.Offset && f.Offset != -1 {
		t.Fatalf("a future timestamp: %+v", f)
	}
}

// TestFetchLongPoll: a fetch with nothing to read parks until a produce
// moves the HWM and returns that record, well before its max wait.
func TestFetchLongPoll(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("lp", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	cl := kgoClient(t, p.addr)
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 60000, 1, 1<<20
	req.SetVersion(11)
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "lp"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	got := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	// The fetch is parked: nothing came back while the topic is empty.
	select {
	case r := <-got:
		t.Fatalf("fetch returned before anything was produced: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	prod := kgoClient(t, p.addr, kgo.DefaultProduceTopic("lp"))
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Value: []byte("wake")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		rp := r.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 || rp.HighWatermark != 1 || len(rp.RecordBatches) == 0 {
			t.Fatalf("woken fetch: %+v", rp)
		}
		b, err := decodeBatches(rp.RecordBatches, 1<<20)
		if err != nil || len(b) != 1 || string(b[0].Records[0].Value) != "wake" {
			t.Fatalf("woken fetch's records: %+v %v", b, err)
		}
	case <-time.After(30 * time.Second): // half the max wait: the produce must have woken it
		t.Fatal("the fetch was not woken by the produce")
	}
}
