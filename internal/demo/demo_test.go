package demo

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pulselog/pulse/engine"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The demo creates its topics and keeps producing valid JSON to all of them,
// with a consumer cursor trailing orders.
func TestDemoProducesToEveryTopic(t *testing.T) {
	e, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Seed(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := Seed(ctx, e); err != nil {
		t.Fatalf("seeding an existing demo dir again: %v", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); Run(ctx, e, 2000) }()

	deadline := time.Now().Add(60 * time.Second) // a hung demo, not a speed check
	for _, dt := range demoTopics() {
		for {
			info, err := e.Describe(dt.name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Config.Cleanup != dt.cfg.Cleanup || info.Config.SegmentMaxBytes != dt.cfg.SegmentMaxBytes || info.Config.RetentionMaxAge != dt.cfg.RetentionMaxAge {
				t.Fatalf("%s created with %+v, want %+v", dt.name, info.Config, dt.cfg)
			}
			var hwm int64
			for _, p := range info.Partitions {
				hwm += p.HWM
			}
			if hwm >= 20 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s reached only %d records", dt.name, hwm)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for {
		if _, ok, err := e.Cursor("billing", "orders", 0); err != nil {
			t.Fatal(err)
		} else if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo committed no billing cursor on orders")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done

	for _, dt := range demoTopics() {
		res, err := e.Read(dt.name, 0, 0, 50, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			if r.Value == nil && dt.cfg.Cleanup == engine.CleanupCompact {
				continue // a decommissioned sensor
			}
			var v map[string]any
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("%s offset %d: value is not JSON: %v", dt.name, r.Offset, err)
			}
			if len(r.Key) == 0 {
				t.Fatalf("%s offset %d has no key", dt.name, r.Offset)
			}
		}
	}
}
