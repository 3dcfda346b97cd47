package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A group that only committed offsets (an admin tool's OffsetCommit outside
// any generation, or a websocket consumer's cursor) is a group to Kafka:
// ListGroups lists it and DescribeGroups calls it Empty, as a broker does
// for a group whose metadata holds offsets and no members.
func TestCommittedOnlyGroupIsListedEmpty(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "ledger"); err != nil {
		t.Fatal(err)
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "ledger", Partition: 1, At: 0, LeaderEpoch: -1})
	if r, err := adm.CommitOffsets(ctx, "audit", os); err != nil || r.Error() != nil {
		t.Fatalf("commit: %v %v", err, r.Error())
	}
	// A websocket consumer's cursor is the same thing.
	if err := p.eng.CommitCursor("ws-reader", "ledger", 0, 0); err != nil {
		t.Fatal(err)
	}

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"audit", "ws-reader"} {
		lg, ok := listed[g]
		if !ok {
			t.Fatalf("ListGroups %v: no %s", listed.Groups(), g)
		}
		if lg.State != "Empty" {
			t.Errorf("ListGroups: %s is %q, want Empty", g, lg.State)
		}
	}
	described, err := adm.DescribeGroups(ctx, "audit", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if s := described["audit"].State; s != "Empty" {
		t.Errorf("DescribeGroups audit: %q, want Empty", s)
	}
	if s := described["nobody"].State; s != "Dead" {
		t.Errorf("DescribeGroups nobody: %q, want Dead", s)
	}
	lags, err := adm.Lag(ctx, "audit")
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := lags["audit"].Lag.Lookup("ledger", 1); !ok || l.Commit.At != 0 {
		t.Errorf("kadm lag of audit on ledger/1: %+v %v", l, ok)
	}
}

// GroupSnapshot shows a joined franz-go group member with its client id,
// host and assignment, the committed offset, HWM and lag of each partition
// and the member assigned it, and a websocket consumer's cursor as an
// Empty group; DescribeGroups reports the same client host.
func TestGroupSnapshot(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	adm := kadm.NewClient(prod)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "invoices"); err != nil {
		t.Fatal(err)
	}
	var rs []*kgo.Record
	for i := range 10 {
		rs = append(rs, &kgo.Record{Topic: "invoices", Partition: int32(i % 2), Value: []byte{byte(i)}})
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.eng.CommitCursor("ws-reader", "invoices", 1, 2); err != nil {
		t.Fatal(err)
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("invoices"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("billing-worker"))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []*kgo.Record
	for len(got) < 10 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 10", len(got))
		}
		got = append(got, fs.Records()...)
	}
	var first *kgo.Record // offset 1 of partition 0: commits next offset 2
	for _, r := range got {
		if r.Partition == 0 && r.Offset == 1 {
			first = r
		}
	}
	if err := cons.CommitRecords(ctx, first); err != nil {
		t.Fatal(err)
	}

	snap := p.srv.GroupSnapshot()
	if len(snap) != 2 || snap[0].Name != "billing" || snap[1].Name != "ws-reader" {
		t.Fatalf("snapshot: %+v", snap)
	}
	b := snap[0]
	if b.State != "Stable" || len(b.Members) != 1 {
		t.Fatalf("billing: %+v", b)
	}
	m := b.Members[0]
	if m.ClientID != "billing-worker" || m.Host != "/127.0.0.1" || len(m.Assigned["invoices"]) != 2 {
		t.Errorf("billing member: %+v", m)
	}
	if len(b.Partitions) != 1 {
		t.Fatalf("billing partitions: %+v", b.Partitions)
	}
	if gp := b.Partitions[0]; gp.Topic != "invoices" || gp.Partition != 0 || gp.Committed != 2 || gp.HWM != 5 || gp.Lag != 3 || gp.Member != m.ID {
		t.Errorf("billing invoices/0: %+v (member %s)", gp, m.ID)
	}
	w := snap[1]
	if w.State != "Empty" || len(w.Members) != 0 || len(w.Partitions) != 1 || w.Partitions[0].Committed != 2 || w.Partitions[0].Lag != 3 {
		t.Errorf("ws-reader: %+v", w)
	}

	described, err := adm.DescribeGroups(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if ms := described["billing"].Members; len(ms) != 1 || ms[0].ClientHost != "/127.0.0.1" || ms[0].ClientID != "billing-worker" {
		t.Errorf("DescribeGroups billing members: %+v", ms)
	}
}
