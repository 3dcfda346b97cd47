package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// While a topic grows, it and every other topic go on serving: listed,
// produced to and read, and a delete or alter of the growing topic waits
// for the grow to end rather than meeting it half done.
func TestGrowServesMeanwhile(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	for _, name := range []string{"steady", "big"} {
		if err := e.CreateTopic(name, TopicConfig{Partitions: 2, Codec: "none"}); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	worker := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := f(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	worker(func() error {
		ts, err := e.Topics()
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(ts, func(ti TopicInfo) bool { return ti.Name == "big" }) {
			return errors.New("the growing topic was not listed")
		}
		return nil
	})
	worker(func() error {
		_, err := e.Produce(context.Background(), "big", 1, []Record{{Value: []byte("during")}})
		return err
	})
	worker(func() error {
		_, err := e.Read("steady", 0, 0, 10, 1<<20)
		return err
	})

	cfg := DefaultTopicConfig()
	cfg.Codec, cfg.Partitions = "none", 40
	grew := make(chan error, 1)
	go func() { grew <- e.AlterTopic("big", cfg) }()
	cfg2 := cfg
	cfg2.Partitions = 48
	// Queued behind the first grow (or after it): both apply, in turn.
	if err := e.AlterTopic("big", cfg2); err != nil {
		t.Fatalf("second grow: %v", err)
	}
	if err := <-grew; err != nil && !errors.Is(err, ErrInvalidConfig) {
		// The first grow may come second and then be a shrink: refused.
		t.Fatalf("first grow: %v", err)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	info, err := e.Describe("big")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Partitions) != 48 {
		t.Fatalf("after the grows: %d partitions, want 48", len(info.Partitions))
	}
	if _, err := e.Produce(context.Background(), "big", 47, []Record{{Value: []byte("new")}}); err != nil {
		t.Fatalf("produce to a new partition: %v", err)
	}
	if err := e.DeleteTopic("big"); err != nil {
		t.Fatal(err)
	}
}
