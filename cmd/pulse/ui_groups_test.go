package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The real binary on a local data dir: a franz-go group consumer joined to
// its Kafka listener shows on ":groups" as a Stable group with its member
// (client id, host), the partition it committed, the HWM and the lag; the
// websocket-style cursor of another consumer shows beside it as Empty.
func TestTerminalUIShowsKafkaGroups(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)
	data := filepath.Join(tmp, "data")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kafkaAddr := l.Addr().String()
	l.Close()

	x := tmux{t: t, sock: filepath.Join(tmp, "tmux.sock")}
	cmd := fmt.Sprintf("NO_COLOR=1 %s --data %s --listen off --kafka-listen %s; echo pulse-exited-$?; sleep 600", bin, data, kafkaAddr)
	x.must("new-session", "-d", "-s", "ui", "-x", "150", "-y", "32", cmd)
	t.Cleanup(func() { x.run("kill-server") })
	x.waitScreen("kafka " + kafkaAddr)

	ctx, cancel := context.WithTimeout(context.Background(), tmuxWait)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var rs []*kgo.Record
	for i := range 10 {
		rs = append(rs, &kgo.Record{Topic: "invoices", Partition: 0, Value: []byte(fmt.Sprintf("inv-%d", i))})
	}
	if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// The group member reads all ten records and commits the offset after
	// the fourth (next offset 4): lag 10 − 4 = 6.
	cons, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("invoices"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("billing-worker"))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []*kgo.Record
	for len(got) < 10 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 10 records", len(got))
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		got = append(got, fs.Records()...)
	}
	if err := cons.CommitRecords(ctx, got[3]); err != nil {
		t.Fatal(err)
	}

	x.keys(":")
	x.waitScreen("topic NAME · tail NAME") // the command prompt is open
	x.keys("-l", "groups")
	x.waitScreen(":groups")
	x.keys("Enter")
	x.waitMatch(regexp.MustCompile(`billing\s+Stable\s+1\s+invoices\s+0\s+4\s+10\s+6\s+billing-worker /?127\.0\.0\.1`))
}
