package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Bad input over the websocket API on a cluster gets the same code as on a
// data dir, with a message naming what was wrong, and nothing reaches the
// cluster: a consumer name the cursor store refuses, a segment size or a
// partition count outside Pulse's bounds, and the settings of Pulse's own
// retention a cluster does not have (protect_cursors).
func TestBadInputRefusedBeforeTheCluster(t *testing.T) {
	addr := bootstrap(t)
	topic := uniq(t, "guarded")
	_, adm := kclient(t, addr)
	c := clusterWS(t, addr)
	ctx := testCtx(t)

	refused := func(what string, err error, code, want string) {
		t.Helper()
		var pe *wire.Error
		if !errors.As(err, &pe) || pe.Code != code || !strings.Contains(pe.Message, want) {
			t.Errorf("%s: %v, want %s naming %q", what, err, code, want)
		}
	}

	if _, err := c.Produce(ctx, topic, 0, []wire.RecordIn{{Value: []byte(`1`)}}); err != nil {
		t.Fatal(err)
	}
	group := uniq(t, "a/b")
	err := c.Commit(ctx, group, topic, 0, 1)
	refused("commit by consumer "+group, err, wire.CodeInvalidRequest, "invalid consumer name")
	offs, err := adm.FetchOffsets(ctx, group)
	if err == nil && len(offs) != 0 {
		t.Errorf("group %s has offsets on the cluster after a refused commit: %v", group, offs)
	}

	bad := uniq(t, "badseg")
	_, err = c.CreateTopic(ctx, bad, wire.TopicConfig{SegmentBytes: 100})
	refused("create with segment_bytes 100", err, wire.CodeInvalidConfig, "segment size 100 bytes")
	_, err = c.CreateTopic(ctx, bad, wire.TopicConfig{Partitions: 100001})
	refused("create with 100001 partitions", err, wire.CodeInvalidConfig, "partitions 100001, want 1..100000")
	_, err = c.CreateTopic(ctx, bad, wire.TopicConfig{ProtectCursors: true})
	refused("create with protect_cursors", err, wire.CodeInvalidConfig, "protect_cursors")
	md, err := adm.Metadata(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	if tm, ok := md.Topics[bad]; ok && tm.Err == nil {
		t.Errorf("refused create left topic %s on the cluster with %d partitions", bad, len(tm.Partitions))
	}

	n := 100001
	_, err = c.AlterTopic(ctx, topic, wire.TopicAlter{Partitions: &n})
	refused("grow to 100001 partitions", err, wire.CodeInvalidConfig, "partitions 100001, want 1..100000")
	md, err = adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(md.Topics[topic].Partitions); got != 1 {
		t.Errorf("refused grow: %s has %d partitions, want 1", topic, got)
	}
}

// delete_consumer on a cluster deletes the consumer group's committed
// offsets (on one topic: OffsetDelete; on every topic: DeleteGroups), read
// back with kadm; a dry run, an unknown group or topic, a bad name and a
// group with a live member (a franz-go group consumer) change nothing.
func TestDeleteConsumerOnCluster(t *testing.T) {
	addr := bootstrap(t)
	a, b := uniq(t, "dela"), uniq(t, "delb")
	group, live := uniq(t, "billing"), uniq(t, "live")
	_, adm := kclient(t, addr)
	c := clusterWS(t, addr)
	ctx := testCtx(t)
	createTopic(t, adm, a, 2)
	createTopic(t, adm, b, 1)
	for _, tp := range []struct {
		topic string
		p     int
	}{{a, 0}, {a, 1}, {b, 0}} {
		if _, err := c.Produce(ctx, tp.topic, tp.p, []wire.RecordIn{{Value: []byte(`1`)}, {Value: []byte(`2`)}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Commit(ctx, group, tp.topic, tp.p, 1); err != nil {
			t.Fatal(err)
		}
	}
	committed := func(g string) map[string]int {
		t.Helper()
		offs, err := adm.FetchOffsets(ctx, g)
		n := map[string]int{}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return n // a deleted group
		}
		if err != nil {
			t.Fatal(err)
		}
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				n[o.Topic]++
			}
		})
		return n
	}
	codeOf := func(err error) string {
		var pe *wire.Error
		if errors.As(err, &pe) {
			return pe.Code
		}
		return "not a protocol error: " + fmt.Sprint(err)
	}

	for _, tc := range []struct {
		consumer, topic, code string
	}{
		{uniq(t, "nobody"), a, wire.CodeConsumerNotFound},
		{group, uniq(t, "nosuch"), wire.CodeTopicNotFound},
		{"a/b", a, wire.CodeInvalidRequest},
	} {
		if _, err := c.DeleteConsumer(ctx, tc.consumer, tc.topic, false); codeOf(err) != tc.code {
			t.Errorf("delete_consumer %q on %q: %v, want %s", tc.consumer, tc.topic, err, tc.code)
		}
	}
	dry, err := c.DeleteConsumer(ctx, group, a, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Cursors) != 2 || dry.Cursors[0].Offset != 1 || dry.Cursors[0].Lag != 1 || dry.Cursors[1].Partition != 1 {
		t.Errorf("dry run lists %+v, want %s/0 and %s/1 at 1 with lag 1", dry.Cursors, a, a)
	}
	if got := committed(group); got[a] != 2 || got[b] != 1 {
		t.Fatalf("after the dry run the group has %v committed", got)
	}
	del, err := c.DeleteConsumer(ctx, group, a, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(del.Cursors) != 2 {
		t.Errorf("deleted %+v, want 2 cursors", del.Cursors)
	}
	if got := committed(group); got[a] != 0 || got[b] != 1 {
		t.Fatalf("after deleting on %s the group has %v committed", a, got)
	}
	if _, err := c.DeleteConsumer(ctx, group, a, false); codeOf(err) != wire.CodeConsumerNotFound {
		t.Errorf("second delete on %s: %v, want %s", a, err, wire.CodeConsumerNotFound)
	}
	if del, err := c.DeleteConsumer(ctx, group, "", false); err != nil || len(del.Cursors) != 1 || del.Cursors[0].Topic != b {
		t.Fatalf("delete on every topic: %+v %v, want the cursor on %s", del, err, b)
	}
	if got := committed(group); len(got) != 0 {
		t.Fatalf("after deleting the group it has %v committed", got)
	}

	// A group with a live member is refused and keeps its offsets.
	member, _ := kclient(t, addr, kgo.ConsumerGroup(live), kgo.ConsumeTopics(b),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	for n := 0; n == 0; {
		fs := member.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("the group member read nothing")
		}
		n = fs.NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	tc, err := c.Consumers(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if ms := tc.Members[live]; len(ms) != 1 || ms[0].ID == "" || ms[0].ClientID == "" {
		t.Errorf("consumers of %s: members %+v, want the one member of %s", b, tc.Members, live)
	}
	if _, err := c.DeleteConsumer(ctx, live, b, false); codeOf(err) != wire.CodeConsumerActive {
		t.Errorf("delete_consumer of a group with a live member: %v, want %s", err, wire.CodeConsumerActive)
	}
	if got := committed(live); got[b] != 1 {
		t.Errorf("the live group has %v committed after the refused delete", got)
	}
	// Live members come first, as on a data dir: on a topic the group has
	// no offset on, it is still consumer_active, not consumer_not_found.
	if _, err := c.DeleteConsumer(ctx, live, a, false); codeOf(err) != wire.CodeConsumerActive {
		t.Errorf("delete_consumer of a group with a live member on a topic it has no offset on: %v, want %s", err, wire.CodeConsumerActive)
	}
}

// TestTombstoneRetentionIsDeleteRetentionMs: create_topic's
// tombstone_retention_ms is the cluster topic's delete.retention.ms (how
// long compaction keeps a tombstone, in Kafka as in Pulse), and describe
// reads it back.
func TestTombstoneRetentionIsDeleteRetentionMs(t *testing.T) {
	addr := bootstrap(t)
	topic := uniq(t, "tombs")
	_, adm := kclient(t, addr)
	c := clusterWS(t, addr)
	ctx := testCtx(t)
	if _, err := c.CreateTopic(ctx, topic, wire.TopicConfig{Cleanup: "compact", TombstoneRetentionMs: 1000}); err != nil {
		t.Fatal(err)
	}
	if got := topicConfigs(t, adm, topic)["delete.retention.ms"]; got != "1000" {
		t.Errorf("the cluster's delete.retention.ms of %s is %q, want 1000", topic, got)
	}
	info, err := c.Describe(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.TombstoneRetentionMs != 1000 {
		t.Errorf("describe over the websocket: tombstone_retention_ms %d, want 1000", info.Config.TombstoneRetentionMs)
	}
}
