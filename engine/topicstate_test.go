package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Creates and deletes run outside the engine's lock (topics.go): these
// tests race them against each other and against produces and reads.

func TestCreateRacingCreateOfSameNameOneWins(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.CreateTopic("orders", TopicConfig{Partitions: 16, Codec: "none"})
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrTopicExists):
			t.Errorf("create %d: %v, want nil or ErrTopicExists", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d creates of one name succeeded, want 1", won)
	}
	info, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Partitions) != 16 {
		t.Fatalf("orders has %d partitions, want 16", len(info.Partitions))
	}
}

// A topic being created is invisible until every partition is open: whoever
// sees it can read and produce to all of its partitions.
func TestTopicBeingCreatedIsNotVisibleHalfMade(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	const parts = 64
	created := make(chan error, 1)
	go func() { created <- e.CreateTopic("big", TopicConfig{Partitions: parts, Codec: "none"}) }()
	seen := 0
	for done := false; !done; {
		select {
		case err := <-created:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		info, err := e.Describe("big")
		if errors.Is(err, ErrTopicNotFound) {
			if done {
				t.Fatal("topic not visible after its create returned")
			}
			ts, err := e.Topics()
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range ts {
				if ti.Name == "big" && len(ti.Partitions) != parts {
					t.Fatalf("Topics lists big with %d partitions, want %d", len(ti.Partitions), parts)
				}
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		seen++
		if len(info.Partitions) != parts {
			t.Fatalf("visible topic has %d partitions, want %d", len(info.Partitions), parts)
		}
		for p := range parts {
			if _, err := e.Read("big", p, 0, 1, 1<<10); err != nil {
				t.Fatalf("read of visible topic's partition %d: %v", p, err)
			}
		}
		if _, err := e.Produce(context.Background(), "big", parts-1, []Record{{Value: []byte("x")}}); err != nil {
			t.Fatalf("produce to visible topic: %v", err)
		}
	}
	if seen == 0 {
		t.Fatal("never saw the topic")
	}
}

// A produce (plain or idempotent), read or producer scan of a topic being
// deleted fails with ErrTopicNotFound, never with "engine is closed", and a
// create of the same name waits for the delete and then makes an empty
// topic.
func TestProduceToTopicBeingDeletedGetsClearError(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	for round := range 3 {
		if err := e.CreateTopic("orders", TopicConfig{Partitions: 8, Codec: "none"}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []error
		var running sync.WaitGroup // each worker's first call succeeded
		running.Add(8)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					switch w % 4 {
					case 0:
						_, err = e.Produce(context.Background(), "orders", -1, []Record{{Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")}})
					case 1:
						_, err = e.Read("orders", i%8, 0, 10, 1<<16)
					case 2: // the Kafka listener's idempotent produce
						stamp := ProducerStamp{ID: uint32(1 + w), BaseSequence: int32(i)}
						_, err = e.ProduceIdempotent(context.Background(), "orders", i%8, []Record{{Value: []byte("v")}}, stamp)
					case 3:
						err = e.ProducerBatches("orders", i%8, func(ProducerBatch) {})
					}
					if i == 0 {
						if err != nil {
							mu.Lock()
							bad = append(bad, fmt.Errorf("worker %d before the delete: %w", w, err))
							mu.Unlock()
						}
						running.Done()
					}
					if err != nil && !errors.Is(err, ErrTopicNotFound) {
						mu.Lock()
						bad = append(bad, err)
						mu.Unlock()
					}
				}
			}()
		}
		running.Wait()
		if err := e.DeleteTopic("orders"); err != nil {
			t.Fatalf("round %d: delete: %v", round, err)
		}
		close(stop)
		wg.Wait()
		for _, err := range bad {
			t.Errorf("round %d: produce, read or producer scan during delete: %v, want nil or ErrTopicNotFound", round, err)
		}
		if _, err := e.Describe("orders"); !errors.Is(err, ErrTopicNotFound) {
			t.Fatalf("round %d: after delete: %v, want ErrTopicNotFound", round, err)
		}
	}
}

func TestCreateWaitsForDeleteOfSameName(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := e.CreateTopic("orders", TopicConfig{Partitions: 32, Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Produce(context.Background(), "orders", 0, []Record{{Value: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var delErr, createErr error
	wg.Add(2)
	go func() { defer wg.Done(); delErr = e.DeleteTopic("orders") }()
	go func() {
		defer wg.Done()
		createErr = e.CreateTopic("orders", TopicConfig{Partitions: 4, Codec: "none"})
	}()
	wg.Wait()
	if delErr != nil && !errors.Is(delErr, ErrTopicNotFound) {
		t.Fatalf("delete: %v", delErr)
	}
	if createErr != nil && !errors.Is(createErr, ErrTopicExists) {
		t.Fatalf("create: %v", createErr)
	}
	// Whichever ran first, the outcome is one of the serial orders:
	// delete then create (an empty 4-partition topic), or create refused
	// then delete (no topic).
	info, err := e.Describe("orders")
	switch {
	case createErr == nil && delErr == nil:
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Partitions) != 4 || info.Partitions[0].HWM != 0 {
			t.Fatalf("re-created topic: %d partitions, p0 hwm %d; want 4, 0", len(info.Partitions), info.Partitions[0].HWM)
		}
	case createErr != nil && delErr == nil:
		if !errors.Is(err, ErrTopicNotFound) {
			t.Fatalf("create refused, delete done: describe %v, want ErrTopicNotFound", err)
		}
	default:
		t.Fatalf("create %v, delete %v: not a serial outcome", createErr, delErr)
	}
}

// Close waits for creates and deletes under way; every partition they
// opened is closed (goleak in TestMain checks no flusher is left).
func TestCloseDuringCreatesAndDeletes(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("t%d", i)
			if err := e.CreateTopic(name, TopicConfig{Partitions: 16, Codec: "none"}); err != nil {
				if !errors.Is(err, ErrClosed) {
					t.Errorf("create %s: %v", name, err)
				}
				return
			}
			if err := e.DeleteTopic(name); err != nil && !errors.Is(err, ErrClosed) {
				t.Errorf("delete %s: %v", name, err)
			}
		}()
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// Whatever was committed reopens whole.
	e = openEngine(t, dir)
	defer e.Close()
	ts, err := e.Topics()
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range ts {
		if len(ti.Partitions) != 16 {
			t.Errorf("topic %s reopened with %d partitions, want 16", ti.Name, len(ti.Partitions))
		}
	}
}

// Every call on a partition whose log is closed while its topic stays
// (idempotent and plain produce, read, producer scan) fails with ErrClosed
// naming the topic and partition: the engine maps the log's own ErrClosed,
// whichever call meets it.
func TestCallsOnAClosedPartitionLogAreErrClosed(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := e.CreateTopic("orders", TopicConfig{Partitions: 1, Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	recs := []Record{{Value: []byte(`{"n":1}`)}}
	stamp := ProducerStamp{ID: 7, Epoch: 0, BaseSequence: 0}
	if _, err := e.ProduceIdempotent(context.Background(), "orders", 0, recs, stamp); err != nil {
		t.Fatal(err)
	}
	tp, l, err := e.topicPartition("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"ProduceIdempotent": func() error {
			_, err := e.ProduceIdempotent(context.Background(), "orders", 0, recs, ProducerStamp{ID: 7, BaseSequence: 1})
			return err
		},
		"Produce": func() error {
			_, err := e.Produce(context.Background(), "orders", 0, recs)
			return err
		},
		"Read": func() error {
			_, err := e.Read("orders", 0, 0, 10, 1<<20)
			return err
		},
		"ProducerBatches": func() error { return e.ProducerBatches("orders", 0, func(ProducerBatch) {}) },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s on a closed partition log: %v, want ErrClosed", name, err)
			continue
		}
		if !strings.Contains(err.Error(), "topic orders partition 0") {
			t.Errorf("%s: %q does not name the topic and partition", name, err)
		}
	}
	if tp.state == topicDeleting {
		t.Fatal("the topic was marked deleted: the calls above took the delete path")
	}
}
