package kafka

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

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
		if !badAcks {
			topicErr = s.ensureTopic(t.Topic, true)
		}
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
			if topicErr == 0 && p.Partition < 0 {
				// The engine would pick a partition for -1: Kafka
				// names one.
				topicErr = errUnknownTopicOrPartition
			}
			if topicErr != 0 {
				rp.ErrorCode = topicErr
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.producePartition(t.Topic, p.Partition, p.Records, rp)
			}()
		}
		resp.Topics = append(resp.Topics, rt)
	}
	wg.Wait()
	return resp
}

// producePartition decodes and appends one partition's records. Nothing is
// appended when any batch fails to decode.
func (s *Server) producePartition(topic string, partition int32, records []byte, rp *kmsg.ProduceResponseTopicPartition) {
	batches, err := decodeBatches(records, s.opts.MaxRecordsBytes)
	if err != nil {
		rp.ErrorCode = batchErrorCode(err)
		msg := err.Error()
		rp.ErrorMessage = &msg
		s.opts.Logger.Warn("kafka: produce refused", "topic", topic, "partition", partition, "err", err)
		return
	}
	for i, b := range batches {
		var base, ts int64
		var code int16
		if b.ProducerID >= 0 && b.BaseSequence >= 0 {
			base, ts, code = s.appendIdempotent(topic, partition, b)
		} else {
			base, ts, code = s.appendRecords(topic, partition, b.Records)
		}
		if code != 0 {
			rp.ErrorCode = code
			return
		}
		if i == 0 {
			rp.BaseOffset, rp.LogAppendTime = base, ts
		}
	}
}

// appendRecords appends recs to one partition and returns the first offset
// and the commit time.
func (s *Server) appendRecords(topic string, partition int32, recs []engine.Record) (int64, int64, int16) {
	// Not the server's context: once accepted, a produce runs to its ack,
	// and the records' bytes stay valid until it returns.
	acks, err := s.records.Produce(context.Background(), topic, int(partition), recs)
	if err != nil {
		code := engineErrorCode(err)
		if code == errUnknownServerError {
			s.opts.Logger.Error("kafka: produce failed", "topic", topic, "partition", partition, "err", err)
		}
		return 0, 0, code
	}
	return acks[0].Offset, acks[0].Timestamp, 0
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
	}
	return errUnknownServerError
}

// producers is the idempotent-producer state: producer ids handed out by
// InitProducerId and, per partition and producer, the last batches appended,
// so a retried batch is acknowledged with its original offsets and stored
// once. The state lives in memory: a retry that crosses a restart of Pulse
// is not recognised (docs/kafka.md).
type producers struct {
	next atomic.Int64 // the next producer id

	// mu guards states.
	mu     sync.Mutex
	states map[pidKey]*pidState
}

// maxProducerStates bounds the state kept; past it an arbitrary entry is
// forgotten (that producer's next retry, if any, is not deduplicated).
const maxProducerStates = 1 << 16

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
	known   bool  // a batch of this epoch was appended
	nextSeq int32 // the sequence the next new batch must start with
	recent  [5]seqEntry
	n       int // batches recorded, for the ring
}

type seqEntry struct {
	baseSeq   int32
	count     int32
	base, ts  int64
	populated bool
}

func newProducers() *producers {
	p := &producers{states: map[pidKey]*pidState{}}
	// Ids grow with the wall clock so that a restarted Pulse does not hand
	// out an id an old producer still uses (256 ids per millisecond).
	p.next.Store(time.Now().UnixMilli() << 8)
	return p
}

func (p *producers) state(k pidKey) *pidState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[k]
	if !ok {
		if len(p.states) >= maxProducerStates {
			for old := range p.states {
				delete(p.states, old)
				break
			}
		}
		st = &pidState{}
		p.states[k] = st
	}
	return st
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
}

// appendIdempotent appends an idempotent batch unless it is a retry of one
// of the producer's last five batches, which gets the original offsets.
func (s *Server) appendIdempotent(topic string, partition int32, b producedBatch) (int64, int64, int16) {
	st := s.pids.state(pidKey{topic, partition, b.ProducerID})
	st.mu.Lock()
	defer st.mu.Unlock()
	count := int32(len(b.Records))
	switch {
	case st.known && b.Epoch < st.epoch:
		return 0, 0, errInvalidProducerEpoch
	case st.known && b.Epoch == st.epoch:
		for _, e := range st.recent {
			if e.populated && e.baseSeq == b.BaseSequence && e.count == count {
				return e.base, e.ts, 0
			}
		}
		if b.BaseSequence != st.nextSeq {
			return 0, 0, errOutOfOrderSequence
		}
	}
	base, ts, code := s.appendRecords(topic, partition, b.Records)
	if code != 0 {
		return 0, 0, code
	}
	if !st.known || b.Epoch != st.epoch {
		st.epoch, st.known, st.recent, st.n = b.Epoch, true, [5]seqEntry{}, 0
	}
	st.recent[st.n%len(st.recent)] = seqEntry{baseSeq: b.BaseSequence, count: count, base: base, ts: ts, populated: true}
	st.n++
	st.nextSeq = b.BaseSequence + count // wraps as Kafka's sequences do
	if st.nextSeq < 0 {
		st.nextSeq = 0
	}
	return base, ts, 0
}

// initProducerID hands out a producer id (epoch 0), or bumps the epoch of
// the one the producer names (KIP-360). Transactions are not supported.
func (s *Server) initProducerID(r *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	if r.TransactionalID != nil {
		resp.ErrorCode = errInvalidRequest
		resp.ProducerID, resp.ProducerEpoch = -1, -1
		return resp
	}
	if r.ProducerID >= 0 && r.ProducerEpoch >= 0 && r.ProducerEpoch < 32767 {
		resp.ProducerID, resp.ProducerEpoch = r.ProducerID, r.ProducerEpoch+1
		return resp
	}
	resp.ProducerID = s.pids.next.Add(1)
	resp.ProducerEpoch = 0
	return resp
}
