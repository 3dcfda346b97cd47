package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers every mirrored record carries, so that a record on the cluster
// names the local record it copies, and a restarted mirror finds where it
// stopped even when its last cursor commit was lost.
const (
	HeaderMirrorPartition = "pulse-mirror-partition"
	HeaderMirrorOffset    = "pulse-mirror-offset"
)

// MirrorSource is the local side of a mirror: the engine facade's reads
// and cursors (*engine.Engine).
type MirrorSource interface {
	Describe(name string) (engine.TopicInfo, error)
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
	NotifyC(topic string, partition int) (<-chan struct{}, error)
	CommitCursor(consumer, topic string, partition int, offset int64) error
	Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error)
}

// MirrorOptions say what to mirror where.
type MirrorOptions struct {
	Topic   string // local topic
	ToTopic string // cluster topic; default Topic
	// From is where a partition without a cursor starts: "earliest"
	// (default) or "latest".
	From string
	// Cursor names the local consumer cursor the mirror commits after each
	// acked batch; default "mirror." + ToTopic (a consumer name: 1–249 bytes without '/' or NUL).
	Cursor string
	// BatchRecords is the most records produced per round trip; default 1000.
	BatchRecords int
	// Progress, when set, is called after each batch with the state.
	Progress func(MirrorStatus)
	// Started, when set, is called once: after both topics are found (the
	// cluster's created if needed) and every partition's resume point,
	// before anything is copied.
	Started func(MirrorStatus)
}

// MirrorStatus is a mirror's position.
type MirrorStatus struct {
	Partitions []MirrorPartition
	// Waiting says why the mirror waits while the cluster, or some of
	// its brokers, cannot be reached (Source.Unreachable); nil otherwise.
	// A produce the cluster refuses and the Kafka client retries (a
	// broker whose disk is full answers KAFKA_STORAGE_ERROR) makes the
	// mirror wait too, but the client does not report it.
	Waiting error
}

// Lag sums the partitions' lag.
func (s MirrorStatus) Lag() int64 {
	var n int64
	for _, p := range s.Partitions {
		n += p.Lag
	}
	return n
}

// MirrorPartition is one partition of a mirror.
type MirrorPartition struct {
	Partition int
	Next      int64 // next local offset to copy
	HWM       int64 // local high watermark at the last read
	Lag       int64 // HWM − Next
	Copied    int64 // records copied by this run
	Resumed   int64 // offset this run started at
}

// Mirror copies the local topic of src (the engine, which the caller
// opened on the data dir) to the cluster, partition p to partition p in
// offset order, until ctx ends (then it returns nil). Each record keeps
// its key, value, headers and timestamp and gains the two mirror headers.
// A partition resumes from the later of the committed cursor and the
// record after the last one the cluster partition already holds from this
// mirror; records produced but not committed before a crash are therefore
// not copied twice unless the cluster partition has other writers.
func Mirror(ctx context.Context, src MirrorSource, dst *Source, o MirrorOptions) error {
	return mirror(ctx, engineLocal{src}, dst, o)
}

// MirrorFromServer is Mirror reading the local topic through the websocket
// API of a running Pulse instead of opening its data dir: the cursor is
// committed over the API, so the UI of that Pulse shows the mirror as a
// consumer with its lag while it runs. ctl and stream are two connections
// to that Pulse: stream carries the subscriptions the records arrive on,
// ctl the describes, cursor look-ups and commits. On one connection a
// commit's reply would queue behind pushes the mirror has not read yet
// (the client hands them over in order), and a mirror waiting for its
// commit while a partition's pushes fill up would stop for good.
func MirrorFromServer(ctx context.Context, ctl, stream *wsclient.Client, dst *Source, o MirrorOptions) error {
	return mirror(ctx, wsLocal{c: ctl, pushes: stream}, dst, o)
}

// mirrorLocal is the local side of a mirror: the engine, or a running
// Pulse's websocket API.
type mirrorLocal interface {
	partitions(ctx context.Context, topic string) ([]engine.PartitionInfo, error)
	// cursor returns the committed cursor, ok false when there is none.
	cursor(ctx context.Context, name, topic string, p int) (int64, bool, error)
	commit(ctx context.Context, name, topic string, p int, off int64) error
	// stream hands the records of partition p from offset from to fn, in
	// offset order, batch by batch, until ctx ends or fn fails. hwm is the
	// partition's high watermark at the read, -1 when unknown.
	stream(ctx context.Context, topic string, p int, from int64, batch int, fn func(recs []engine.Record, next, hwm int64) error) error
	// notCluster returns ErrMirrorSelf when dst is this local side's own
	// Kafka listener (then a cluster topic of the local topic's name is
	// the local topic itself).
	notCluster(ctx context.Context, dst *Source, topic string) error
}

// mirrorHWMEvery is how often a mirror refreshes the local HWMs its lag
// is computed from, besides what its reads report, looks for partitions
// the local topic gained, and checks that the cluster topic is still the
// one it started on.
const mirrorHWMEvery = time.Second

func mirror(ctx context.Context, local mirrorLocal, dst *Source, o MirrorOptions) error {
	if o.ToTopic == "" {
		o.ToTopic = o.Topic
	}
	if o.Cursor == "" {
		o.Cursor = "mirror." + o.ToTopic
	}
	if o.BatchRecords <= 0 {
		o.BatchRecords = 1000
	}
	switch o.From {
	case "", "earliest", "latest":
	default:
		return fmt.Errorf("mirror: --from %q: want earliest or latest", o.From)
	}
	parts, err := local.partitions(ctx, o.Topic)
	if err != nil {
		return fmt.Errorf("mirror: local topic %q: %w", o.Topic, err)
	}
	n := len(parts)
	dn, err := dst.partitions(o.ToTopic)
	if errors.Is(err, engine.ErrTopicNotFound) {
		err = dst.CreateTopic(o.ToTopic, engine.TopicConfig{Partitions: n})
		if err == nil || errors.Is(err, engine.ErrTopicExists) {
			dn, err = dst.partitions(o.ToTopic)
		}
	}
	if err != nil {
		return fmt.Errorf("mirror: cluster topic %q: %w", o.ToTopic, err)
	}
	if dn < n {
		return fmt.Errorf("mirror: %w: %q has %d, %q has %d", ErrMirrorPartitions, o.ToTopic, dn, o.Topic, n)
	}
	cs, err := dst.topicState(ctx, o.ToTopic)
	if err != nil {
		return fmt.Errorf("mirror: cluster topic %q: %w", o.ToTopic, err)
	}
	if o.ToTopic == o.Topic {
		if err := local.notCluster(ctx, dst, o.Topic); err != nil {
			return err
		}
	}

	m := &mirrorRun{local: local, dst: dst, o: o, id: cs.id}
	starts := make([]resume, n)
	for p := range n {
		if starts[p], err = resumePoint(ctx, local, dst, o, o.From, parts[p]); err != nil {
			return err
		}
		m.st.Partitions = append(m.st.Partitions, MirrorPartition{Partition: p, Next: starts[p].next, Resumed: starts[p].next, HWM: parts[p].HWM, Lag: max(0, parts[p].HWM-starts[p].next)})
	}
	if o.Started != nil {
		o.Started(m.snapshot())
	}
	m.publish()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.cancel = cancel
	for p := range n {
		m.startPartition(ctx, p, starts[p])
	}
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		m.watch(ctx)
	}()
	go func() {
		defer m.wg.Done()
		m.watchCluster(ctx)
	}()
	m.wg.Wait()
	return m.err // nil when every partition stopped on ctx
}

// mirrorRun is one run of a mirror: its position, its partitions'
// goroutines and its first error.
type mirrorRun struct {
	local  mirrorLocal
	dst    *Source
	o      MirrorOptions
	id     [16]byte // the cluster topic's id at the start (zero: no ids)
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex // guards st and err
	st   MirrorStatus
	err  error
	once sync.Once
}

func (m *mirrorRun) snapshot() MirrorStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MirrorStatus{Partitions: append([]MirrorPartition(nil), m.st.Partitions...), Waiting: m.st.Waiting}
}

func (m *mirrorRun) publish() {
	if m.o.Progress != nil {
		m.o.Progress(m.snapshot())
	}
}

// fail ends the run with err, the first one only.
func (m *mirrorRun) fail(err error) {
	m.once.Do(func() {
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		m.cancel()
	})
}

func (m *mirrorRun) report(p int, next, hwm int64, copied int) {
	m.mu.Lock()
	mp := &m.st.Partitions[p]
	mp.Next = next
	mp.HWM = max(mp.HWM, hwm, next)
	mp.Lag = mp.HWM - next
	mp.Copied += int64(copied)
	m.mu.Unlock()
	m.publish()
}

// startPartition copies partition p from its resume point until ctx ends.
func (m *mirrorRun) startPartition(ctx context.Context, p int, from resume) {
	o := m.o
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		// written is the last cluster offset this mirror wrote to the
		// partition (or found there): the cluster's offsets only grow
		// while the topic is the same.
		written := from.clusterEnd - 1
		err := m.local.stream(ctx, o.Topic, p, from.next, o.BatchRecords, func(recs []engine.Record, next, hwm int64) error {
			if len(recs) > 0 {
				first, last, err := produceMirrored(ctx, m.dst, o.ToTopic, p, recs)
				if err != nil {
					if gone := m.clusterGone(ctx, p, written); gone != nil {
						return gone
					}
					return err
				}
				if first <= written {
					if gone := m.clusterGone(ctx, p, written); gone != nil {
						return gone
					}
					return fmt.Errorf("%w: %q partition %d took records at offset %d, after the mirror wrote offset %d: the topic was deleted and created again", ErrMirrorTopicGone, o.ToTopic, p, first, written)
				}
				written = last
				if err := m.local.commit(ctx, o.Cursor, o.Topic, p, next); err != nil {
					return fmt.Errorf("commit cursor: %w", err)
				}
			}
			m.report(p, next, hwm, len(recs))
			return nil
		})
		if err != nil && ctx.Err() == nil {
			m.fail(fmt.Errorf("mirror %s/%d: %w", o.Topic, p, err))
		}
	}()
}

// clusterGone returns ErrMirrorTopicGone, saying what happened, when the
// cluster topic is no longer the one the mirror started on: deleted,
// created again (a new id, or partition p ending before the offset the
// mirror wrote there last), or shrunk below the local partitions. It
// returns nil when it is the same topic, or when the cluster cannot tell.
func (m *mirrorRun) clusterGone(ctx context.Context, p int, written int64) error {
	cs, err := m.dst.topicState(ctx, m.o.ToTopic)
	if errors.Is(err, engine.ErrTopicNotFound) {
		return fmt.Errorf("%w: %q was deleted", ErrMirrorTopicGone, m.o.ToTopic)
	}
	if err != nil || ctx.Err() != nil {
		return nil
	}
	if m.id != ([16]byte{}) && cs.id != m.id {
		return fmt.Errorf("%w: %q was deleted and created again", ErrMirrorTopicGone, m.o.ToTopic)
	}
	m.mu.Lock()
	n := len(m.st.Partitions)
	m.mu.Unlock()
	if cs.partitions < max(n, p+1) {
		return fmt.Errorf("%w: %q has %d partitions now: it was deleted and created again", ErrMirrorTopicGone, m.o.ToTopic, cs.partitions)
	}
	if written >= 0 {
		if _, end, err := m.dst.offsets(m.o.ToTopic, p); err == nil && end <= written {
			return fmt.Errorf("%w: %q partition %d ends at %d, before offset %d the mirror wrote: it was deleted and created again", ErrMirrorTopicGone, m.o.ToTopic, p, end, written)
		}
	}
	return nil
}

// every runs tick once every mirrorHWMEvery until ctx ends or tick
// returns false.
func every(ctx context.Context, tick func() bool) {
	t := time.NewTicker(mirrorHWMEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !tick() {
			return
		}
	}
}

// watch keeps the status's Waiting current, refreshes the local HWMs
// (a caught-up stream waits, so its reads report none) and starts the
// partitions the local topic gained, growing the cluster topic to match.
func (m *mirrorRun) watch(ctx context.Context) {
	every(ctx, func() bool {
		un := m.dst.Unreachable()
		m.mu.Lock()
		m.st.Waiting = un
		m.mu.Unlock()
		ps, err := m.local.partitions(ctx, m.o.Topic)
		if err != nil {
			m.publish()
			return true
		}
		m.mu.Lock()
		n := len(m.st.Partitions)
		for _, pi := range ps {
			if pi.Partition < n {
				mp := &m.st.Partitions[pi.Partition]
				mp.HWM = max(mp.HWM, pi.HWM)
				mp.Lag = mp.HWM - mp.Next
			}
		}
		m.mu.Unlock()
		if len(ps) > n {
			// While the cluster is away, grow at a later tick.
			if err := m.grow(ctx, ps[n:]); err != nil && m.dst.Unreachable() == nil {
				m.fail(err)
				return false
			}
		}
		m.publish()
		return true
	})
}

// watchCluster ends the run when the cluster topic is gone. Its check can
// wait for the cluster, so it runs beside watch.
func (m *mirrorRun) watchCluster(ctx context.Context) {
	every(ctx, func() bool {
		if m.dst.Unreachable() != nil {
			return true
		}
		if err := m.clusterGone(ctx, 0, -1); err != nil {
			m.fail(fmt.Errorf("mirror: %w", err))
			return false
		}
		return true
	})
}

// grow starts the partitions the local topic gained while the mirror ran,
// from their log start (every record on them came after the mirror
// started), after growing the cluster topic to the local count if it has
// fewer.
func (m *mirrorRun) grow(ctx context.Context, added []engine.PartitionInfo) error {
	total := added[len(added)-1].Partition + 1
	cs, err := m.dst.topicState(ctx, m.o.ToTopic)
	if err != nil {
		return fmt.Errorf("mirror: cluster topic %q: %w", m.o.ToTopic, err)
	}
	if cs.partitions < total {
		if err := m.dst.growPartitions(m.o.ToTopic, total); err != nil {
			return fmt.Errorf("mirror: the local topic %q grew to %d partitions: %w", m.o.Topic, total, err)
		}
	}
	for _, pi := range added {
		from, err := resumePoint(ctx, m.local, m.dst, m.o, "earliest", pi)
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.st.Partitions = append(m.st.Partitions, MirrorPartition{Partition: pi.Partition, Next: from.next, Resumed: from.next, HWM: pi.HWM, Lag: max(0, pi.HWM-from.next)})
		m.mu.Unlock()
		m.startPartition(ctx, pi.Partition, from)
	}
	return nil
}

// resume is where a partition's copy starts: the next local offset, and
// the cluster partition's end offset then.
type resume struct {
	next       int64
	clusterEnd int64
}

// resumePoint is where partition p starts: the cursor, or from (earliest
// or latest), moved past what the cluster partition already holds from
// this mirror.
func resumePoint(ctx context.Context, local mirrorLocal, dst *Source, o MirrorOptions, from string, pi engine.PartitionInfo) (resume, error) {
	p := pi.Partition
	start := pi.LogStart
	if from == "latest" {
		start = pi.HWM
	}
	cur, ok, err := local.cursor(ctx, o.Cursor, o.Topic, p)
	if err != nil {
		return resume{}, fmt.Errorf("mirror: cursor: %w", err)
	}
	if ok {
		start = cur
	}
	_, hwm, err := dst.offsets(o.ToTopic, p)
	if err != nil {
		return resume{}, fmt.Errorf("mirror: %w", err)
	}
	if hwm > 0 {
		res, err := dst.Read(o.ToTopic, p, hwm-1, 1, 1<<20)
		if err != nil && !errors.Is(err, engine.ErrOffsetOutOfRange) {
			return resume{}, fmt.Errorf("mirror: last record of %s/%d: %w", o.ToTopic, p, err)
		}
		for _, r := range res.Records {
			if off, ok := mirroredOffset(r, p); ok && off+1 > start {
				start = off + 1
			}
		}
	}
	return resume{next: max(start, pi.LogStart), clusterEnd: hwm}, nil
}

// mirrorHeaders are the headers a mirrored copy of local record p/off
// carries; mirroredOffset reads them back.
func mirrorHeaders(p int, off int64) []engine.Header {
	return []engine.Header{
		{Key: HeaderMirrorPartition, Value: []byte(strconv.Itoa(p))},
		{Key: HeaderMirrorOffset, Value: []byte(strconv.FormatInt(off, 10))},
	}
}

// mirroredOffset reads the mirror headers of r: the local offset it copies
// when it copies partition p.
func mirroredOffset(r engine.Record, p int) (int64, bool) {
	var part, off string
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderMirrorPartition:
			part = string(h.Value)
		case HeaderMirrorOffset:
			off = string(h.Value)
		}
	}
	if part != strconv.Itoa(p) {
		return 0, false
	}
	n, err := strconv.ParseInt(off, 10, 64)
	return n, err == nil
}

// engineLocal is the engine as the local side of a mirror.
type engineLocal struct{ src MirrorSource }

func (l engineLocal) partitions(_ context.Context, topic string) ([]engine.PartitionInfo, error) {
	info, err := l.src.Describe(topic)
	return info.Partitions, err
}

func (l engineLocal) cursor(_ context.Context, name, topic string, p int) (int64, bool, error) {
	return l.src.Cursor(name, topic, p)
}

func (l engineLocal) commit(_ context.Context, name, topic string, p int, off int64) error {
	return l.src.CommitCursor(name, topic, p, off)
}

func (l engineLocal) stream(ctx context.Context, topic string, p int, next int64, batch int, fn func([]engine.Record, int64, int64) error) error {
	for ctx.Err() == nil {
		ch, err := l.src.NotifyC(topic, p)
		if err != nil {
			return err
		}
		res, err := l.src.Read(topic, p, next, batch, 4<<20)
		if errors.Is(err, engine.ErrOffsetOutOfRange) {
			// Retention removed what was to be copied: go on from the log
			// start (the gap is the local log's, reported by its lag).
			info, derr := l.src.Describe(topic)
			if derr == nil && p < len(info.Partitions) && next < info.Partitions[p].LogStart {
				next = info.Partitions[p].LogStart
				continue
			}
		}
		if err != nil {
			return err
		}
		if len(res.Records) == 0 {
			if res.Next > next {
				next = res.Next
				continue
			}
			if err := fn(nil, next, res.HWM); err != nil {
				return err
			}
			select {
			case <-ch:
			case <-ctx.Done():
			}
			continue
		}
		if err := fn(res.Records, res.Next, res.HWM); err != nil {
			return err
		}
		next = res.Next
	}
	return nil
}

// notCluster: the data dir is the mirror's alone (the engine holds its
// lock), so no broker serves it.
func (engineLocal) notCluster(context.Context, *Source, string) error { return nil }

// wsLocal is a running Pulse's websocket API as the local side of a
// mirror: c for requests, pushes for the subscriptions of stream (see
// MirrorFromServer).
type wsLocal struct{ c, pushes *wsclient.Client }

func (l wsLocal) partitions(ctx context.Context, topic string) ([]engine.PartitionInfo, error) {
	t, err := l.c.Describe(ctx, topic)
	return t.Partitions, err
}

// cursor finds the consumer's committed cursor through subscribe, which
// resumes from it: from earliest and from latest both start at the cursor
// when there is one (when there is none and the partition is empty, both
// start at the same offset too, which is then the right start anyway).
func (l wsLocal) cursor(ctx context.Context, name, topic string, p int) (int64, bool, error) {
	var at [2]int64
	for i, from := range []string{"earliest", "latest"} {
		sub, err := l.c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: p, From: from, Consumer: name, Buffer: 1})
		if err != nil {
			return 0, false, err
		}
		if len(sub.Starts) != 1 {
			sub.Unsubscribe(ctx)
			return 0, false, fmt.Errorf("subscribe %s/%d: %d start positions", topic, p, len(sub.Starts))
		}
		at[i] = sub.Starts[0].From
		if err := sub.Unsubscribe(ctx); err != nil {
			return 0, false, err
		}
	}
	return at[0], at[0] == at[1], nil
}

// notCluster asks whether dst is the Kafka listener of the Pulse l talks
// to: it commits a cursor of a consumer of a random name on partition 0
// through the websocket API, asks the cluster for that Kafka group's
// committed offset (on Pulse's listener a group's offsets are the cursors
// of the consumer of its name, docs/kafka.md), and deletes the cursor
// again.
func (l wsLocal) notCluster(ctx context.Context, dst *Source, topic string) error {
	var b [8]byte
	rand.Read(b[:])
	probe := fmt.Sprintf("mirror.probe.%x", b)
	if err := l.c.Commit(ctx, probe, topic, 0, 0); err != nil {
		return fmt.Errorf("mirror: checking that the cluster is not the local pulse: commit cursor %s: %w", probe, err)
	}
	// A cluster that will not say (a Kafka cluster whose ACLs keep the
	// mirror from its groups) is not Pulse's listener, which always does.
	_, seen, _ := dst.Cursor(probe, topic, 0)
	if _, err := l.c.DeleteConsumer(ctx, probe, topic, false); err != nil {
		return fmt.Errorf("mirror: checking that the cluster is not the local pulse: delete cursor %s: %w", probe, err)
	}
	if seen {
		return fmt.Errorf("mirror: %w: %s is the Kafka listener of the pulse at %s, and copying %q into itself would never end: name another cluster topic with --to-topic", ErrMirrorSelf, strings.Join(dst.Brokers(), ","), l.c.Addr(), topic)
	}
	return nil
}

func (l wsLocal) commit(ctx context.Context, name, topic string, p int, off int64) error {
	return l.c.Commit(ctx, name, topic, p, off)
}

// stream hands fn the records of each push in batches of at most batch
// records (a push may hold up to 500): the next offset of a batch is the
// one after its last record, of the last batch the push's next.
func (l wsLocal) stream(ctx context.Context, topic string, p int, from int64, batch int, fn func([]engine.Record, int64, int64) error) error {
	if batch < 1 {
		batch = int(^uint(0) >> 1) // no limit but the push's
	}
	sub, err := l.pushes.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: p, From: strconv.FormatInt(from, 10)})
	if err != nil {
		return err
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		sub.Unsubscribe(uctx)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case push, ok := <-sub.C():
			if !ok {
				return fmt.Errorf("subscription ended: %w", sub.Err())
			}
			if push.Err != nil {
				return push.Err
			}
			recs := make([]engine.Record, len(push.Records))
			for i, r := range push.Records {
				recs[i] = engine.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers}
			}
			for len(recs) > batch {
				if err := fn(recs[:batch], recs[batch-1].Offset+1, -1); err != nil {
					return err
				}
				recs = recs[batch:]
			}
			if err := fn(recs, push.Next, -1); err != nil {
				return err
			}
		}
	}
}

// produceMirrored produces recs, in order, to partition p of topic with
// acks=all, and returns when all are acked, with the cluster offsets of
// the first and the last.
func produceMirrored(ctx context.Context, dst *Source, topic string, p int, recs []engine.Record) (first, last int64, err error) {
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		kr := &kgo.Record{Topic: topic, Partition: int32(p), Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		for _, h := range mirrorHeaders(p, r.Offset) {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		krs[i] = kr
	}
	// Not ProduceSync: it waits for the acks even after ctx ends, and
	// while the cluster is away that is for good. A mirror stopped
	// meanwhile leaves the batch to the client, which fails it when the
	// Source closes; the restarted mirror resumes past whatever of it the
	// cluster holds.
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed error
	)
	wg.Add(len(krs))
	for _, kr := range krs {
		dst.cl.Produce(ctx, kr, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if failed == nil {
					failed = err
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	acked := make(chan struct{})
	go func() {
		wg.Wait()
		close(acked)
	}()
	select {
	case <-acked:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	if failed != nil {
		return 0, 0, mapErr(fmt.Sprintf("produce to %s/%d", topic, p), failed)
	}
	return krs[0].Offset, krs[len(krs)-1].Offset, nil
}
