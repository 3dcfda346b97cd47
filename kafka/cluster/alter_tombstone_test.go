package cluster

import (
	"errors"
	"testing"

	"github.com/pulselog/pulse/wsapi/wire"
)

// An alter_topic with tombstone_retention_ms SETs delete.retention.ms on
// the cluster (a plain Kafka admin client reads it back) and describe
// shows it; an alter of another setting leaves it, and a refused value
// changes nothing.
func TestAlterTopicTombstoneRetentionOnCluster(t *testing.T) {
	addr := bootstrap(t)
	_, adm := kclient(t, addr)
	c := clusterWS(t, addr)
	ctx := testCtx(t)
	name := uniq(t, "tombs")
	if _, err := c.CreateTopic(ctx, name, wire.TopicConfig{Partitions: 1, Cleanup: "compact"}); err != nil {
		t.Fatal(err)
	}
	deleteRetention := func() string {
		t.Helper()
		if v, ok := topicConfigs(t, adm, name)["delete.retention.ms"]; ok {
			return v
		}
		return "(not reported)"
	}
	minute := int64(60000)
	ti, err := c.AlterTopic(ctx, name, wire.TopicAlter{TombstoneRetentionMs: &minute})
	if err != nil {
		t.Fatalf("alter_topic tombstone_retention_ms: %v", err)
	}
	if ti.Config.TombstoneRetentionMs != 60000 || ti.Config.Cleanup != "compact" {
		t.Fatalf("alter_topic reply: %+v", ti.Config)
	}
	if v := deleteRetention(); v != "60000" {
		t.Fatalf("delete.retention.ms %s after the alter, want 60000", v)
	}
	if ti, err := c.Describe(ctx, name); err != nil || ti.Config.TombstoneRetentionMs != 60000 {
		t.Fatalf("describe after the alter: %+v %v", ti.Config, err)
	}

	// Another setting's alter leaves it as it is.
	hour := int64(3600000)
	if _, err := c.AlterTopic(ctx, name, wire.TopicAlter{RetentionMs: &hour}); err != nil {
		t.Fatal(err)
	}
	if v := deleteRetention(); v != "60000" {
		t.Fatalf("delete.retention.ms %s after an alter of retention_ms, want 60000", v)
	}
	// A bad value is refused before anything is sent.
	zero := int64(0)
	_, err = c.AlterTopic(ctx, name, wire.TopicAlter{TombstoneRetentionMs: &zero, RetentionMs: &minute})
	var pe *wire.Error
	if !errors.As(err, &pe) || pe.Code != wire.CodeInvalidConfig {
		t.Fatalf("alter_topic tombstone_retention_ms 0: %v, want %s", err, wire.CodeInvalidConfig)
	}
	if v := deleteRetention(); v != "60000" {
		t.Fatalf("delete.retention.ms %s after a refused alter, want 60000", v)
	}
	if ti, err := c.Describe(ctx, name); err != nil || ti.Config.RetentionMs != hour {
		t.Fatalf("a refused alter changed the retention: %+v %v", ti.Config, err)
	}
}
