package wsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strconv"
	"sync"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// maxSubscriptions caps the subscriptions of one connection.
const maxSubscriptions = 64

// subscription delivers one topic (or one partition of it) to a connection:
// one goroutine per partition, each parked on the engine's NotifyC channel
// between reads (no timers), each blocked by the bounded send queue when the
// client reads slower than records arrive.
type subscription struct {
	c        *conn
	id       int64
	topic    string
	consumer string
	plain    bool // tail endpoint: one frame per record, no envelope
	binary   bool // "format":"binary": binary pushes (pushbin.go)
	lens     bool // "value_lens":true: JSON pushes end with value_lens

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // partition goroutines, and the one watching for new partitions
	// mu guards stopped, set by stop: goroutines are added to wg (hold)
	// only before it is set, so that none is added once stop waits.
	mu      sync.Mutex
	stopped bool
}

func (c *conn) opSubscribe(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if req.Consumer != "" {
		if err := engine.ValidateConsumerName(req.Consumer); err != nil {
			c.reply(req.ID, nil, toError(err))
			return
		}
	}
	binary, e := wire.ParseFormat(req.Format)
	if e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if binary && req.ValueLens {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeInvalidRequest, "value_lens: JSON pushes only, not with format %q", wire.FormatBinary))
		return
	}
	from, err := wire.ParseFrom(req.From)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	// Refused before startOffsets, which may create the topic: a refused
	// subscribe creates nothing.
	if e := c.subRoom(); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	starts, err := c.srv.startOffsets(req.Topic, req.Partition, from, req.Consumer, true)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	s, e := c.addSub(req.Topic, req.Consumer, false)
	if e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	s.binary, s.lens = binary, req.ValueLens // before any push of s
	f := []byte(`"sub":`)
	f = strconv.AppendInt(f, s.id, 10)
	f = append(f, `,"topic":`...)
	f = wire.AppendJSONString(f, []byte(req.Topic))
	f = append(f, `,"partitions":[`...)
	for i, st := range starts {
		if i > 0 {
			f = append(f, ',')
		}
		f = fmt.Appendf(f, `{"partition":%d,"from":%d}`, st.Partition, st.From)
	}
	f = append(f, ']')
	s.join(starts)          // shares the push cache before the reply: see join
	c.reply(req.ID, f, nil) // queued before any push of s
	s.launch(starts)
	if req.Partition == nil {
		s.followGrowth(len(starts))
	}
}

// startPlainTail starts the one subscription of a tail endpoint connection
// from its query string: from, partition, consumer.
func (c *conn) startPlainTail(r *http.Request, topic string) {
	if e := validTopic(topic); e != nil {
		c.refuse(e)
		return
	}
	q, e := parseQuery(r)
	if e != nil {
		c.refuse(e)
		return
	}
	from, err := wire.ParseFromText(q.Get("from"))
	if err != nil {
		c.refuse(toError(err))
		return
	}
	var part *int
	if ps := q.Get("partition"); ps != "" {
		p, err := strconv.Atoi(ps)
		if err != nil {
			c.refuse(wire.Errorf(wire.CodeInvalidRequest, "query partition=%q: want a partition number", ps))
			return
		}
		part = &p
	}
	consumer := q.Get("consumer")
	if consumer != "" {
		if err := engine.ValidateConsumerName(consumer); err != nil {
			c.refuse(toError(err))
			return
		}
	}
	starts, err := c.srv.startOffsets(topic, part, from, consumer, true)
	if err != nil {
		c.refuse(toError(err))
		return
	}
	s, e := c.addSub(topic, consumer, true)
	if e != nil {
		c.refuse(e)
		return
	}
	s.start(starts)
	if part == nil {
		s.followGrowth(len(starts))
	}
}

// startOffsets resolves where to start in each partition: the consumer's
// committed cursor when it has one, else from (an offset over several
// partitions starts a partition that ends before it where latest would).
// With create, a topic that does not exist yet is created as a produce
// creates it (AutoCreate), so that a consumer can subscribe before the
// first record is produced, as with Kafka.
func (s *Server) startOffsets(topic string, partition *int, from wire.From, consumer string, create bool) ([]wire.StartPos, error) {
	b := s.b
	if partition != nil && *partition < 0 {
		return nil, wire.Errorf(wire.CodePartitionOutOfRange, "partition %d of topic %q is negative", *partition, topic)
	}
	t, err := b.Describe(topic)
	if errors.Is(err, engine.ErrTopicNotFound) && create && s.opts.AutoCreate {
		if from.Kind == wire.FromOffset && from.N > 0 {
			// A topic created now holds no offset: refused before
			// anything is created.
			return nil, wire.Errorf(wire.CodeOffsetOutOfRange, "offset %d of %s: the topic does not exist yet, and a new one holds [0, 0)", from.N, topic)
		}
		p := -1
		if partition != nil {
			p = *partition
		}
		if err = s.autoCreate(topic, p); err == nil {
			t, err = b.Describe(topic)
		}
	}
	if err != nil {
		return nil, err
	}
	var parts []int
	if partition != nil {
		if p := *partition; p < 0 || p >= len(t.Partitions) {
			return nil, wire.Errorf(wire.CodePartitionOutOfRange, "partition %d of topic %q: the topic has %d", p, topic, len(t.Partitions))
		}
		parts = []int{*partition}
	} else {
		for p := range t.Partitions {
			parts = append(parts, p)
		}
	}
	starts := make([]wire.StartPos, 0, len(parts))
	for _, p := range parts {
		pi := t.Partitions[p]
		if consumer != "" {
			off, ok, err := b.Cursor(consumer, topic, p)
			if err != nil {
				return nil, err
			}
			if ok {
				starts = append(starts, wire.StartPos{Partition: p, From: max(off, pi.LogStart)})
				continue
			}
		}
		var off int64
		switch from.Kind {
		case wire.FromEarliest:
			off = pi.LogStart
		case wire.FromLatest:
			off = pi.HWM
		case wire.FromOffset:
			if len(parts) > 1 && from.N > pi.LEO {
				// N over a whole topic is N on each partition: one
				// that ends before N starts where latest does, as a
				// Kafka consumer seeking past its end does with
				// auto.offset.reset=latest.
				off = pi.HWM
				break
			}
			if from.N < pi.LogStart || from.N > pi.LEO {
				return nil, wire.Errorf(wire.CodeOffsetOutOfRange, "offset %d of %s/%d: the log holds [%d, %d)", from.N, topic, p, pi.LogStart, pi.LEO)
			}
			off = from.N
		case wire.FromTimestamp:
			off, err = b.OffsetForTimestamp(topic, p, from.N)
			if errors.Is(err, engine.ErrOffsetOutOfRange) {
				off, err = pi.HWM, nil // no record that recent yet: wait for the next
			}
			if err != nil {
				return nil, err
			}
		}
		starts = append(starts, wire.StartPos{Partition: p, From: off})
	}
	return starts, nil
}

func (c *conn) addSub(topic, consumer string, plain bool) (*subscription, *wire.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.subRoomLocked(); e != nil {
		return nil, e
	}
	c.nextSub++
	s := &subscription{c: c, id: c.nextSub, topic: topic, consumer: consumer, plain: plain}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	c.subs[s.id] = s
	return s, nil
}

// subRoom refuses a new subscription when the connection is draining or
// has maxSubscriptions already.
func (c *conn) subRoom() *wire.Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subRoomLocked()
}

// subRoomLocked is subRoom with c.mu held.
func (c *conn) subRoomLocked() *wire.Error {
	if c.draining {
		return wire.Errorf(wire.CodeShuttingDown, "server shutting down: subscribe refused")
	}
	if len(c.subs) >= maxSubscriptions {
		return wire.Errorf(wire.CodeRateLimited, "%d subscriptions on this connection (limit %d): unsubscribe one first", len(c.subs), maxSubscriptions)
	}
	return nil
}

func (c *conn) sub(id int64) *subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subs[id]
}

func (c *conn) subCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// stopSubs ends every subscription and waits for their goroutines.
func (c *conn) stopSubs() {
	c.mu.Lock()
	subs := c.subs
	c.subs = make(map[int64]*subscription)
	c.mu.Unlock()
	for _, s := range subs {
		s.stop()
	}
}

func (c *conn) opUnsubscribe(req *request) {
	if req.Sub == 0 { // subscriptions are numbered from 1
		c.reply(req.ID, nil, wire.Errorf(wire.CodeInvalidRequest, `unsubscribe needs "sub" (the number a subscribe replied with)`))
		return
	}
	c.mu.Lock()
	s := c.subs[req.Sub]
	delete(c.subs, req.Sub)
	c.mu.Unlock()
	if s == nil {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeUnknownSubscription, "no subscription %d on this connection", req.Sub))
		return
	}
	s.stop()
	c.reply(req.ID, nil, nil)
}

// join counts s among the subscriptions delivering the partitions of
// starts (pushCache.join); each delivery goroutine leaves when it ends. A
// subscribe joins before it replies, so that a client that subscribed
// knows later subscribers share its pushes.
func (s *subscription) join(starts []wire.StartPos) {
	if s.plain {
		return
	}
	for _, st := range starts {
		s.c.srv.pushes.join(s.topic, st.Partition)
	}
}

// start joins and launches the partitions of starts.
func (s *subscription) start(starts []wire.StartPos) {
	s.join(starts)
	s.launch(starts)
}

// launch starts one delivery goroutine per partition of starts, joined
// already, labelled for CPU profiles with the push format (go tool pprof
// -tagfocus push=binary). A subscription stopped already (its connection
// ended while it was being made) starts none, and leaves the partitions.
func (s *subscription) launch(starts []wire.StartPos) {
	if !s.hold() {
		if !s.plain {
			for _, st := range starts {
				s.c.srv.pushes.leave(s.topic, st.Partition)
			}
		}
		return
	}
	defer s.wg.Done()
	format := wire.FormatJSON
	if s.binary {
		format = wire.FormatBinary
	}
	for _, st := range starts {
		s.wg.Add(1)
		go pprof.Do(s.ctx, pprof.Labels("push", format), func(context.Context) { s.run(st.Partition, st.From) })
	}
}

// hold adds one to s.wg unless s is stopped, and reports whether it did:
// while held, the caller may add goroutines to s.wg (its count is above
// zero, so stop's Wait is not racing a first Add).
func (s *subscription) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *subscription) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// pushReserve is the room a subscription reserves in the connection's
// SendBytes before one read: the JSON bound of a push (twice the record
// bytes read), at most half the budget so that two pushes can be on their
// way.
func (s *subscription) pushReserve() int64 {
	o := s.c.srv.opts
	return min(2*int64(o.PushBytes), o.SendBytes/2)
}

// run delivers one partition from offset next, in offset order: take the
// notify channel, reserve room for a push, read, deliver or park until the
// HWM moves. Nothing is read before there is room for it, so a client that
// does not read leaves its backlog on disk.
func (s *subscription) run(p int, next int64) {
	defer s.wg.Done()
	if !s.plain {
		defer s.c.srv.pushes.leave(s.topic, p) // joined in join
	}
	b, o := s.c.srv.b, s.c.srv.opts
	want := s.pushReserve()
	for {
		ch, err := b.NotifyC(s.topic, p)
		if err != nil {
			s.fail(p, err)
			return
		}
		if !s.c.reserve(s.ctx, want) {
			return
		}
		res, err := b.Read(s.topic, p, next, o.PushRecords, int(want/2))
		if err != nil || len(res.Records) == 0 {
			s.c.release(want)
		}
		if errors.Is(err, engine.ErrOffsetOutOfRange) {
			// Retention removed what we were about to read: go on from
			// the log start, the long-poll loop's rule (engine.LongPoll).
			if start, ok := engine.RetentionReset(b, s.topic, p, next); ok {
				next = start
				continue
			}
		}
		if err != nil {
			s.fail(p, err)
			return
		}
		if len(res.Records) > 0 {
			n, ok := s.deliver(p, &res, want)
			if !ok {
				return
			}
			next = n
			continue
		}
		if res.Next > next {
			// Nothing readable from next up to res.Next (a corrupt
			// range, or a gap recovery recorded): a push of no records
			// tells the consumer where it stands.
			if !s.plain && !s.deliverEmpty(p, res.Next, res.Skipped) {
				return
			}
			next = res.Next
			continue
		}
		select {
		case <-ch:
		case <-s.ctx.Done():
			return
		}
	}
}

// deliver queues one read's records, for which reserved bytes were
// reserved: one push {"sub","partition","next","records"} on /v1/ws, one
// frame per record on the tail endpoint. A push stops at about reserved
// bytes of JSON (values that need escaping grow), so that what the
// connection holds stays within its budget; it returns the offset to read
// next.
func (s *subscription) deliver(p int, res *engine.ReadResult, reserved int64) (int64, bool) {
	if s.plain {
		frames := make([][]byte, 0, len(res.Records))
		var n int64
		next := res.Next
		for i := range res.Records {
			if i > 0 && n >= reserved {
				next = res.Records[i].Offset
				break
			}
			f := wire.AppendRecordJSON(nil, p, &res.Records[i])
			frames = append(frames, f)
			n += int64(len(f))
		}
		s.c.settle(reserved, n)
		for i, f := range frames {
			if !s.c.enqueueReserved(s.ctx, outMsg{b: f}) {
				for _, g := range frames[i+1:] {
					s.c.release(int64(len(g)))
				}
				return 0, false
			}
		}
		return next, true
	}
	if s.binary {
		return s.deliverBinaryPush(p, res, int(reserved))
	}
	return s.deliverPush(p, res, int(reserved))
}

// deliverEmpty queues a push of no records whose next is next: JSON
// (with an empty value_lens when asked for) or binary (count 0, its
// offset next).
func (s *subscription) deliverEmpty(p int, next, skipped int64) bool {
	var b []byte
	if s.binary {
		b = wire.AppendPushHeader(nil, &wire.BinaryPush{Sub: s.id, Partition: p, Offset: next, Next: next, Skipped: skipped})
	} else {
		var lens []int32
		if s.lens {
			lens = []int32{}
		}
		b = wire.AppendJSONPushTail(wire.AppendJSONPushHead(nil, s.id, p, next, skipped), lens)
	}
	if !s.c.reserve(s.ctx, int64(len(b))) {
		return false
	}
	return s.c.enqueueReserved(s.ctx, outMsg{b: b, binary: s.binary})
}

// pushHeadRoom is room for a push's envelope before its records
// (wire.AppendJSONPushHead).
const pushHeadRoom = wire.MaxJSONPushHeadLen

// deliverPush queues one JSON push of res's records
// (wire.AppendJSONPushHead, the records, wire.AppendJSONPushTail), cut at
// about limit bytes of records JSON (pushRecords).
func (s *subscription) deliverPush(p int, res *engine.ReadResult, limit int) (int64, bool) {
	recs := res.Records
	est := pushHeadRoom + 2
	for i := range recs {
		if est-pushHeadRoom >= limit {
			break
		}
		est += len(recs[i].Key) + len(recs[i].Value) + 96 + 8 // 8: its value_lens entry
	}
	b, n, lens, cached := s.pushRecords(p, recs, false, pushHeadRoom, est, limit, func(b []byte, r *engine.Record, later bool) ([]byte, int) {
		if later {
			b = append(b, ',')
		}
		return wire.AppendRecordJSONLen(b, p, r)
	})
	next := res.Next
	if n < len(recs) {
		next = recs[n].Offset
	}
	var hb [pushHeadRoom]byte
	h := wire.AppendJSONPushHead(hb[:0], s.id, p, next, res.SkippedBelow(next))
	start := pushHeadRoom - len(h)
	copy(b[start:], h)
	if !s.lens {
		lens = nil // kept for the cache only
	}
	b = wire.AppendJSONPushTail(b[start:], lens)
	s.c.settle(int64(limit), int64(len(b)))
	return next, s.c.enqueueReserved(s.ctx, outMsg{b: b, pooled: !cached})
}

// pushRecords builds the records of one push of recs, after headRoom
// bytes left for its envelope, in a buffer for about est bytes: up to about
// limit bytes of records, at least one. Records the server's pushCache
// holds in this format (another subscription pushed them) are copied from
// it; the others are encoded by enc (later: a record precedes it in the
// push), which also returns the record's value length for a JSON push's
// value_lens (wire.AppendJSONPushTail), straight into the buffer and, when
// other subscriptions deliver the partition too, the run is cached for
// them. It returns the buffer, the records in it, their value lengths
// (JSON pushes only, and only when s asked for value_lens or the run is
// shared), and whether the pushCache now holds the buffer (it
// must then not be recycled).
func (s *subscription) pushRecords(p int, recs []engine.Record, binary bool, headRoom, est, limit int, enc func(b []byte, r *engine.Record, later bool) ([]byte, int)) ([]byte, int, []int32, bool) {
	pc := s.c.srv.pushes
	shared, cached, k := pc.lookup(s.topic, p, binary, recs)
	b := getPushBuf(est)[:headRoom]
	n := 0         // records in the push
	var ends []int // record ends, for the cache
	// value_lens, for a JSON push that ends with it or a run the cache
	// keeps for subscriptions that may.
	keepLens := !binary && (s.lens || shared)
	var lens []int32
	if keepLens {
		lens = make([]int32, 0, len(recs))
	}
	if k > 0 {
		n = 1
		for n < k && cached.ends[n-1] < limit {
			n++
		}
		b = append(b, cached.data[:cached.ends[n-1]]...)
		if keepLens {
			lens = append(lens, cached.lens[:n]...)
		}
	}
	fromCache := n
	if n < len(recs) && (n == 0 || len(b)-headRoom < limit) {
		if shared {
			ends = make([]int, 0, len(recs))
			if n > 0 {
				ends = append(ends, cached.ends[:n]...)
			}
		}
		for ; n < len(recs); n++ {
			if n > 0 && len(b)-headRoom >= limit {
				break
			}
			var vlen int
			b, vlen = enc(b, &recs[n], n > 0)
			if keepLens {
				lens = append(lens, int32(vlen))
			}
			if shared {
				ends = append(ends, len(b)-headRoom)
			}
		}
	}
	pc.encoded.Add(int64(n - fromCache))
	if ends != nil {
		pc.store(s.topic, p, binary, &encodedRun{recs: recs[:n:n], ends: ends, lens: lens[:len(lens):len(lens)], data: b[headRoom:len(b):len(b)]})
	}
	return b, n, lens, ends != nil
}

// fail reports an error that ends the delivery of partition p.
func (s *subscription) fail(p int, err error) {
	if s.ctx.Err() != nil {
		return
	}
	e := toError(err)
	if s.plain {
		s.c.refuse(e)
		return
	}
	b := fmt.Appendf(nil, `{"sub":%d,"partition":%d,`, s.id, p)
	b = wire.AppendErrorField(b, e)
	b = append(b, '}')
	s.c.enqueueCtx(s.ctx, b)
}
