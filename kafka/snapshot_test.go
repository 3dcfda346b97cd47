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
