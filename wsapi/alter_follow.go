package wsapi

import (
	"context"
	"sync"

	"github.com/pulselog/pulse/wsapi/wire"
)

// partitionWatcher is the backend's PartitionsChangedC (*engine.Engine has
// it): a channel closed when a topic gains partitions.
type partitionWatcher interface {
	PartitionsChangedC(topic string) (<-chan struct{}, error)
}

// watchGrowth follows the grows of topic for a stream of the whole topic
// that started with have partitions, in a goroutine that wg counts: each
// time the topic has partitions past the ones seen, grown gets their range
// [from, to) and says whether to go on. It stops when ctx ends or the topic
// goes (the partition readers report that). A backend that cannot report
// growth keeps the partitions the stream started with.
func (s *Server) watchGrowth(ctx context.Context, wg *sync.WaitGroup, topic string, have int, grown func(from, to int) bool) {
	w, ok := s.b.(partitionWatcher)
	if !ok {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			// Taken before Describe: a grow between the two closes it.
			ch, err := w.PartitionsChangedC(topic)
			if err != nil {
				return // deleted: the partition readers report it
			}
			t, err := s.b.Describe(topic)
			if err != nil {
				return
			}
			if n := len(t.Partitions); n > have {
				if !grown(have, n) {
					return
				}
				have = n
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// followGrowth makes a topic-wide subscription that started with have
// partitions follow the ones alter_topic (or Kafka's CreatePartitions)
// adds: each new partition is delivered from its log start (or the
// consumer's cursor), so no record produced to it after the grow is
// missed.
func (s *subscription) followGrowth(have int) {
	if !s.hold() {
		return // stopped already
	}
	defer s.wg.Done()
	s.c.srv.watchGrowth(s.ctx, &s.wg, s.topic, have, func(from, to int) bool {
		for p := from; p < to; p++ {
			starts, err := s.c.srv.startOffsets(s.topic, &p, wire.From{Kind: wire.FromEarliest}, s.consumer, false)
			if err != nil {
				s.fail(p, err)
				return false
			}
			s.start(starts) // s.wg is above zero: the watching goroutine holds it
		}
		return true
	})
}
