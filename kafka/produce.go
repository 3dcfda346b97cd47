package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// produce appends every partition's batches; partitions of one request are
// appended concurrently, so that their fsyncs overlap. acks 1 and -1 both
// wait for the topic's sync-mode promise (a websocket ack); acks 0 waits
// for it too before the next request of the connection is read, but sends
// no response.
func (s *Server) produce(r *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	badAcks := r.Acks != 0 && r.Acks != 1 && r.Acks != -1
	var wg sync.WaitGroup
	for _, t := range r.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(t.Partitions))
		topicErr := errInvalidRequiredAcks
		var cfg engine.TopicConfig
		if !badAcks {
			// As in Kafka, only Metadata creates a missing topic: a
			// produce to one comes from stale metadata (the topic was
			// deleted), and creating it anew would take its records
			// into a topic of the default partition count.
			cfg, topicErr = s.ensureTopicConfig(t.Topic, false)
		}
		compacted := topicErr == 0 && cfg.Cleanup == engine.CleanupCompact
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
			code := topicErr
			if code == 0 && p.Partition < 0 {
				// The engine would pick a partition for -1: Kafka
				// names one. Only this partition is refused.
				code = errUnknownTopicOrPartition
			}
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.producePartition(t.Topic, p.Partition, p.Records, compacted, rp)
			}()
		}
		resp.Topics = append(resp.Topics, rt)
	}
	wg.Wait()
	return resp
}

// producePartition decodes and appends one partition's records. Nothing is
// appended when any batch fails to decode, nor on a compacted topic when
// any record has no key (Kafka's INVALID_RECORD: compaction keeps the
// newest record of each key, and such a record has none).
func (s *Server) producePartition(topic string, partition int32, records []byte, compacted bool, rp *kmsg.ProduceResponseTopicPartition) {
	batches, err := decodeBatches(records, s.opts.MaxRecordsBytes)
	if err != nil {
		rp.ErrorCode = batchErrorCode(err)
		msg := err.Error()
		rp.ErrorMessage = &msg
		s.opts.Logger.Warn("kafka: produce refused", "topic", topic, "partition", partition, "err", err)
		return
	}
	if compacted {
		if bi, ri, ok := keylessRecord(batches); ok {
			rp.ErrorCode = errInvalidRecord
			msg := fmt.Sprintf("compacted topic %s cannot accept a record without a key (partition %d, batch %d, record %d)", topic, partition, bi, ri)
			rp.ErrorMessage = &msg
			return
		}
	}
	for i, b := range batches {
		var base, ts int64
		var code int16
		var err error
		if b.ProducerID >= 0 && b.BaseSequence >= 0 {
			base, ts, code, err = s.appendIdempotent(topic, partition, b)
		} else {
			base, ts, code, err = s.appendRecords(topic, partition, b.Records)
		}
		if code != 0 {
			rp.ErrorCode = code
			if err != nil {
				msg := err.Error()
				rp.ErrorMessage = &msg
			}
			return
		}
		if i == 0 {
			rp.BaseOffset, rp.LogAppendTime = base, ts
		}
	}
	// As a Kafka broker: the partition's log start once appended (Produce
	// v5+), -1 on a refusal.
	if start, err := s.eng.LogStart(topic, int(partition)); err == nil {
		rp.LogStartOffset = start
	}
}

// keylessRecord finds the first record without a key, by its batch and
// its index in the batch.
func keylessRecord(batches []producedBatch) (batch, record int, ok bool) {
	for bi, b := range batches {
		for ri, r := range b.Records {
			if r.Key == nil {
				return bi, ri, true
			}
		}
	}
	return 0, 0, false
}

// appendRecords appends recs to one partition and returns the first offset
// and the commit time, or the Kafka error code and the engine's error.
func (s *Server) appendRecords(topic string, partition int32, recs []engine.Record) (int64, int64, int16, error) {
	// Not the server's context: once accepted, a produce runs to its ack,
	// and the records' bytes stay valid until it returns.
	acks, err := s.records.Produce(context.Background(), topic, int(partition), recs)
	if err != nil {
		return 0, 0, s.produceErrorCode(topic, partition, err), err
	}
	return acks[0].Offset, acks[0].Timestamp, 0, nil
}

// produceErrorCode maps a failed append to its Kafka error, logging the
// unexpected ones.
func (s *Server) produceErrorCode(topic string, partition int32, err error) int16 {
	code := engineErrorCode(err)
	if code == errUnknownServerError {
		s.opts.Logger.Error("kafka: produce failed", "topic", topic, "partition", partition, "err", err)
	}
	return code
}

// engineErrorCode maps engine errors to Kafka error codes.
func engineErrorCode(err error) int16 {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, engine.ErrTopicNotFound), errors.Is(err, engine.ErrPartitionOutOfRange):
		return errUnknownTopicOrPartition
	case errors.Is(err, engine.ErrInvalidTopic):
		return errInvalidTopic
	case errors.Is(err, engine.ErrRecordTooLarge):
		return errMessageTooLarge
	case errors.Is(err, engine.ErrOffsetOutOfRange):
		return errOffsetOutOfRange
	case errors.Is(err, engine.ErrTopicExists):
		return errTopicAlreadyExists
	case errors.Is(err, engine.ErrInvalidConfig):
		return errInvalidConfig
	case errors.Is(err, engine.ErrTooManyTopics):
		return errPolicyViolation
	case errors.Is(err, engine.ErrLogFailed):
		return errKafkaStorageError
	}
	return errUnknownServerError
}

// producers is the idempotent-producer state: producer ids handed out by
// InitProducerId and, per partition and producer, the last batches appended,
// so a retried batch is acknowledged with its original offsets and stored
// once. Idempotent batches are stored stamped with their producer
// (engine.ProduceIdempotent), and a partition's state is rebuilt from those
// stamps the first time an idempotent producer writes to it after Pulse
// started, so a retry that crosses a restart is recognised too.
type producers struct {
	// idMu guards next and limit: ids [next, limit) are reserved in
	// meta.db and not handed out yet.
	idMu        sync.Mutex
	next, limit uint32

	// mu guards states and loaded.
	mu     sync.Mutex
	states map[pidKey]*pidState
	loaded map[partKey]*sync.Once // partitions whose state was rebuilt from the log
}

const (
	// maxProducerStates bounds the state kept; past it an arbitrary entry
	// is forgotten (that producer's next retry, if any, is not
	// deduplicated).
	maxProducerStates = 1 << 16
	// producerIDBlock is how many producer ids one meta.db commit reserves.
	producerIDBlock = 1000
	// recentBatches is how many batches per producer and partition are
	// remembered, as Kafka's broker does.
	recentBatches = 5
)

type partKey struct {
	topic     string
	partition int32
}

type pidKey struct {
	topic     string
	partition int32
	pid       int64
}

// pidState is one producer's state on one partition. mu is held across the
// check and the append, so a producer's batches to a partition are appended
// one at a time.
type pidState struct {
	mu      sync.Mutex
	epoch   int16
	known   bool       // a batch of this epoch was appended
	nextSeq int32      // the sequence the next new batch must start with
	recent  []seqEntry // the last recentBatches batches, oldest first
}

// seqEntry is one batch appended: sequences baseSeq..baseSeq+count-1 at
// offsets base..base+count-1.
type seqEntry struct {
	baseSeq  int32
	count    int32
	base, ts int64
}

// find returns the offset and time of the batch of count records from seq,
// when it is one of the recent ones.
func (st *pidState) find(seq, count int32) (int64, int64, bool) {
	for _, e := range st.recent {
		if e.baseSeq == seq && e.count == count {
			return e.base, e.ts, true
		}
	}
	return 0, 0, false
}

// record notes a batch of count records from seq, appended at base at time
// ts, under epoch.
func (st *pidState) record(epoch int16, seq, count int32, base, ts int64) {
	if !st.known || epoch != st.epoch {
		st.epoch, st.known, st.recent = epoch, true, nil
	}
	if len(st.recent) == recentBatches {
		st.recent = append(st.recent[:0], st.recent[1:]...)
	}
	st.recent = append(st.recent, seqEntry{baseSeq: seq, count: count, base: base, ts: ts})
	st.nextSeq = int32((int64(seq) + int64(count)) % (1 << 31)) // wraps as Kafka's sequences do
}

func newProducers() *producers {
	return &producers{states: map[pidKey]*pidState{}, loaded: map[partKey]*sync.Once{}}
}

// producerState returns the state of one producer on one partition; the
// partition's stamped batches are read the first time one is asked for.
func (s *Server) producerState(k pidKey) *pidState {
	p := s.pids
	pk := partKey{k.topic, k.partition}
	p.mu.Lock()
	once, ok := p.loaded[pk]
	if !ok {
		once = new(sync.Once)
		p.loaded[pk] = once
	}
	p.mu.Unlock()
	once.Do(func() { s.loadProducers(pk) })

	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[k]
	if !ok {
		p.evictLocked()
		st = &pidState{}
		p.states[k] = st
	}
	return st
}

func (p *producers) evictLocked() {
	if len(p.states) >= maxProducerStates {
		for old := range p.states {
			delete(p.states, old)
			break
		}
	}
}

// loadProducers rebuilds the producer state of one partition from the
// stamped batches the engine holds (its last two segments). A failure is
// logged: the partition's producers are then unknown, and their next
// batches accepted as new.
func (s *Server) loadProducers(pk partKey) {
	rebuilt := map[pidKey]*pidState{}
	err := s.eng.ProducerBatches(pk.topic, int(pk.partition), func(b engine.ProducerBatch) {
		k := pidKey{pk.topic, pk.partition, int64(b.Producer.ID)}
		st := rebuilt[k]
		if st == nil {
			st = &pidState{}
			rebuilt[k] = st
		}
		st.record(int16(b.Producer.Epoch), b.Producer.BaseSequence, int32(b.Records), b.BaseOffset, b.Timestamp)
	})
	if err != nil {
		s.opts.Logger.Warn("kafka: idempotent producer state not rebuilt", "topic", pk.topic, "partition", pk.partition, "err", err)
	}
	p := s.pids
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, st := range rebuilt {
		if _, ok := p.states[k]; !ok {
			p.evictLocked()
			p.states[k] = st
		}
	}
}

// forgetTopic drops the producer state of a deleted topic, so that a topic
// created again under its name starts with none.
func (p *producers) forgetTopic(topic string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.states {
		if k.topic == topic {
			delete(p.states, k)
		}
	}
	for k := range p.loaded {
		if k.topic == topic {
			delete(p.loaded, k)
		}
	}
}

// appendIdempotent appends an idempotent batch unless it is a retry of one
// of the producer's last five batches, which gets the original offsets. A
// refusal is a Kafka error code, with the engine's error when the append
// itself failed.
func (s *Server) appendIdempotent(topic string, partition int32, b producedBatch) (int64, int64, int16, error) {
	if b.ProducerID <= 0 || b.ProducerID > math.MaxUint32 {
		return 0, 0, errUnknownProducerID, nil // not an id Pulse hands out
	}
	if b.Epoch < 0 {
		return 0, 0, errInvalidProducerEpoch, nil
	}
	st := s.producerState(pidKey{topic, partition, b.ProducerID})
	st.mu.Lock()
	defer st.mu.Unlock()
	count := int32(len(b.Records))
	switch {
	case st.known && b.Epoch < st.epoch:
		return 0, 0, errInvalidProducerEpoch, nil
	case st.known && b.Epoch == st.epoch:
		if base, ts, ok := st.find(b.BaseSequence, count); ok {
			return base, ts, 0, nil
		}
		if b.BaseSequence != st.nextSeq {
			return 0, 0, errOutOfOrderSequence, nil
		}
	}
	stamp := engine.ProducerStamp{ID: uint32(b.ProducerID), Epoch: uint32(b.Epoch), BaseSequence: b.BaseSequence}
	// Not the server's context: once accepted, a produce runs to its ack.
	acks, err := s.records.ProduceIdempotent(context.Background(), topic, int(partition), b.Records, stamp)
	if err != nil {
		return 0, 0, s.produceErrorCode(topic, partition, err), err
	}
	st.record(b.Epoch, b.BaseSequence, count, acks[0].Offset, acks[0].Timestamp)
	return acks[0].Offset, acks[0].Timestamp, 0, nil
}

// producerIDHandedOut reports whether id was handed out by this data dir
// (or reserved in a block of an earlier run, which is never handed out
// again): every id below the next one to hand out. Before the first id of
// this run, a block is reserved to learn where that is.
func (s *Server) producerIDHandedOut(id int64) (bool, error) {
	p := s.pids
	p.idMu.Lock()
	defer p.idMu.Unlock()
	if p.limit == 0 {
		if err := s.reserveProducerIDsLocked(); err != nil {
			return false, err
		}
	}
	return id >= 1 && id < int64(p.next), nil
}

// reserveProducerIDsLocked reserves the next block of producer ids in
// meta.db and makes it the one handed out from (s.pids.idMu held).
func (s *Server) reserveProducerIDsLocked() error {
	first, err := s.eng.ReserveProducerIDs(producerIDBlock)
	if err != nil {
		return err
	}
	s.pids.next, s.pids.limit = first, first+producerIDBlock
	return nil
}

// newProducerID hands out a producer id never handed out before by this
// data dir: ids are reserved in meta.db, a block at a time.
func (s *Server) newProducerID() (int64, error) {
	p := s.pids
	p.idMu.Lock()
	defer p.idMu.Unlock()
	if p.next == p.limit {
		if err := s.reserveProducerIDsLocked(); err != nil {
			return 0, err
		}
	}
	id := p.next
	p.next++
	return int64(id), nil
}

// initProducerID hands out a producer id (epoch 0), or bumps the epoch of
// the one the producer names (KIP-360). Transactions are not supported: a
// transactional id is refused as FindCoordinator refuses it.
func (s *Server) initProducerID(r *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		resp.ErrorCode = errTransactionalIDAuthorizationFailed
		return resp
	}
	if r.ProducerID > 0 && r.ProducerID <= math.MaxUint32 && r.ProducerEpoch >= 0 && r.ProducerEpoch < math.MaxInt16 {
		handedOut, err := s.producerIDHandedOut(r.ProducerID)
		if err != nil {
			s.opts.Logger.Error("kafka: init producer id", "err", err)
			resp.ErrorCode = errUnknownServerError
			return resp
		}
		if handedOut {
			resp.ProducerID, resp.ProducerEpoch = r.ProducerID, r.ProducerEpoch+1
			return resp
		}
		// An id this data dir has not handed out yet: bumping it would
		// fence the producer that is handed it later. A new id instead.
	}
	id, err := s.newProducerID()
	if err != nil {
		s.opts.Logger.Error("kafka: init producer id", "err", err)
		resp.ErrorCode = errUnknownServerError
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}
