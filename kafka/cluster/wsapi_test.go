package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A record produced over the websocket API lands on the cluster and a
// franz-go consumer reads it back byte for byte: key, value, headers, the
// partition murmur2 of the key picks, and the offset the ack gave.
func TestWebsocketProduceReadByKafkaClient(t *testing.T) {
	addr := bootstrap(t)
	orders := uniq(t, "orders")
	_, adm := kclient(t, addr)
	createTopic(t, adm, orders, 4)
	c := clusterWS(t, addr)

	var recs []engine.Record
	for i := range 200 {
		v := []byte(fmt.Sprintf(`{"n":%d,"bin":"\u0000\xff"}`, i))
		v = append(v, byte(i), 0, 0xff) // bytes no JSON string could carry
		recs = append(recs, engine.Record{
			Key:     []byte(fmt.Sprintf("customer-%d", i%17)),
			Value:   v,
			Headers: []engine.Header{{Key: "trace", Value: []byte{1, 2, byte(i)}}},
		})
	}
	acks, err := c.ProduceBytes(testCtx(t), orders, -1, recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(acks) != len(recs) {
		t.Fatalf("%d acks for %d records", len(acks), len(recs))
	}
	got := consumeAll(t, addr, orders, len(recs))
	// The ack carries the record's create time (kgo does not pass the
	// produce response's LogAppendTime on): it is the stored timestamp
	// unless the topic stamps records itself, as Pulse's own listener does.
	logAppendTime := timestampType(t, adm, orders) == "LogAppendTime"
	if logAppendTime {
		t.Logf("%s uses LogAppendTime: ack timestamps are create times, not compared", orders)
	}
	byPos := map[[2]int64]*kgo.Record{}
	for _, r := range got {
		byPos[[2]int64{int64(r.Partition), r.Offset}] = r
	}
	for i, a := range acks {
		want := recs[i]
		if p := engine.KeyPartition(want.Key, 4); a.Partition != p {
			t.Errorf("record %d acked on partition %d, murmur2 of its key says %d", i, a.Partition, p)
		}
		r := byPos[[2]int64{int64(a.Partition), a.Offset}]
		if r == nil {
			t.Fatalf("record %d: ack %d/%d names no record the Kafka consumer read", i, a.Partition, a.Offset)
		}
		if !bytes.Equal(r.Key, want.Key) || !bytes.Equal(r.Value, want.Value) {
			t.Fatalf("record %d: read key %q value %q, produced %q %q", i, r.Key, r.Value, want.Key, want.Value)
		}
		if len(r.Headers) != 1 || r.Headers[0].Key != "trace" || !bytes.Equal(r.Headers[0].Value, want.Headers[0].Value) {
			t.Fatalf("record %d: headers %v", i, r.Headers)
		}
		if !logAppendTime && r.Timestamp.UnixMilli() != a.Timestamp {
			t.Errorf("record %d: ack timestamp %d, cluster has %d", i, a.Timestamp, r.Timestamp.UnixMilli())
		}
	}
	// Acks of one partition are in produce order.
	last := map[int]int64{}
	for i, a := range acks {
		if o, ok := last[a.Partition]; ok && a.Offset <= o {
			t.Fatalf("record %d: offset %d on partition %d after %d", i, a.Offset, a.Partition, o)
		}
		last[a.Partition] = a.Offset
	}
}

// Records a franz-go producer writes arrive on a websocket subscription
// byte for byte, from earliest and live, in offset order per partition.
func TestKafkaClientProduceReadOverWebsocket(t *testing.T) {
	addr := bootstrap(t)
	events := uniq(t, "events")
	kc, adm := kclient(t, addr)
	createTopic(t, adm, events, 3)
	c := clusterWS(t, addr)

	produce := func(from, n int) []*kgo.Record {
		var out []*kgo.Record
		for i := from; i < from+n; i++ {
			out = append(out, &kgo.Record{Topic: events, Partition: int32(i % 3), Key: []byte(fmt.Sprint("k", i)), Value: []byte{byte(i), 0, 0xfe, byte(i >> 8)},
				Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}}})
		}
		if err := kc.ProduceSync(testCtx(t), out...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	early := produce(0, 90)

	sub, err := c.Subscribe(testCtx(t), wsclient.SubscribeOptions{Topic: events, Partition: -1, From: "earliest"})
	if err != nil {
		t.Fatal(err)
	}
	collect := func(want []*kgo.Record) {
		t.Helper()
		got := map[[2]int64]wsclient.Record{}
		ctx := testCtx(t)
		for len(got) < len(want) {
			select {
			case p, ok := <-sub.C():
				if !ok {
					t.Fatalf("subscription ended: %v", sub.Err())
				}
				if p.Err != nil {
					t.Fatalf("push error: %v", p.Err)
				}
				for _, r := range p.Records {
					got[[2]int64{int64(r.Partition), r.Offset}] = r
				}
			case <-ctx.Done():
				t.Fatalf("got %d of %d records", len(got), len(want))
			}
		}
		for _, w := range want {
			r, ok := got[[2]int64{int64(w.Partition), w.Offset}]
			if !ok {
				t.Fatalf("record %d/%d not delivered", w.Partition, w.Offset)
			}
			if !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || len(r.Headers) != 1 || !bytes.Equal(r.Headers[0].Value, w.Headers[0].Value) {
				t.Fatalf("record %d/%d: got %q %q %v, want %q %q", w.Partition, w.Offset, r.Key, r.Value, r.Headers, w.Key, w.Value)
			}
		}
	}
	collect(early)
	// Live: produced after the subscription caught up, woken by the watcher.
	collect(produce(90, 30))
}

// Consumer cursors are consumer-group offsets: committed over the
// websocket API, visible to kadm, and the resume point of a new Pulse on
// the same cluster after the first one is gone.
func TestConsumerCursorSurvivesRestart(t *testing.T) {
	addr := bootstrap(t)
	jobs := uniq(t, "jobs")
	billing := uniq(t, "billing")
	kc, adm := kclient(t, addr)
	createTopic(t, adm, jobs, 2)
	var recs []*kgo.Record
	for i := range 40 {
		recs = append(recs, &kgo.Record{Topic: jobs, Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))})
	}
	if err := kc.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	src1, err := Open(Config{Brokers: ParseBrokers(addr)})
	if err != nil {
		t.Fatal(err)
	}
	ws1, stop1 := serve(t, src1)
	c1 := dialWS(t, ws1)
	if err := c1.Commit(testCtx(t), billing, jobs, 0, 7); err != nil {
		t.Fatal(err)
	}
	if err := c1.Commit(testCtx(t), billing, jobs, 1, 12); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	stop1()
	src1.Close()

	offs, err := adm.FetchOffsets(testCtx(t), billing)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range []int64{7, 12} {
		if o, ok := offs.Lookup(jobs, int32(p)); !ok || o.At != want {
			t.Fatalf("kadm sees group billing at %v on jobs/%d, want %d", o, p, want)
		}
	}

	src2 := openSource(t, addr)
	ws2, _ := serve(t, src2)
	c2 := dialWS(t, ws2)
	sub, err := c2.Subscribe(testCtx(t), wsclient.SubscribeOptions{Topic: jobs, Partition: -1, From: "earliest", Consumer: billing})
	if err != nil {
		t.Fatal(err)
	}
	starts := append([]wire.StartPos(nil), sub.Starts...)
	sort.Slice(starts, func(i, j int) bool { return starts[i].Partition < starts[j].Partition })
	if len(starts) != 2 || starts[0].From != 7 || starts[1].From != 12 {
		t.Fatalf("resumed at %+v, want jobs/0 at 7 and jobs/1 at 12", starts)
	}
	first := map[int]int64{}
	ctx := testCtx(t)
	for len(first) < 2 {
		select {
		case p := <-sub.C():
			if p.Err != nil {
				t.Fatal(p.Err)
			}
			if _, ok := first[p.Partition]; !ok && len(p.Records) > 0 {
				first[p.Partition] = p.Records[0].Offset
			}
		case <-ctx.Done():
			t.Fatal("no records after resuming")
		}
	}
	if first[0] != 7 || first[1] != 12 {
		t.Fatalf("first records after resume %v, want 7 and 12", first)
	}
}

// Topics, describe, create and delete go through the cluster's admin API;
// the error codes are the engine's, the messages the cluster's.
func TestAdminOverWebsocket(t *testing.T) {
	addr := bootstrap(t)
	audit := uniq(t, "audit")
	fresh := uniq(t, "fresh")
	_, adm := kclient(t, addr)
	c := clusterWS(t, addr)
	ctx := testCtx(t)

	ti, err := c.CreateTopic(ctx, audit, wire.TopicConfig{Partitions: 5, RetentionMs: 3600000})
	if err != nil {
		t.Fatal(err)
	}
	if len(ti.Partitions) != 5 {
		t.Fatalf("created topic has %d partitions", len(ti.Partitions))
	}
	md, err := adm.Metadata(ctx, audit)
	if err != nil || len(md.Topics[audit].Partitions) != 5 {
		t.Fatalf("kadm metadata of audit: %v %v", md.Topics[audit], err)
	}
	if cfgs := topicConfigs(t, adm, audit); cfgs["retention.ms"] != "3600000" {
		t.Errorf("retention.ms not set on the cluster: %v", cfgs)
	}

	codeOf := func(err error) string {
		var pe *wire.Error
		if errors.As(err, &pe) {
			return pe.Code
		}
		return fmt.Sprintf("not a protocol error: %v", err)
	}
	_, err = c.CreateTopic(ctx, audit, wire.TopicConfig{Partitions: 1})
	if codeOf(err) != wire.CodeTopicExists {
		t.Errorf("second create: %v, want %s", err, wire.CodeTopicExists)
	}
	_, err = c.Describe(ctx, "nope")
	if codeOf(err) != wire.CodeTopicNotFound {
		t.Errorf("describe missing: %v, want %s", err, wire.CodeTopicNotFound)
	}
	_, err = c.Describe(ctx, "bad/name")
	if codeOf(err) != wire.CodeInvalidTopic {
		t.Errorf("describe bad name: %v, want %s", err, wire.CodeInvalidTopic)
	}
	_, err = c.Produce(ctx, audit, 9, []wire.RecordIn{{Value: []byte(`1`)}})
	if codeOf(err) != wire.CodePartitionOutOfRange {
		t.Errorf("produce to partition 9 of 5: %v, want %s", err, wire.CodePartitionOutOfRange)
	}
	_, err = c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: audit, Partition: 0, From: "99"})
	if codeOf(err) != wire.CodeOffsetOutOfRange {
		t.Errorf("subscribe past the end: %v, want %s", err, wire.CodeOffsetOutOfRange)
	}

	ts, err := c.Topics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, ti := range ts {
		listed = listed || ti.Name == audit
	}
	if !listed {
		t.Fatalf("topics %v do not list %s", ts, audit)
	}
	if err := c.DeleteTopic(ctx, audit); err != nil {
		t.Fatal(err)
	}
	err = c.DeleteTopic(ctx, audit)
	if codeOf(err) != wire.CodeTopicNotFound {
		t.Errorf("second delete: %v, want %s", err, wire.CodeTopicNotFound)
	}
	// Produce auto-creates as on the engine: one partition.
	if _, err := c.Produce(ctx, fresh, -1, []wire.RecordIn{{Value: []byte(`"x"`)}}); err != nil {
		t.Fatal(err)
	}
	md, err = adm.Metadata(ctx, fresh)
	if err != nil || len(md.Topics[fresh].Partitions) != 1 {
		t.Fatalf("auto-created topic: %v %v", md.Topics[fresh], err)
	}
}

// Subscribing from a timestamp starts at the first record at or after it.
func TestSubscribeFromTimestamp(t *testing.T) {
	addr := bootstrap(t)
	ticks := uniq(t, "ticks")
	kc, adm := kclient(t, addr)
	createTopic(t, adm, ticks, 1)
	base := time.UnixMilli(1_700_000_000_000)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: ticks, Value: []byte(fmt.Sprint(i)), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	if err := kc.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The expected start is computed from the timestamps the cluster
	// stored: producer times on a CreateTime topic, commit times on a
	// LogAppendTime one (Pulse's own listener).
	stored := consumeAll(t, addr, ticks, 10)
	at := stored[6].Timestamp.UnixMilli()
	wantOff := int64(-1)
	for _, r := range stored {
		if r.Timestamp.UnixMilli() >= at && (wantOff < 0 || r.Offset < wantOff) {
			wantOff = r.Offset
		}
	}
	c := clusterWS(t, addr)
	sub, err := c.Subscribe(testCtx(t), wsclient.SubscribeOptions{Topic: ticks, Partition: 0, From: fmt.Sprint("@", at)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Starts) != 1 || sub.Starts[0].From != wantOff {
		t.Fatalf("starts %+v, want offset %d", sub.Starts, wantOff)
	}
	select {
	case p := <-sub.C():
		if p.Err != nil || len(p.Records) == 0 || string(p.Records[0].Value) != fmt.Sprint(wantOff) {
			t.Fatalf("first push %+v", p)
		}
	case <-testCtx(t).Done():
		t.Fatal("no push")
	}
}

// A cluster nobody listens on is a clear error, naming the address and the
// cause, within the dial timeout (not kgo's retry budget).
func TestUnreachableCluster(t *testing.T) {
	l := freeAddr(t)
	_, err := Open(Config{Brokers: []string{l}, DialTimeout: 2 * time.Second})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Open on a closed port: %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), l) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error %q names neither the address %s nor the cause", err, l)
	}
	_, err = Open(Config{Brokers: []string{l}, SASL: "GSSAPI:u:p"})
	if !errors.Is(err, ErrBadSASL) || strings.Contains(err.Error(), "u:p") {
		t.Fatalf("bad SASL: %v", err)
	}
}

// A broker that accepts connections and never answers (a wrong port, a
// hung broker) is reported once the dial timeout passed, naming it.
func TestSilentBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }()
		}
	}()
	_, err = Open(Config{Brokers: []string{l.Addr().String()}, DialTimeout: time.Second})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), l.Addr().String()) || !strings.Contains(err.Error(), "no broker answered within 1s") {
		t.Fatalf("Open on a silent broker: %v", err)
	}
}
