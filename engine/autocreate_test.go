package engine

import (
	"errors"
	"sync"
	"testing"
)

func TestAutoCreate(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()

	// Concurrent first uses of one name: every one succeeds, one topic.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = AutoCreate(e, "fresh", -1) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("auto-create %d: %v", i, err)
		}
	}
	info, err := e.Describe("fresh")
	if err != nil {
		t.Fatal(err)
	}
	if info.Config != DefaultTopicConfig() {
		t.Fatalf("auto-created config %+v, want DefaultTopicConfig %+v", info.Config, DefaultTopicConfig())
	}

	// An existing topic is left as it is.
	if err := e.CreateTopic("wide", TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := AutoCreate(e, "wide", 0); err != nil {
		t.Fatalf("auto-create of an existing topic: %v", err)
	}
	if n, err := ProducePartitions(e, "wide"); err != nil || n != 3 {
		t.Fatalf("ProducePartitions(wide) = %d, %v; want 3", n, err)
	}

	// A partition a default topic would not have creates nothing.
	if err := AutoCreate(e, "narrow", 1); !errors.Is(err, ErrPartitionOutOfRange) {
		t.Fatalf("auto-create for partition 1: %v, want ErrPartitionOutOfRange", err)
	}
	if _, err := e.Describe("narrow"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("after a refused auto-create: %v, want ErrTopicNotFound", err)
	}
	if n, err := ProducePartitions(e, "narrow"); err != nil || n != DefaultTopicConfig().Partitions {
		t.Fatalf("ProducePartitions of a missing topic = %d, %v; want the default %d", n, err, DefaultTopicConfig().Partitions)
	}
	if _, err := ProducePartitions(e, "bad/name"); !errors.Is(err, ErrInvalidTopic) {
		t.Fatalf("ProducePartitions of an invalid name: %v, want ErrInvalidTopic", err)
	}
}
