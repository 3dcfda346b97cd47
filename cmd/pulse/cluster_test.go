package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startKafka starts a three-broker in-process kfake cluster for the real
// binary to connect to, and a franz-go client on it (a Kafka client Pulse
// did not write).
func startKfake(t *testing.T) (string, *kgo.Client, *kadm.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := strings.Join(c.ListenAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return addr, cl, kadm.NewClient(cl)
}

func produceTo(t *testing.T, cl *kgo.Client, topic string, p int32, n int, tag string) {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"%s":%d}`, tag, i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), tmuxWait)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// partRow matches a partitions-screen row: partition, log start, HWM, LEO,
// then hidden tail, segments and size, which a cluster cannot tell.
func partRow(p int, start, hwm int64) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`p%d\s+%d\s+%d\s+%d\s+n/a\s+n/a\s`, p, start, hwm, hwm))
}

// waitMatch waits until the pane matches every regexp.
func (x tmux) waitMatch(res ...*regexp.Regexp) string {
	x.t.Helper()
	deadline := time.Now().Add(tmuxWait)
	for {
		s := x.screen()
		ok := true
		for _, re := range res {
			ok = ok && re.MatchString(s)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the screen never matched %v; it shows:\n%s", res, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTerminalUIOnKafka runs the real binary with --kafka against a kfake
// cluster under tmux: the partitions, consumer and groups screens show the
// watermarks and lag kadm reports, update live when a Kafka client
// produces, and the engine-only screens say they need a local data dir.
func TestTerminalUIOnKafka(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)
	addr, cl, adm := startKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), tmuxWait)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 3, -1, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	produceTo(t, cl, "orders", 0, 10, "a")
	produceTo(t, cl, "orders", 1, 20, "b")
	produceTo(t, cl, "orders", 2, 30, "c")
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 4, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "orders", Partition: 2, At: 25, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "billing", os); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}

	// What kadm says is what the screen must show.
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	lags, err := adm.Lag(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	hwm := func(p int32) int64 { o, _ := ends.Lookup("orders", p); return o.Offset }
	lag := func(p int32) int64 { l, _ := lags["billing"].Lag.Lookup("orders", p); return l.Lag }

	x := tmux{t: t, sock: filepath.Join(tmp, "tmux.sock")}
	cmd := fmt.Sprintf("NO_COLOR=1 %s --kafka %s --listen off --topic orders --theme dark; echo pulse-exited-$?; sleep 600", bin, addr)
	x.must("new-session", "-d", "-s", "ui", "-x", "130", "-y", "34", cmd)
	t.Cleanup(func() { x.run("kill-server") })

	x.waitScreen("kafka 127.0.0.1:", "Topics / orders")
	x.waitMatch(partRow(0, 0, hwm(0)), partRow(1, 0, hwm(1)), partRow(2, 0, hwm(2)),
		regexp.MustCompile(fmt.Sprintf(`billing\s+0\s+4\s+%d`, lag(0))),
		regexp.MustCompile(fmt.Sprintf(`billing\s+2\s+25\s+%d`, lag(2))))

	// Live: a Kafka client produces; the screen follows.
	produceTo(t, cl, "orders", 0, 5, "late")
	ends, _ = adm.ListEndOffsets(ctx, "orders")
	lags, _ = adm.Lag(ctx, "billing")
	if hwm(0) != 15 || lag(0) != 11 {
		t.Fatalf("kadm says HWM %d lag %d after producing 5 more", hwm(0), lag(0))
	}
	t.Logf("partitions screen:\n%s", x.waitMatch(partRow(0, 0, hwm(0)), regexp.MustCompile(fmt.Sprintf(`billing\s+0\s+4\s+%d`, lag(0)))))

	// Engine-only screens say what they need.
	x.keys("Enter")
	x.waitScreen("segments needs a local data dir")
	x.keys("Escape")
	x.waitScreen("LOG START")

	// The tail of p0, live.
	x.keys("t")
	x.waitScreen("orders / p0 / tail", `{"late":4}`)
	produceTo(t, cl, "orders", 0, 1, "tailed")
	x.waitScreen(`{"tailed":0}`)
	x.keys("Escape")

	// Placement: leader, replicas and ISR as kadm's metadata has them.
	x.waitScreen("LOG START")
	x.keys(":")
	x.waitScreen("topic NAME · tail NAME") // the command prompt is open
	x.keys("-l", "placement")
	x.waitScreen(":placement")
	x.keys("Enter")
	md, err := adm.Metadata(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if ends, err = adm.ListEndOffsets(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	var prow []*regexp.Regexp
	for p := int32(0); p < 3; p++ {
		pd := md.Topics["orders"].Partitions[p]
		prow = append(prow, regexp.MustCompile(fmt.Sprintf(`p%d\s+%d\s+%s\s+%s\s+0\s+\d+\s+%d\s`, p, pd.Leader, joinIDs(pd.Replicas), joinIDs(pd.ISR), hwm(p))))
	}
	x.waitMatch(append(prow, regexp.MustCompile(`replication factor \d`))...)
	x.keys("Escape")
	// A key typed right after Escape would read as alt+key: wait for the
	// partitions screen first.
	x.waitScreen("LOG START", "CONSUMER")

	x.keys(":")
	x.waitScreen("topic NAME · tail NAME") // the command prompt is open
	x.keys("-l", "groups")
	x.waitScreen(":groups")
	x.keys("Enter")
	ends, _ = adm.ListEndOffsets(ctx, "orders")
	lags, _ = adm.Lag(ctx, "billing")
	t.Logf("groups screen:\n%s", x.waitMatch(regexp.MustCompile(fmt.Sprintf(`billing\s+Empty\s+0\s+orders\s+0\s+4\s+%d\s+%d`, hwm(0), lag(0))),
		regexp.MustCompile(fmt.Sprintf(`billing\s+Empty\s+0\s+orders\s+2\s+25\s+%d\s+%d`, hwm(2), lag(2)))))
	// The topics screen: partitions and records (the sum of HWM − log
	// start), sizes and compression ratio not available.
	starts, err := adm.ListStartOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	var records int64
	for p := int32(0); p < 3; p++ {
		so, _ := starts.Lookup("orders", p)
		records += hwm(p) - so.Offset
	}
	x.keys("Escape")
	x.waitScreen("LOG START", "CONSUMER")
	x.keys("Escape")
	x.waitMatch(regexp.MustCompile(fmt.Sprintf(`orders\s+3\s+%d\s+%d\s+n/a\s+n/a\s`, records, records)))
	x.keys("q")
	x.waitScreen("pulse-exited-0")
}

func joinIDs(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}
