package wsapi

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// shiftedClock is a maintenance clock (engine.Options.Now) the test moves
// forward instead of waiting for a tombstone to come due.
type shiftedClock struct{ shift atomic.Int64 }

func (c *shiftedClock) now() time.Time          { return time.Now().Add(time.Duration(c.shift.Load())) }
func (c *shiftedClock) advance(d time.Duration) { c.shift.Add(int64(d)) }

// serveEngineOn opens the engine on dir with maintenance run by hand
// (RunCompaction) on clock, and serves it; both close at cleanup.
func serveEngineOn(t *testing.T, dir string, clock *shiftedClock) *testServer {
	t.Helper()
	o := engine.DefaultOptions(dir)
	o.RetentionInterval, o.CompactionInterval = 0, 0
	o.Now = clock.now
	e, err := engine.Open(o)
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	ts := serveBackend(t, e, dir, Options{})
	ts.eng = e
	return ts
}

// configOf is the "config" object of a reply's "topic".
func configOf(r map[string]any) map[string]any {
	top, _ := r["topic"].(map[string]any)
	cfg, _ := top["config"].(map[string]any)
	return cfg
}

// alter_topic changes tombstone_retention_ms: the reply and describe show
// it, meta.db keeps it across a restart of the engine on the same data
// dir, and a value under 1 ms or past a time.Duration is invalid_config
// naming the field, with nothing changed.
func TestAlterTopicTombstoneRetention(t *testing.T) {
	dir := t.TempDir()
	clock := &shiftedClock{}
	s := serveEngineOn(t, dir, clock)
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "create_topic", "topic": "kv", "config": map[string]any{"cleanup": "compact"}}); errCode(r) != "" {
		t.Fatalf("create: %v", r)
	}
	r := c.call(2, map[string]any{"op": "alter_topic", "topic": "kv", "alter": map[string]any{"tombstone_retention_ms": 60000}})
	if errCode(r) != "" || configOf(r)["tombstone_retention_ms"] != float64(60000) {
		t.Fatalf("alter tombstone_retention_ms 60000: %v", r)
	}
	if r := c.call(3, map[string]any{"op": "describe", "topic": "kv"}); configOf(r)["tombstone_retention_ms"] != float64(60000) || configOf(r)["cleanup"] != "compact" {
		t.Fatalf("describe after the alter: %v", r)
	}
	for i, bad := range []struct {
		ms   any
		says []string
	}{
		{0, []string{"tombstone_retention_ms 0", "at least 1", "no 0"}},
		{-5, []string{"tombstone_retention_ms -5", "at least 1"}},
		{int64(9300000000000), []string{"tombstone_retention_ms 9300000000000", "at most"}},
	} {
		r := c.call(10+i, map[string]any{"op": "alter_topic", "topic": "kv", "alter": map[string]any{"tombstone_retention_ms": bad.ms, "retention_ms": 5}})
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if errCode(r) != wire.CodeInvalidConfig {
			t.Errorf("alter tombstone_retention_ms %v: %v, want invalid_config", bad.ms, r)
		}
		for _, w := range bad.says {
			if !strings.Contains(msg, w) {
				t.Errorf("alter tombstone_retention_ms %v: message %q lacks %q", bad.ms, msg, w)
			}
		}
	}
	r = c.call(20, map[string]any{"op": "describe", "topic": "kv"})
	if cfg := configOf(r); cfg["tombstone_retention_ms"] != float64(60000) || cfg["retention_ms"] != float64(0) {
		t.Fatalf("refused alters changed the config: %v", cfg)
	}
	// The codec and protect_cursors stay fixed, and the refusal no longer
	// says tombstone_retention_ms is.
	r = c.call(21, map[string]any{"op": "alter_topic", "topic": "kv", "alter": map[string]any{"protect_cursors": true}})
	e, _ := r["error"].(map[string]any)
	if msg, _ := e["message"].(string); errCode(r) != wire.CodeInvalidConfig || !strings.Contains(msg, "tombstone_retention_ms") || strings.Contains(msg, "tombstone_retention_ms and protect_cursors are fixed") {
		t.Errorf("alter protect_cursors: %v", r)
	}

	// Durable: the engine reopened on the same dir has the new value.
	if err := s.eng.Close(); err != nil {
		t.Fatal(err)
	}
	s = serveEngineOn(t, dir, clock)
	if info, err := s.eng.Describe("kv"); err != nil || info.Config.TombstoneRetention != time.Minute {
		t.Fatalf("engine after a restart: %+v %v, want a 1m tombstone retention", info.Config, err)
	}
	c = dialRaw(t, s.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "describe", "topic": "kv"}); configOf(r)["tombstone_retention_ms"] != float64(60000) {
		t.Fatalf("describe after a restart: %v", r)
	}
}

// A compacted topic whose tombstone retention alter_topic lowers drops a
// tombstone older than the new retention at the next compaction, where
// the default 24 h kept it.
func TestAlterLoweredTombstoneRetentionDropsTombstone(t *testing.T) {
	clock := &shiftedClock{}
	s := serveEngineOn(t, t.TempDir(), clock)
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "create_topic", "topic": "kv", "config": map[string]any{"cleanup": "compact", "codec": "none", "segment_bytes": 1 << 20}}); errCode(r) != "" {
		t.Fatalf("create: %v", r)
	}
	ctx := context.Background()
	// A tombstone of a key with no older value, then distinct keys past a
	// segment, so that the tombstone sits in a sealed segment.
	if _, err := s.eng.Produce(ctx, "kv", 0, []engine.Record{{Key: []byte("gone")}}); err != nil {
		t.Fatal(err)
	}
	for b := range 15 {
		recs := make([]engine.Record, 100)
		for i := range recs {
			recs[i] = engine.Record{Key: fmt.Appendf(nil, "k%d-%d", b, i), Value: make([]byte, 1000)}
		}
		if _, err := s.eng.Produce(ctx, "kv", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	tombstoneKept := func() bool {
		t.Helper()
		res, err := s.eng.Read("kv", 0, 0, 1, 1<<20)
		if err != nil || len(res.Records) == 0 {
			t.Fatalf("read: %+v %v", res, err)
		}
		r := res.Records[0]
		return r.Offset == 0 && string(r.Key) == "gone" && r.Value == nil
	}
	clock.advance(time.Hour)
	if err := s.eng.RunCompaction("kv"); err != nil {
		t.Fatal(err)
	}
	if !tombstoneKept() {
		t.Fatal("an hour-old tombstone is gone under the default 24h tombstone retention")
	}
	r := c.call(2, map[string]any{"op": "alter_topic", "topic": "kv", "alter": map[string]any{"tombstone_retention_ms": 60000}})
	if errCode(r) != "" {
		t.Fatalf("alter tombstone_retention_ms: %v", r)
	}
	if err := s.eng.RunCompaction("kv"); err != nil {
		t.Fatal(err)
	}
	if tombstoneKept() {
		t.Fatal("the tombstone outlived a lowered 1m tombstone retention")
	}
	st, err := s.eng.MaintenanceStatus("kv", 0)
	if err != nil || st.Compaction.TombstonesDropped != 1 {
		t.Fatalf("maintenance status: %+v %v, want one tombstone dropped", st.Compaction, err)
	}
}
