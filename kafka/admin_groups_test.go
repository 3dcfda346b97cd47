package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

func adminCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// segment.bytes, pulse.sync.mode and flush.messages change a topic live
// through kadm's AlterTopicConfigs; DescribeConfigs reads them back and
// DELETE restores the defaults.
func TestAlterSegmentAndSyncConfigs(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("cfg", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx := adminCtx(t)
	str := func(s string) *string { return &s }
	alter := func(cs ...kadm.AlterConfig) {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, cs, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		if r, err := resp.On("cfg", nil); err != nil || r.Err != nil {
			t.Fatalf("alter %+v: %v %v", cs, err, r.Err)
		}
	}
	describe := func() map[string]string {
		t.Helper()
		rc, err := adm.DescribeTopicConfigs(ctx, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		r, err := rc.On("cfg", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, c := range r.Configs {
			if c.Value != nil {
				got[c.Key] = *c.Value
			}
		}
		return got
	}
	alter(kadm.AlterConfig{Op: kadm.SetConfig, Name: "segment.bytes", Value: str("2097152")},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "pulse.sync.mode", Value: str("interval")})
	if info, _ := p.eng.Describe("cfg"); info.Config.SegmentMaxBytes != 2<<20 || info.Config.SyncMode != engine.SyncInterval {
		t.Fatalf("engine after alter: %+v", info.Config)
	}
	if got := describe(); got["segment.bytes"] != "2097152" || got["pulse.sync.mode"] != "interval" || got["flush.messages"] != "9223372036854775807" {
		t.Fatalf("described after alter: %v", got)
	}
	alter(kadm.AlterConfig{Op: kadm.SetConfig, Name: "flush.messages", Value: str("1")})
	if got := describe(); got["pulse.sync.mode"] != "every-write" || got["flush.messages"] != "1" {
		t.Fatalf("described after flush.messages=1: %v", got)
	}
	alter(kadm.AlterConfig{Op: kadm.SetConfig, Name: "pulse.sync.mode", Value: str("interval")})
	alter(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "segment.bytes"}, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "pulse.sync.mode"})
	if info, _ := p.eng.Describe("cfg"); info.Config.SegmentMaxBytes != 64<<20 || info.Config.SyncMode != engine.SyncEveryWrite {
		t.Fatalf("engine after DELETE: %+v", info.Config)
	}
}

// kadm's CreatePartitions and UpdatePartitions grow a topic that a kgo
// producer then writes to on the new partition; a count that does not grow
// is INVALID_PARTITIONS, a missing topic UNKNOWN_TOPIC_OR_PARTITION, and
// Metadata shows the new count at once.
func TestCreatePartitions(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	adm := kadm.NewClient(cl)
	ctx := adminCtx(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "grow"); err != nil {
		t.Fatal(err)
	}
	rs, err := adm.CreatePartitions(ctx, 1, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := rs.On("grow", nil); err != nil || r.Err != nil {
		t.Fatalf("CreatePartitions +1: %v %v", err, r.Err)
	}
	rs, err = adm.UpdatePartitions(ctx, 5, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := rs.On("grow", nil); err != nil || r.Err != nil {
		t.Fatalf("UpdatePartitions to 5: %v %v", err, r.Err)
	}
	md, err := adm.Metadata(ctx, "grow")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(md.Topics["grow"].Partitions); n != 5 {
		t.Fatalf("Metadata: %d partitions, want 5", n)
	}
	if info, _ := p.eng.Describe("grow"); len(info.Partitions) != 5 {
		t.Fatalf("engine: %d partitions, want 5", len(info.Partitions))
	}
	pr := kgoClient(t, p.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "grow", Partition: 4, Value: []byte("p4")}).FirstErr(); err != nil {
		t.Fatalf("produce to the new partition 4: %v", err)
	}
	if r, err := p.eng.Read("grow", 4, 0, 10, 1<<20); err != nil || len(r.Records) != 1 || string(r.Records[0].Value) != "p4" {
		t.Fatalf("engine read of partition 4: %+v %v", r.Records, err)
	}
	for _, bad := range []struct {
		topic string
		n     int
		want  error
	}{{"grow", 5, kerr.InvalidPartitions}, {"grow", 3, kerr.InvalidPartitions}, {"nope", 4, kerr.UnknownTopicOrPartition}} {
		rs, err := adm.UpdatePartitions(ctx, bad.n, bad.topic)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := rs.On(bad.topic, nil); !errors.Is(r.Err, bad.want) {
			t.Errorf("UpdatePartitions %s to %d: %v, want %v", bad.topic, bad.n, r.Err, bad.want)
		}
	}
	if info, _ := p.eng.Describe("grow"); len(info.Partitions) != 5 {
		t.Fatalf("refused grows changed the count to %d", len(info.Partitions))
	}
}

// kadm's DeleteGroups refuses a group with a live member
// (NON_EMPTY_GROUP), and once the member left deletes its committed
// offsets; a group Pulse knows nothing of is GROUP_ID_NOT_FOUND. While the
// member is live the engine reports it (the websocket consumers op shows
// it) and refuses DeleteConsumer. DeleteOffsets removes one partition's
// offset of an empty group.
func TestDeleteGroups(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx := adminCtx(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "dg"); err != nil {
		t.Fatal(err)
	}
	produceKgo(t, p.addr, "dg", "x", 20, kgo.NoCompression())
	cl := kgoClient(t, p.addr, kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("dg"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for n := 0; n < 20; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 20", n)
		}
		n += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	ms := p.eng.ConsumerMembers("billing")
	if len(ms) != 1 || ms[0].ClientID == "" {
		t.Fatalf("engine members of billing: %+v", ms)
	}
	if _, err := p.eng.DeleteConsumer("billing", "", false); !errors.Is(err, engine.ErrConsumerActive) {
		t.Fatalf("engine DeleteConsumer with a live member: %v", err)
	}
	// The websocket API on the same engine shows the member and refuses
	// delete_consumer with consumer_active.
	wsAddr := serveWebsocket(t, p.eng)
	wc, err := wsclient.Dial(ctx, wsAddr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	tc, err := wc.ConsumerOn(ctx, "dg", "billing")
	if err != nil || len(tc.Consumers) != 2 || len(tc.Members["billing"]) != 1 || tc.Members["billing"][0].ID != ms[0].ID {
		t.Fatalf("websocket consumers of dg, billing: %+v %v", tc, err)
	}
	var we *wire.Error
	if _, err := wc.DeleteConsumer(ctx, "billing", "", false); !errors.As(err, &we) || we.Code != wire.CodeConsumerActive {
		t.Fatalf("websocket delete_consumer with a live member: %v", err)
	}
	dr, err := adm.DeleteGroups(ctx, "billing", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(dr["billing"].Err, kerr.NonEmptyGroup) || !errors.Is(dr["nobody"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("DeleteGroups: billing %v, nobody %v", dr["billing"].Err, dr["nobody"].Err)
	}
	if cs, _ := p.eng.Consumers("dg"); len(cs) != 2 {
		t.Fatalf("a refused delete removed cursors: %+v", cs)
	}
	cl.Close() // leaves the group
	if ms := p.eng.ConsumerMembers("billing"); len(ms) != 0 {
		t.Fatalf("members after leave: %+v", ms)
	}

	os := kadm.TopicsSet{}
	os.Add("dg", 1)
	or, err := adm.DeleteOffsets(ctx, "billing", os)
	if err != nil {
		t.Fatal(err)
	}
	if err := or.Error(); err != nil {
		t.Fatalf("DeleteOffsets dg/1: %v", err)
	}
	if cs, _ := p.eng.Consumers("dg"); len(cs) != 1 || cs[0].Partition != 0 {
		t.Fatalf("after DeleteOffsets dg/1: %+v", cs)
	}

	dr, err = adm.DeleteGroups(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if err := dr["billing"].Err; err != nil {
		t.Fatalf("DeleteGroups of the empty group: %v", err)
	}
	if cs, _ := p.eng.Consumers("dg"); len(cs) != 0 {
		t.Fatalf("cursors after DeleteGroups: %+v", cs)
	}
	lg, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lg["billing"]; ok {
		t.Fatalf("ListGroups still lists billing: %+v", lg)
	}
	dr, _ = adm.DeleteGroups(ctx, "billing")
	if !errors.Is(dr["billing"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("deleting it again: %v", dr["billing"].Err)
	}
}

// kafkajs' admin grows a topic with createPartitions and sees the new
// count in its metadata; its deleteGroups gets NON_EMPTY_GROUP for a group
// with a live (franz-go) member and deletes it once the member left.
func TestKafkajsAdminGrowAndDeleteGroup(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("jsgrow", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if parts := kafkajs(t, "grow", p.addr, "jsgrow", "_", "4"); len(parts) != 4 {
		t.Fatalf("kafkajs sees %d partitions after createPartitions to 4", len(parts))
	}
	if info, _ := p.eng.Describe("jsgrow"); len(info.Partitions) != 4 {
		t.Fatalf("engine: %d partitions", len(info.Partitions))
	}
	ctx := adminCtx(t)
	produceKgo(t, p.addr, "jsgrow", "x", 4, kgo.NoCompression())
	cl := kgoClient(t, p.addr, kgo.ConsumerGroup("jsg"), kgo.ConsumeTopics("jsgrow"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for n := 0; n < 4; n += cl.PollFetches(ctx).NumRecords() {
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	if got := kafkajs(t, "deletegroup", p.addr, "_", "jsg", "0"); len(got) != 1 || got[0].Value != "NON_EMPTY_GROUP" {
		t.Fatalf("deleteGroups with a live member: %+v", got)
	}
	cl.Close()
	if got := kafkajs(t, "deletegroup", p.addr, "_", "jsg", "0"); len(got) != 1 || got[0].Value != "ok" {
		t.Fatalf("deleteGroups of the empty group: %+v", got)
	}
	if cs, _ := p.eng.Consumers("jsgrow"); len(cs) != 0 {
		t.Fatalf("cursors left after deleteGroups: %+v", cs)
	}
}
