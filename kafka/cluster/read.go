package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// readWait bounds one Read that has records below the HWM to fetch: a
	// Kafka fetch normally answers at once; a Read that got nothing by then
	// returns no records (control records of transactions fill offsets a
	// consumer never sees).
	readWait = 5 * time.Second
	// readerIdle is how long an unused reader is kept for the next Read
	// that continues where it ended.
	readerIdle = 30 * time.Second
	// maxIdleReaders caps the pool; the least recently used goes first.
	maxIdleReaders = 64
)

type tpKey struct {
	topic string
	p     int
}

type readerKey struct {
	tp   tpKey
	next int64
}

// reader is a kgo consumer assigned one partition, with the records it
// polled and not yet returned. Only the Read holding it uses it.
type reader struct {
	cl       *kgo.Client
	buf      []*kgo.Record
	hwm      int64 // from the last fetch response
	logStart int64
	used     time.Time
}

// readerPool keeps the readers between Reads, keyed by the offset the next
// Read must ask for.
type readerPool struct {
	s    *Source
	mu   sync.Mutex // guards idle
	idle map[readerKey]*reader
	stop chan struct{}
	done chan struct{}
}

func newReaderPool(s *Source) *readerPool {
	rp := &readerPool{s: s, idle: map[readerKey]*reader{}, stop: make(chan struct{}), done: make(chan struct{})}
	go rp.janitor()
	return rp
}

func (rp *readerPool) janitor() {
	defer close(rp.done)
	t := time.NewTicker(readerIdle / 3)
	defer t.Stop()
	for {
		select {
		case <-rp.stop:
			return
		case now := <-t.C:
			rp.mu.Lock()
			var old []*reader
			for k, r := range rp.idle {
				if now.Sub(r.used) > readerIdle {
					old = append(old, r)
					delete(rp.idle, k)
				}
			}
			rp.mu.Unlock()
			for _, r := range old {
				r.cl.Close()
			}
		}
	}
}

func (rp *readerPool) close() {
	close(rp.stop)
	<-rp.done
	rp.mu.Lock()
	idle := rp.idle
	rp.idle = map[readerKey]*reader{}
	rp.mu.Unlock()
	for _, r := range idle {
		r.cl.Close()
	}
}

// take returns the idle reader ending at k.next, or nil.
func (rp *readerPool) take(k readerKey) *reader {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	r := rp.idle[k]
	delete(rp.idle, k)
	return r
}

// put keeps r for the next Read from k.next.
func (rp *readerPool) put(k readerKey, r *reader) {
	r.used = time.Now()
	rp.mu.Lock()
	var evict []*reader
	if old := rp.idle[k]; old != nil {
		evict = append(evict, old)
	}
	rp.idle[k] = r
	for len(rp.idle) > maxIdleReaders {
		var ok readerKey
		var oldest *reader
		for kk, rr := range rp.idle {
			if oldest == nil || rr.used.Before(oldest.used) {
				ok, oldest = kk, rr
			}
		}
		delete(rp.idle, ok)
		evict = append(evict, oldest)
	}
	rp.mu.Unlock()
	for _, r := range evict {
		r.cl.Close()
	}
}

func (rp *readerPool) open(k readerKey) (*reader, error) {
	opts := append(append([]kgo.Opt(nil), rp.s.opts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{k.tp.topic: {int32(k.tp.p): kgo.NewOffset().At(k.next)}}),
		kgo.FetchMaxBytes(8<<20),
		kgo.FetchMaxPartitionBytes(4<<20),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("reader for %s/%d: %w", k.tp.topic, k.tp.p, err)
	}
	return &reader{cl: cl, hwm: -1}, nil
}

// offsets returns a partition's log start and high watermark.
func (s *Source) offsets(topic string, p int) (start, hwm int64, err error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	starts, err := s.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, mapErr("list start offsets", err)
	}
	ends, err := s.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, mapErr("list end offsets", err)
	}
	so, ok1 := starts.Lookup(topic, int32(p))
	eo, ok2 := ends.Lookup(topic, int32(p))
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("%w: partition %d of topic %q", engine.ErrPartitionOutOfRange, p, topic)
	}
	if so.Err != nil {
		return 0, 0, mapErr(fmt.Sprintf("offsets of %s/%d", topic, p), so.Err)
	}
	if eo.Err != nil {
		return 0, 0, mapErr(fmt.Sprintf("offsets of %s/%d", topic, p), eo.Err)
	}
	return so.Offset, eo.Offset, nil
}

// Read returns records of one partition from offset from, at most
// maxRecords and about maxBytes (at least one record when any is there).
// It never waits for new records (NotifyC does); it waits for a fetch only
// when records below the HWM are to be read. from before the log start or
// past the HWM is engine.ErrOffsetOutOfRange.
func (s *Source) Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error) {
	if err := s.checkPartition(topic, partition); err != nil {
		return engine.ReadResult{}, err
	}
	if maxRecords <= 0 {
		maxRecords = 1
	}
	k := readerKey{tp: tpKey{topic, partition}, next: from}
	r := s.readers.take(k)
	if r == nil || len(r.buf) == 0 {
		start, hwm, err := s.offsets(topic, partition)
		if err != nil {
			if r != nil {
				r.cl.Close()
			}
			return engine.ReadResult{}, err
		}
		if from < start || from > hwm {
			if r != nil {
				r.cl.Close()
			}
			return engine.ReadResult{}, fmt.Errorf("%w: offset %d of %s/%d: the log holds [%d, %d)", engine.ErrOffsetOutOfRange, from, topic, partition, start, hwm)
		}
		if from == hwm {
			if r != nil {
				s.readers.put(k, r)
			}
			return engine.ReadResult{Next: from, HWM: hwm, LogStart: start}, nil
		}
		if r == nil {
			if r, err = s.readers.open(k); err != nil {
				return engine.ReadResult{}, err
			}
		}
		r.hwm, r.logStart = max(r.hwm, hwm), start
		if err := r.fill(s.ctx, topic, partition, from); err != nil {
			r.cl.Close()
			return engine.ReadResult{}, err
		}
	}
	res := engine.ReadResult{Next: from, HWM: r.hwm, LogStart: r.logStart}
	size := 0
	n := 0
	for n < len(r.buf) && len(res.Records) < maxRecords {
		kr := r.buf[n]
		n++
		if kr.Offset < res.Next {
			continue
		}
		sz := len(kr.Key) + len(kr.Value)
		if len(res.Records) > 0 && size+sz > maxBytes {
			n--
			break
		}
		size += sz
		res.Records = append(res.Records, toRecord(kr))
		res.Next = kr.Offset + 1
	}
	r.buf = r.buf[n:]
	if len(r.buf) == 0 {
		r.buf = nil
	}
	res.HWM = max(res.HWM, res.Next)
	s.readers.put(readerKey{tp: k.tp, next: res.Next}, r)
	return res, nil
}

// fill polls r until it holds records (or readWait passes).
func (r *reader) fill(ctx context.Context, topic string, p int, from int64) error {
	ctx, cancel := context.WithTimeout(ctx, readWait)
	defer cancel()
	for len(r.buf) == 0 {
		fs := r.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil
			}
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				ferr = err
			}
		})
		if ferr != nil {
			return mapErr(fmt.Sprintf("fetch %s/%d", topic, p), ferr)
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			r.hwm = max(r.hwm, fp.HighWatermark)
			if fp.LogStartOffset >= 0 {
				r.logStart = fp.LogStartOffset
			}
			for _, kr := range fp.Records {
				if kr.Offset >= from {
					r.buf = append(r.buf, kr)
				}
			}
		})
	}
	return nil
}

func toRecord(kr *kgo.Record) engine.Record {
	rec := engine.Record{Offset: kr.Offset, Timestamp: kr.Timestamp.UnixMilli(), Key: kr.Key, Value: kr.Value}
	for _, h := range kr.Headers {
		rec.Headers = append(rec.Headers, engine.Header{Key: h.Key, Value: h.Value})
	}
	return rec
}

// OffsetForTimestamp returns the first offset of the partition whose
// timestamp is >= ms (ListOffsets by time), or the HWM when no record is
// that recent, as the engine does.
func (s *Source) OffsetForTimestamp(topic string, partition int, ms int64) (int64, error) {
	if err := s.checkPartition(topic, partition); err != nil {
		return 0, err
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	lo, err := s.adm.ListOffsetsAfterMilli(ctx, ms, topic)
	if err != nil {
		return 0, mapErr("list offsets by time", err)
	}
	o, ok := lo.Lookup(topic, int32(partition))
	if !ok {
		return 0, fmt.Errorf("%w: partition %d of topic %q", engine.ErrPartitionOutOfRange, partition, topic)
	}
	if o.Err != nil {
		return 0, mapErr(fmt.Sprintf("offset for time on %s/%d", topic, partition), o.Err)
	}
	_, hwm, err := s.offsets(topic, partition)
	if err != nil {
		return 0, err
	}
	if o.Offset < 0 || o.Offset > hwm {
		return hwm, nil
	}
	return o.Offset, nil
}

// watcher is one consumer, assigned each partition someone waits on from
// its high watermark at the first NotifyC; each fetch with records closes
// the partition's channel.
type watcher struct {
	s    *Source
	cl   *kgo.Client
	mu   sync.Mutex              // guards ch
	ch   map[tpKey]chan struct{} // partition → channel closed on its next records
	done chan struct{}
}

func newWatcher(s *Source) *watcher {
	w := &watcher{s: s, ch: map[tpKey]chan struct{}{}, done: make(chan struct{})}
	opts := append(append([]kgo.Opt(nil), s.opts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{}),
		kgo.FetchMaxPartitionBytes(64<<10),
		kgo.FetchMaxWait(5*time.Second),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		close(w.done)
		return w
	}
	w.cl = cl
	go w.run()
	return w
}

func (w *watcher) run() {
	defer close(w.done)
	for {
		fs := w.cl.PollFetches(w.s.ctx)
		if w.s.ctx.Err() != nil {
			return
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			if len(fp.Records) > 0 || fp.Err != nil {
				w.wake(tpKey{fp.Topic, int(fp.Partition)})
			}
		})
	}
}

func (w *watcher) wake(k tpKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.ch[k]; ok {
		close(ch)
		w.ch[k] = make(chan struct{})
	}
}

func (w *watcher) close() {
	if w.cl != nil {
		w.cl.Close()
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, ch := range w.ch {
		close(ch)
		delete(w.ch, k)
	}
}

// NotifyC returns a channel closed when records arrive on the partition
// (the watcher's fetch sees them) after this call.
func (s *Source) NotifyC(topic string, partition int) (<-chan struct{}, error) {
	if err := s.checkPartition(topic, partition); err != nil {
		return nil, err
	}
	w := s.watch
	if w.cl == nil {
		return nil, fmt.Errorf("watch %s/%d: no watcher client", topic, partition)
	}
	k := tpKey{topic, partition}
	w.mu.Lock()
	ch, ok := w.ch[k]
	w.mu.Unlock()
	if ok {
		return ch, nil
	}
	_, hwm, err := s.offsets(topic, partition)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.ch[k]; ok {
		return ch, nil
	}
	if s.ctx.Err() != nil {
		return nil, fmt.Errorf("watch %s/%d: %w", topic, partition, engine.ErrClosed)
	}
	ch = make(chan struct{})
	w.ch[k] = ch
	w.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: {int32(partition): kgo.NewOffset().At(hwm)}})
	return ch, nil
}
