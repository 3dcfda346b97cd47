package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestAlterTopic: retention and cleanup change on the cluster and read
// back through Describe; fewer partitions and another codec are refused; a
// topic created with sync mode interval reads back so.
func TestAlterTopic(t *testing.T) {
	s := openSource(t, bootstrap(t))
	name := uniq(t, "alter")
	if err := s.CreateTopic(name, engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	cur, err := s.Describe(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cur.Config
	cfg.RetentionMaxAge, cfg.RetentionMaxBytes, cfg.Cleanup = 2*time.Hour, 1<<20, engine.CleanupCompact
	if err := s.AlterTopic(name, cfg); err != nil {
		t.Fatalf("AlterTopic: %v", err)
	}
	got, err := s.Describe(name)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Config; c.RetentionMaxAge != 2*time.Hour || c.RetentionMaxBytes != 1<<20 || c.Cleanup != engine.CleanupCompact {
		t.Fatalf("config after AlterTopic: %+v", c)
	}
	shrink := cfg
	shrink.Partitions = 1
	if err := s.AlterTopic(name, shrink); !errors.Is(err, engine.ErrInvalidConfig) || !strings.Contains(err.Error(), "never shrink (it has 2)") {
		t.Fatalf("shrinking partitions through AlterTopic: %v, want ErrInvalidConfig", err)
	}
	codec := cfg
	codec.Codec = "lz4-frames"
	if err := s.AlterTopic(name, codec); !errors.Is(err, engine.ErrInvalidConfig) {
		t.Fatalf("changing the codec: %v, want ErrInvalidConfig", err)
	}

	// Created with sync mode interval: flush.messages says so (Pulse's
	// listener would otherwise make it every-write).
	lazy := uniq(t, "lazy")
	if err := s.CreateTopic(lazy, engine.TopicConfig{Partitions: 1, SyncMode: engine.SyncInterval}); err != nil {
		t.Fatalf("create with sync mode interval: %v", err)
	}
	if got, err := s.Describe(lazy); err != nil || got.Config.SyncMode != engine.SyncInterval {
		t.Fatalf("a topic created with sync mode interval reads as %q (%v)", got.Config.SyncMode, err)
	}
	if err := s.CreateTopic(uniq(t, "odd"), engine.TopicConfig{Partitions: 1, SyncMode: "sometimes"}); !errors.Is(err, engine.ErrInvalidConfig) {
		t.Fatalf("create with sync mode sometimes: %v, want ErrInvalidConfig", err)
	}
}

// TestAlterTopicGrowsSegmentSync: AlterTopic grows a cluster topic's
// partitions (CreatePartitions) and sets its segment size (segment.bytes)
// and sync mode (flush.messages 1, then Kafka's default) as the Kafka
// listener maps them; a plain Kafka client sees the new partitions and
// configs. A bad value is refused before anything is sent: a grow asked
// with it does not happen.
func TestAlterTopicGrowsSegmentSync(t *testing.T) {
	addr := bootstrap(t)
	s := openSource(t, addr)
	cl, adm := kclient(t, addr)
	name := uniq(t, "grow")
	if err := s.CreateTopic(name, engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	cur, err := s.Describe(name)
	if err != nil {
		t.Fatal(err)
	}
	// A cluster without flush.messages (kfake) reads as interval; Pulse's
	// listener reports its engine's every-write. Each is turned to the
	// other and back.
	sync, back := engine.SyncEveryWrite, cur.Config.SyncMode
	if back == engine.SyncEveryWrite {
		sync = engine.SyncInterval
	}
	cfg := cur.Config
	cfg.Partitions, cfg.SegmentMaxBytes, cfg.SyncMode = 4, 2<<20, sync
	if err := s.AlterTopic(name, cfg); err != nil {
		t.Fatalf("AlterTopic: %v", err)
	}
	got, err := s.Describe(name)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Config; len(got.Partitions) != 4 || c.Partitions != 4 || c.SegmentMaxBytes != 2<<20 || c.SyncMode != sync {
		t.Fatalf("after AlterTopic: %d partitions, %+v", len(got.Partitions), c)
	}

	// What a Kafka client Pulse did not write sees.
	ctx := testCtx(t)
	md, err := adm.ListTopics(ctx, name)
	if err != nil || len(md[name].Partitions) != 4 {
		t.Fatalf("kadm sees %d partitions (%v), want 4", len(md[name].Partitions), err)
	}
	want := map[string]string{"segment.bytes": "2097152", "flush.messages": map[engine.SyncMode]string{
		engine.SyncEveryWrite: "1", engine.SyncInterval: "9223372036854775807"}[sync]}
	cfgs := topicConfigs(t, adm, name)
	for k, w := range want {
		if cfgs[k] == w {
			delete(want, k)
		}
	}
	if len(want) != 0 {
		t.Fatalf("kadm's DescribeConfigs lacks %v: %v", want, cfgs)
	}
	r := cl.ProduceSync(ctx, &kgo.Record{Topic: name, Partition: 3, Value: []byte("on a new partition")})
	if err := r.FirstErr(); err != nil {
		t.Fatalf("a Kafka client producing to the new partition 3: %v", err)
	}
	// Under interval sync the high watermark follows the next fsync: wait
	// for it (bounded by the hang guard, not a timing assertion).
	for {
		got, err := s.Describe(name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Partitions[3].HWM == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("partition 3 after a produce: %+v", got.Partitions[3])
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Refused before anything is sent.
	bad := cfg
	bad.Partitions, bad.SegmentMaxBytes = 6, 100
	if err := s.AlterTopic(name, bad); !errors.Is(err, engine.ErrInvalidConfig) || !strings.Contains(err.Error(), "segment.bytes=100") {
		t.Fatalf("segment of 100 bytes: %v, want ErrInvalidConfig naming segment.bytes=100", err)
	}
	bad.SegmentMaxBytes, bad.SyncMode = cfg.SegmentMaxBytes, "sometimes"
	if err := s.AlterTopic(name, bad); !errors.Is(err, engine.ErrInvalidConfig) || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Fatalf("sync mode sometimes: %v, want ErrInvalidConfig", err)
	}
	if got, err := s.Describe(name); err != nil || len(got.Partitions) != 4 || got.Config.SegmentMaxBytes != 2<<20 {
		t.Fatalf("the refused alters changed the topic: %d partitions, %+v (%v)", len(got.Partitions), got.Config, err)
	}

	// And back.
	cfg.SyncMode = back
	if err := s.AlterTopic(name, cfg); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Describe(name); err != nil || got.Config.SyncMode != back {
		t.Fatalf("sync mode after setting %s again: %q (%v)", back, got.Config.SyncMode, err)
	}
}

// A cluster's flush.messages reads as the listener maps it: 1 is
// every-write, any other count (or none reported, Kafka's default) is
// interval; pulse.sync.mode, which Pulse's listener also reports, agrees.
func TestTopicConfigSyncMode(t *testing.T) {
	str := func(v string) *string { return &v }
	for _, c := range []struct {
		cfgs []kadm.Config
		want engine.SyncMode
	}{
		{nil, engine.SyncInterval},
		{[]kadm.Config{{Key: "flush.messages", Value: str("1")}}, engine.SyncEveryWrite},
		{[]kadm.Config{{Key: "flush.messages", Value: str("9223372036854775807")}}, engine.SyncInterval},
		{[]kadm.Config{{Key: "flush.messages", Value: str("1000")}}, engine.SyncInterval},
		{[]kadm.Config{{Key: "flush.messages", Value: str("junk")}}, engine.SyncInterval},
		{[]kadm.Config{{Key: "pulse.sync.mode", Value: str("every-write")}, {Key: "flush.messages", Value: str("1")}}, engine.SyncEveryWrite},
	} {
		if got := topicConfig(c.cfgs).SyncMode; got != c.want {
			t.Errorf("%v: sync mode %q, want %q", c.cfgs, got, c.want)
		}
	}
}

// alter_topic over the websocket API on a cluster (what `pulse topics alter`
// sends) grows the partitions and sets the segment size and sync mode; the
// reply and kadm agree, and fewer partitions or a bad segment size are
// invalid_config with nothing changed.
func TestAlterTopicOverWebsocket(t *testing.T) {
	addr := bootstrap(t)
	_, adm := kclient(t, addr)
	ws, _ := serve(t, openSource(t, addr))
	c := dialWS(t, ws)
	ctx := testCtx(t)
	name := uniq(t, "wsgrow")
	if _, err := c.CreateTopic(ctx, name, wire.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	parts, seg, interval := 3, int64(4<<20), "interval"
	ti, err := c.AlterTopic(ctx, name, wire.TopicAlter{Partitions: &parts, SegmentBytes: &seg, SyncMode: &interval})
	if err != nil {
		t.Fatalf("alter_topic: %v", err)
	}
	if len(ti.Partitions) != 3 || ti.Config.Partitions != 3 || ti.Config.SegmentBytes != 4<<20 || ti.Config.SyncMode != "interval" {
		t.Fatalf("alter_topic reply: %d partitions, %+v", len(ti.Partitions), ti.Config)
	}
	codeOf := func(err error) string {
		var pe *wire.Error
		if errors.As(err, &pe) {
			return pe.Code
		}
		return "not a protocol error: " + fmt.Sprint(err)
	}
	fewer, grow, tiny := 2, 5, int64(100)
	if _, err := c.AlterTopic(ctx, name, wire.TopicAlter{Partitions: &fewer}); codeOf(err) != wire.CodeInvalidConfig {
		t.Errorf("alter_topic to 2 partitions: %v, want %s", err, wire.CodeInvalidConfig)
	}
	if _, err := c.AlterTopic(ctx, name, wire.TopicAlter{Partitions: &grow, SegmentBytes: &tiny}); codeOf(err) != wire.CodeInvalidConfig {
		t.Errorf("alter_topic with segment_bytes 100: %v, want %s", err, wire.CodeInvalidConfig)
	}
	md, err := adm.Metadata(ctx, name)
	if err != nil || len(md.Topics[name].Partitions) != 3 {
		t.Fatalf("kadm sees %d partitions after the refused alters (%v), want 3", len(md.Topics[name].Partitions), err)
	}
}

// Records produced through the source after it altered (and grew) a topic
// it had produced to are all stored: the alter keeps the producer's
// sequence numbers, which a broker would otherwise take for duplicates of
// the records produced before it and drop while acking them.
func TestProduceAfterAlterKeepsEveryRecord(t *testing.T) {
	addr := bootstrap(t)
	s := openSource(t, addr)
	name := uniq(t, "regrow")
	if err := s.CreateTopic(name, engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	produce := func(tag string, n int) {
		t.Helper()
		recs := make([]engine.Record, n)
		for i := range recs {
			recs[i].Value = []byte(fmt.Sprint(tag, i))
		}
		if _, err := s.Produce(testCtx(t), name, -1, recs); err != nil {
			t.Fatalf("produce %s: %v", tag, err)
		}
	}
	produce("before-", 3)
	cur, err := s.Describe(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cur.Config
	cfg.Partitions, cfg.RetentionMaxAge = 4, time.Hour
	if err := s.AlterTopic(name, cfg); err != nil {
		t.Fatal(err)
	}
	// One record a request, as the UI's produce form sends them: each
	// partition's first one after the alter has the sequence number of
	// the one before it, were the producer's state purged.
	for i := range 8 {
		produce(fmt.Sprint("after-", i, "-"), 1)
	}
	cfg.RetentionMaxAge = 2 * time.Hour // an alter without a grow
	if err := s.AlterTopic(name, cfg); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		produce(fmt.Sprint("last-", i, "-"), 1)
	}

	_, adm := kclient(t, addr)
	ends, err := adm.ListEndOffsets(testCtx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	var stored int64
	ends.Each(func(o kadm.ListedOffset) { stored += o.Offset })
	if stored != 15 {
		t.Errorf("%d records stored of the 15 produced and acked", stored)
	}
	got := map[string]int{}
	for _, r := range consumeAll(t, addr, name, int(stored)) {
		got[string(r.Value)]++
	}
	var want []string
	for i := range 3 {
		want = append(want, fmt.Sprint("before-", i))
	}
	for i := range 8 {
		want = append(want, fmt.Sprint("after-", i, "-0"))
	}
	for i := range 4 {
		want = append(want, fmt.Sprint("last-", i, "-0"))
	}
	for _, v := range want {
		if n := got[v]; n != 1 {
			t.Errorf("%s stored %d times, want once", v, n)
		}
	}
}
