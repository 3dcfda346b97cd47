package cluster

import (
	"bufio"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A websocket subscription and an SSE stream of a whole cluster topic,
// opened before it grows, deliver the records of the new partitions: a
// grow by another Kafka client (kadm's CreatePartitions, seen at the
// Source's next poll) and one made through the Source (AlterTopic, seen at
// once).
func TestSubscriptionsFollowClusterGrow(t *testing.T) {
	addr := bootstrap(t)
	cl, adm := kclient(t, addr)
	src := openSource(t, addr)
	ws, _ := serve(t, src)
	c := dialWS(t, ws)
	ctx := testCtx(t)
	name := uniq(t, "follow")
	createTopic(t, adm, name, 2)

	sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: name, Partition: -1, From: "latest"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+ws+"/v1/topics/"+name+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	ids := make(chan string, 16)
	go func() {
		defer close(ids)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				ids <- id
			}
		}
	}()
	produce := func(p int32, v string) {
		t.Helper()
		cl.PurgeTopicsFromClient(name) // the producer learns the new count
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: name, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce to partition %d: %v", p, err)
		}
	}
	wantPush := func(p int, v string) {
		t.Helper()
		select {
		case push := <-sub.C():
			if push.Err != nil || push.Partition != p || len(push.Records) != 1 || string(push.Records[0].Value) != v {
				t.Fatalf("subscription got %+v, want %q on partition %d", push, v, p)
			}
		case <-ctx.Done():
			t.Fatalf("the subscription got nothing from partition %d", p)
		}
	}
	wantID := func(want string) {
		t.Helper()
		select {
		case id := <-ids:
			if id != want {
				t.Fatalf("SSE event id %q, want %q", id, want)
			}
		case <-ctx.Done():
			t.Fatalf("the SSE stream got no event %s", want)
		}
	}
	// Both are running once they deliver a record made after them.
	produce(0, "before")
	wantPush(0, "before")
	wantID("0/0,1/-1")

	if _, err := adm.UpdatePartitions(ctx, 3, name); err != nil {
		t.Fatal(err)
	}
	produce(2, "grown by kadm")
	wantPush(2, "grown by kadm")
	wantID("0/0,1/-1,2/0")

	info, err := src.Describe(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	cfg.Partitions = 4
	if err := src.AlterTopic(name, cfg); err != nil {
		t.Fatal(err)
	}
	produce(3, "grown by Pulse")
	wantPush(3, "grown by Pulse")
	wantID("0/0,1/-1,2/0,3/0")
}

// PartitionsChangedC of a topic the cluster does not have is
// ErrTopicNotFound; a deleted topic closes the channel.
func TestPartitionsChangedCDeleted(t *testing.T) {
	src := openSource(t, bootstrap(t))
	name := uniq(t, "gone")
	if _, err := src.PartitionsChangedC(name); !errorsIsNotFound(err) {
		t.Fatalf("PartitionsChangedC of a missing topic: %v, want ErrTopicNotFound", err)
	}
	if err := src.CreateTopic(name, engine.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	ch, err := src.PartitionsChangedC(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteTopic(name); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-testCtx(t).Done():
		t.Fatal("deleting the topic did not close its channel")
	}
}

func errorsIsNotFound(err error) bool { return errors.Is(err, engine.ErrTopicNotFound) }

// A follower that takes a channel after another Kafka client grew the
// topic, before the Source's poll has seen the grow, and then describes
// the topic (as the UI's merged tail and a subscription do) sees every
// partition: the channel stands for the new count, and nothing will close
// it for the grow, so a Describe still showing the old count would leave
// the new partitions unread for good.
func TestDescribeAfterAChannelSeesTheGrow(t *testing.T) {
	src, name, grow := topicGrownLater(t, "race")
	before, err := src.PartitionsChangedC(name)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := src.Describe(name); err != nil || len(info.Partitions) != 2 {
		t.Fatalf("describe before the grow: %d partitions, %v", len(info.Partitions), err)
	}
	grow()
	after, err := src.PartitionsChangedC(name) // well within growPoll of the grow
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-before:
	default:
		t.Error("the channel taken before the grow is still open")
	}
	info, err := src.Describe(name)
	if err != nil || len(info.Partitions) != 3 {
		t.Fatalf("describe after taking a channel of the grown topic: %d partitions, %v; want 3", len(info.Partitions), err)
	}
	select {
	case <-after:
		t.Error("the channel taken after the grow is closed")
	default:
	}
}

// The same for the first channel of a topic the Source described before
// another client grew it.
func TestDescribeAfterAFirstChannelSeesTheGrow(t *testing.T) {
	src, name, grow := topicGrownLater(t, "first")
	if info, err := src.Describe(name); err != nil || len(info.Partitions) != 2 {
		t.Fatalf("describe before the grow: %d partitions, %v", len(info.Partitions), err)
	}
	grow()
	if _, err := src.PartitionsChangedC(name); err != nil {
		t.Fatal(err)
	}
	if info, err := src.Describe(name); err != nil || len(info.Partitions) != 3 {
		t.Fatalf("describe after the first channel of the grown topic: %d partitions, %v; want 3", len(info.Partitions), err)
	}
}

// topicGrownLater makes a topic of 2 partitions on a fresh cluster and a
// Source on it; grow takes the topic to 3 partitions through another Kafka
// client, behind the Source's back.
func topicGrownLater(t *testing.T, prefix string) (src *Source, name string, grow func()) {
	t.Helper()
	addr := bootstrap(t)
	_, adm := kclient(t, addr)
	src = openSource(t, addr)
	name = uniq(t, prefix)
	createTopic(t, adm, name, 2)
	return src, name, func() {
		t.Helper()
		if _, err := adm.UpdatePartitions(testCtx(t), 3, name); err != nil {
			t.Fatal(err)
		}
	}
}
