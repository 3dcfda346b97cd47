package wsapi

import "github.com/pulselog/pulse/wsapi/wire"

// partitionWatcher is the backend's PartitionsChangedC (*engine.Engine has
// it): a channel closed when a topic gains partitions.
type partitionWatcher interface {
	PartitionsChangedC(topic string) (<-chan struct{}, error)
}

// followGrowth makes a topic-wide subscription that started with have
// partitions follow the ones alter_topic (or Kafka's CreatePartitions)
// adds: each new partition is delivered from its log start (or the
// consumer's cursor), so no record produced to it after the grow is
// missed. A backend that cannot report growth keeps the partitions the
// subscription started with.
func (s *subscription) followGrowth(have int) {
	w, ok := s.c.srv.b.(partitionWatcher)
	if !ok {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			ch, err := w.PartitionsChangedC(s.topic)
			if err != nil {
				return // deleted: the partition goroutines report it
			}
			t, err := s.c.srv.b.Describe(s.topic)
			if err != nil {
				return
			}
			for p := have; p < len(t.Partitions); p++ {
				starts, err := s.c.startOffsets(s.topic, &p, wire.From{Kind: wire.FromEarliest}, s.consumer, false)
				if err != nil {
					s.fail(p, err)
					return
				}
				s.start(starts) // s.wg is above zero: this goroutine holds it
			}
			have = max(have, len(t.Partitions))
			select {
			case <-ch:
			case <-s.ctx.Done():
				return
			}
		}
	}()
}
