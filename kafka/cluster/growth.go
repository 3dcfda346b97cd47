package cluster

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// growPoll is how often the Source asks the cluster for the partition
// counts of the topics someone follows (PartitionsChangedC): a cluster
// announces no grow, so one made by another Kafka client is seen at the
// next poll. A grow made through this Source (AlterTopic) is seen at once.
const growPoll = 2 * time.Second

// growth tracks, per followed topic, the partition count a channel was
// handed out at; the channel is closed when the count changes (a grow, or
// the topic deleted or made again). One goroutine polls while any channel
// is open; a channel whose followers went away stays until its topic
// changes, which costs only its name in the one Metadata request a poll.
type growth struct {
	s *Source

	mu      sync.Mutex             // guards waiters, polling
	waiters map[string]*growWaiter // topic → its open channel
	polling bool                   // the poll goroutine runs
	wg      sync.WaitGroup         // the poll goroutine
}

type growWaiter struct {
	n  int // partitions when the channel was handed out
	ch chan struct{}
}

// PartitionsChangedC returns a channel that is closed when topic gains
// partitions (through AlterTopic, or any Kafka client's CreatePartitions,
// seen within growPoll) or is deleted, as engine.Engine's does: take it
// before Describe, and a change between the two closes the channel already
// held. Websocket subscriptions and SSE streams of a whole topic, and the
// UI's merged tail, follow a grow with it.
//
// A new channel (the first for topic, or one for a count that changed since
// the last) makes the Source's clients forget what they knew of topic
// (sawGrowth), so that the Describe after it reports at least the count the
// channel stands for: a grow by another client that this call is the first
// to see is one the poll will never report.
func (s *Source) PartitionsChangedC(topic string) (<-chan struct{}, error) {
	n, err := s.freshPartitions(topic)
	if err != nil {
		return nil, err
	}
	ch, fresh := s.grow.waiter(topic, n)
	if fresh {
		s.sawGrowth(topic)
	}
	return ch, nil
}

// waiter returns the channel of topic at n partitions, and whether it is
// new: the first for topic, or one replacing a channel handed out at
// another count (grown, or deleted and made again), which it closes.
func (g *growth) waiter(topic string, n int) (<-chan struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w, ok := g.waiters[topic]; ok && w.n == n {
		return w.ch, false
	} else if ok {
		close(w.ch)
	}
	if g.waiters == nil {
		g.waiters = map[string]*growWaiter{}
	}
	w := &growWaiter{n: n, ch: make(chan struct{})}
	g.waiters[topic] = w
	if !g.polling && g.s.ctx.Err() == nil {
		g.polling = true
		g.wg.Add(1)
		go g.poll()
	}
	return w.ch, true
}

// freshPartitions asks the cluster for topic's partition count now (not
// from the produce cache, which it leaves alone: purging the client's
// metadata would disturb produces in flight).
func (s *Source) freshPartitions(topic string) (int, error) {
	if err := engine.ValidateTopicName(topic); err != nil {
		return 0, err
	}
	counts, err := s.partitionCounts([]string{topic})
	if err != nil {
		return 0, err
	}
	n, ok := counts[topic]
	if !ok || n < 0 {
		return 0, fmt.Errorf("topic %q: %w", topic, engine.ErrTopicNotFound)
	}
	return n, nil
}

// grown closes topic's channel: this Source just grew or deleted it.
func (g *growth) grown(topic string) {
	g.s.sawGrowth(topic)
	g.mu.Lock()
	defer g.mu.Unlock()
	if w, ok := g.waiters[topic]; ok {
		close(w.ch)
		delete(g.waiters, topic)
	}
}

// sawGrowth makes the Source's clients learn topic's new partitions before
// a follower reads, watches or produces to them: the cached count and the
// admin client's metadata go, and the producer and the watcher refresh
// their metadata now (kgo would
// otherwise wait out its metadata minimum age, seconds, before it consumes
// a partition it has not seen). Readers are new clients per partition.
func (s *Source) sawGrowth(topic string) {
	s.mu.Lock()
	delete(s.parts, topic)
	s.mu.Unlock()
	s.acl.PurgeTopicsFromClient(topic)
	s.cl.ForceMetadataRefresh()
	if s.watch != nil && s.watch.cl != nil {
		s.watch.cl.ForceMetadataRefresh()
	}
}

// poll checks the followed topics every growPoll until none is left or
// the Source closes.
func (g *growth) poll() {
	defer g.wg.Done()
	t := time.NewTicker(growPoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-g.s.ctx.Done():
			g.mu.Lock()
			g.polling = false
			g.mu.Unlock()
			return
		}
		g.mu.Lock()
		topics := make([]string, 0, len(g.waiters))
		for topic := range g.waiters {
			topics = append(topics, topic)
		}
		if len(topics) == 0 {
			g.polling = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		counts, err := g.s.partitionCounts(topics)
		if err != nil {
			continue // the cluster did not answer: ask again at the next tick
		}
		var seen []string
		g.mu.Lock()
		for topic, w := range g.waiters {
			if n, ok := counts[topic]; ok && n != w.n { // grown, deleted, or made again
				seen = append(seen, topic)
			}
		}
		g.mu.Unlock()
		for _, topic := range seen {
			g.grown(topic)
		}
	}
}

// close waits for the poll goroutine, which the Source's context ends.
func (g *growth) close() { g.wg.Wait() }

// partitionCounts asks one Metadata of topics: each one's partition count,
// -1 for one the cluster no longer has. The request goes to a broker (kadm's
// Metadata may answer from kgo's cache for seconds).
func (s *Source) partitionCounts(topics []string) (map[string]int, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	for _, topic := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return nil, mapErr("metadata", err)
	}
	out := make(map[string]int, len(topics))
	for _, topic := range topics {
		out[topic] = -1
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			out[*t.Topic] = -1
		case err == nil:
			out[*t.Topic] = len(t.Partitions)
		default: // not known this time
			delete(out, *t.Topic)
		}
	}
	return out, nil
}
