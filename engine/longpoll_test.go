package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestLongPollWaitsForTheNextCommit(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := e.CreateTopic("t", TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	src := &pollSpy{Engine: e, empty: make(chan struct{}, 1)}
	got := make(chan ReadResult, 1)
	errc := make(chan error, 1)
	go func() {
		res, err := LongPoll(context.Background(), src, "t", 0, 0, 10, 1<<20)
		got <- res
		errc <- err
	}()
	<-src.empty // the poll read nothing: it parks, and the produce below must wake it
	if _, err := e.Produce(context.Background(), "t", 0, []Record{{Value: []byte("first")}}); err != nil {
		t.Fatal(err)
	}
	res := <-got
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 || string(res.Records[0].Value) != "first" || res.Next != 1 {
		t.Fatalf("long poll returned %+v, want the one record and next 1", res)
	}
}

func TestLongPollEndsWithItsContext(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := e.CreateTopic("t", TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := LongPoll(ctx, e, "t", 0, 0, 10, 1<<20)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("long poll after cancel: %v, want context.Canceled", err)
	}
	if _, err := LongPoll(context.Background(), e, "missing", 0, 0, 10, 1<<20); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("long poll of a missing topic: %v, want ErrTopicNotFound", err)
	}
}

// A reader whose offset retention deleted goes on from the log start.
func TestLongPollRetentionReset(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	cfg := TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20}
	if err := e.CreateTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	val := bytes.Repeat([]byte("x"), 64<<10)
	for range 64 { // 4 MiB: four segments
		if _, err := e.Produce(context.Background(), "logs", 0, []Record{{Value: val}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg.RetentionMaxBytes = 2 << 20
	if err := e.AlterTopic("logs", cfg); err != nil {
		t.Fatal(err)
	}
	if err := e.RunRetention("logs"); err != nil {
		t.Fatal(err)
	}
	info, err := e.Describe("logs")
	if err != nil {
		t.Fatal(err)
	}
	start := info.Partitions[0].LogStart
	if start == 0 {
		t.Fatal("retention deleted nothing; the test needs a log start above 0")
	}
	// The engine's own reads start at the log start; a Kafka cluster
	// refuses the offset instead, and RetentionReset says where to go on.
	if got, ok := RetentionReset(e, "logs", 0, 0); !ok || got != start {
		t.Fatalf("RetentionReset from 0: %d, %v; want the log start %d", got, ok, start)
	}
	for _, src := range []PollSource{e, &pollSpy{Engine: e, refuseBelowStart: true}} {
		res, err := LongPoll(context.Background(), src, "logs", 0, 0, 1, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) == 0 || res.Records[0].Offset != start {
			t.Fatalf("long poll from 0 after retention: first offset %v, want the log start %d", res.Records, start)
		}
	}
	if _, ok := RetentionReset(e, "logs", 0, start); ok {
		t.Fatal("RetentionReset moved a reader already at the log start")
	}
}

// pollSpy is the engine as a LongPoll source that reports each read that
// came back empty (on empty, when set), and, with refuseBelowStart, refuses
// a read below the log start with ErrOffsetOutOfRange, as a Kafka cluster
// does where the engine starts at the log start.
type pollSpy struct {
	*Engine
	empty            chan struct{}
	refuseBelowStart bool
}

func (s *pollSpy) Read(topic string, p int, from int64, maxRecords, maxBytes int) (ReadResult, error) {
	if s.refuseBelowStart {
		info, err := s.Describe(topic)
		if err != nil {
			return ReadResult{}, err
		}
		if from < info.Partitions[p].LogStart {
			return ReadResult{}, fmt.Errorf("%w: offset %d is below the log start", ErrOffsetOutOfRange, from)
		}
	}
	res, err := s.Engine.Read(topic, p, from, maxRecords, maxBytes)
	if err == nil && len(res.Records) == 0 && s.empty != nil {
		select {
		case s.empty <- struct{}{}:
		default:
		}
	}
	return res, err
}
