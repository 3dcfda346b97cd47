package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/internal/layout"
)

// TestServeWarnsOfDamageAtStart: pulse serve on a data dir recovery found
// damaged says so on stderr as it starts (a degraded partition, a meta.db
// rebuilt from the topic directories), naming pulse inspect, instead of
// serving as if all were well.
func TestServeWarnsOfDamageAtStart(t *testing.T) {
	dir := t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"hurt", "other"} {
		if err := e.CreateTopic(topic, engine.TopicConfig{Codec: "none"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := e.Produce(context.Background(), topic, 0, []engine.Record{{Value: []byte("some value")}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	part := layout.PartitionDir(dir, "hurt", 0)
	damage.FlipByte(t, filepath.Join(part, layout.LogFile(0)), 60) // in the first batch
	// Without the snapshot the open scans the segment and finds it.
	if err := os.Remove(filepath.Join(part, layout.SnapshotFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "meta.db")); err != nil {
		t.Fatal(err)
	}

	s := startServe(t, dir)
	if err := s.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("pulse serve: %v\n%s", err, s.stderr)
	}
	stderr := s.stderr.String()
	for _, want := range []string{
		"pulse: warning: topic hurt partition 0 opened degraded",
		"pulse inspect",
		"pulse: warning: topic other: meta.db was missing; rebuilt",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "topic other partition 0 opened degraded") {
		t.Errorf("a whole partition is reported degraded:\n%s", stderr)
	}
}
