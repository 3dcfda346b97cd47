package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/pulselog/pulse/wsapi/wire"
)

// Bad input over the websocket API on a cluster gets the same code as on a
// data dir, with a message naming what was wrong, and nothing reaches the
// cluster: a consumer name the cursor store refuses, a segment size or a
// partition count outside Pulse's bounds.
func TestBadInputRefusedBeforeTheCluster(t *testing.T) {
	addr := bootstrap(t)
	topic := uniq(t, "guarded")
	_, adm := kclient(t, addr)
	src := openSource(t, addr)
	ws, _ := serve(t, src)
	c := dialWS(t, ws)
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
