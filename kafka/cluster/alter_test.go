package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
)

// TestAlterTopic: retention and cleanup change on the cluster and read
// back through Describe; a setting fixed at creation is refused.
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
	cfg.Partitions++
	if err := s.AlterTopic(name, cfg); !errors.Is(err, engine.ErrInvalidConfig) {
		t.Fatalf("growing partitions through AlterTopic: %v, want ErrInvalidConfig", err)
	}
}
