package kafka

import (
	"encoding/binary"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// maxFetchBytes caps a fetch response whatever the client asks for.
const maxFetchBytes = 64 << 20

// fetch answers Fetch, long-polling on the partitions' HWM broadcast
// channels until min_bytes are available, max_wait_ms passed, or Pulse is
// closing. Fetch sessions (KIP-227) are declined: the response carries
// session id 0, so clients send full fetches.
//
// skipOnly is the connection's memory of partitions last answered with only
// a batch of no records (led by a record below the fetch offset or not): such an answer counts toward min_bytes the first
// time, so that a consumer learns at once that it may move past the range,
// but not again at the same offset (a client that ignores the batch asks
// there again), so that fetch waits as at the HWM.
func (s *Server) fetch(r *kmsg.FetchRequest, skipOnly map[topicPartition]int64) *fetchResponse {
	wait := min(time.Duration(max(r.MaxWaitMillis, 0))*time.Millisecond, s.opts.MaxFetchWait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	maxBytes := int(r.MaxBytes)
	if maxBytes <= 0 || maxBytes > maxFetchBytes {
		maxBytes = maxFetchBytes
	}
	for {
		var notify []<-chan struct{}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if c, err := s.eng.NotifyC(t.Topic, int(p.Partition)); err == nil {
					notify = append(notify, c)
				}
			}
		}
		resp, total, failed := s.fetchOnce(r, maxBytes, skipOnly)
		if total >= int(r.MinBytes) || total > 0 && r.MinBytes <= 0 || failed || len(notify) == 0 {
			return s.sent(resp, skipOnly)
		}
		cases := make([]reflect.SelectCase, 0, len(notify)+2)
		cases = append(cases,
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.ctx.Done())})
		for _, c := range notify {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
		}
		if i, _, _ := reflect.Select(cases); i < 2 {
			resp, _, _ = s.fetchOnce(r, maxBytes, skipOnly)
			return s.sent(resp, skipOnly)
		}
	}
}

// read is a fetch's read of one partition, counting neither the records
// it returns (when the record path counts reads) nor the offsets it skips
// in skipped_records: a fetch that waits reads its partitions again each
// time it wakes, and sends less than it read when its bytes run out, so
// sent counts what the response sent carries instead.
func (s *Server) read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error) {
	if c, ok := s.records.(ReadCounter); ok {
		return c.ReadUncounted(topic, partition, from, maxRecords, maxBytes)
	}
	return s.eng.ReadUncounted(topic, partition, from, maxRecords, maxBytes)
}

// sent notes resp as the response a fetch sends: its records are counted
// as read (when the record path counts reads), the offsets of corrupt or
// lost ranges its batches of no records move the consumer past are counted
// in skipped_records, and skipOnly remembers the partitions it answers with
// only a batch of no records. It returns resp.
func (s *Server) sent(resp *fetchResponse, skipOnly map[topicPartition]int64) *fetchResponse {
	c, counts := s.records.(ReadCounter)
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			recs := resp.recordsOf(ti, pi)
			if counts && len(recs) > 0 {
				c.CountRead(t.Topic, recs)
			}
			if n := resp.skipped[ti][pi]; n > 0 {
				// An error is the partition deleted since the read:
				// there is no counter left to count in.
				_ = s.eng.CountSkipped(t.Topic, int(p.Partition), n)
			}
			tp := topicPartition{t.Topic, p.Partition}
			if recs == nil && p.ErrorCode == 0 && len(p.RecordBatches) > 0 {
				skipOnly[tp] = resp.fetchOffsets[ti][pi]
			} else {
				delete(skipOnly, tp)
			}
		}
	}
	return resp
}

// fetchOnce reads every requested partition once. It returns the response,
// the bytes of records in it, and whether a partition failed.
func (s *Server) fetchOnce(r *kmsg.FetchRequest, maxBytes int, skipOnly map[topicPartition]int64) (*fetchResponse, int, bool) {
	resp := &fetchResponse{FetchResponse: r.ResponseKind().(*kmsg.FetchResponse), records: make([][][]engine.Record, len(r.Topics)), fetchOffsets: make([][]int64, len(r.Topics)), skipped: make([][]int64, len(r.Topics))}
	total, failed := 0, false
	for ti, t := range r.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.Topic
		resp.records[ti] = make([][]engine.Record, len(t.Partitions))
		resp.fetchOffsets[ti] = make([]int64, len(t.Partitions))
		resp.skipped[ti] = make([]int64, len(t.Partitions))
		for pi, p := range t.Partitions {
			resp.fetchOffsets[ti][pi] = p.FetchOffset
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			rp.RecordBatches = []byte{} // never null: librdkafka refuses a null record set
			budget := min(int(p.PartitionMaxBytes), maxBytes-total)
			if total > 0 && budget <= 0 {
				// Nothing more fits; the partition is still listed
				// with its watermarks.
				budget = 0
			}
			recs, skipped, code := s.fetchPartition(t.Topic, p.Partition, p.FetchOffset, budget, total == 0, &rp)
			resp.records[ti][pi], resp.skipped[ti][pi] = recs, skipped
			n := len(rp.RecordBatches)
			if recs != nil {
				n += batchesLen(recs)
			} else if off, ok := skipOnly[topicPartition{t.Topic, p.Partition}]; ok && off == p.FetchOffset {
				n = 0 // answered so at this offset before: wait as at the HWM
			}
			if code != 0 {
				rp.ErrorCode = code
				failed = true
			}
			total += n
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, total, failed
}

// fetchPartition fills rp's watermarks and returns its records from offset
// on, within budget bytes (at least one record when first, as KIP-74 asks,
// so a record larger than the limit is not stuck forever), to be encoded
// into the response by fetchResponse.AppendTo, followed there by
// rp.RecordBatches (a batch of no records past what the read skipped after
// them, or nothing); nil when there are none, rp.RecordBatches then being
// a batch of no records over what the read skipped (led as leadBelow
// says), or nothing. It also returns the offsets
// of corrupt or lost ranges that the answer moves the consumer past: those
// below the offset its next fetch asks at, not those the read passed over
// beyond it.
func (s *Server) fetchPartition(topic string, partition int32, from int64, budget int, first bool, rp *kmsg.FetchResponseTopicPartition) ([]engine.Record, int64, int16) {
	// Records take at least 16 bytes (approxSize), so budget/16 records is
	// never the bound that stops the read before budget bytes.
	res, err := s.read(topic, int(partition), from, max(budget/16, 1), max(budget, 1))
	if err != nil {
		code := engineErrorCode(err)
		if code == errOffsetOutOfRange {
			if info, derr := s.eng.Describe(topic); derr == nil && int(partition) < len(info.Partitions) {
				pi := info.Partitions[partition]
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = pi.HWM, pi.HWM, pi.LogStart
			}
		}
		return nil, 0, code
	}
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = res.HWM, res.HWM, res.LogStart
	if from > res.HWM || from < res.LogStart {
		return nil, 0, errOffsetOutOfRange
	}
	recs := res.Records
	if budget <= 0 && !first {
		return nil, 0, 0
	}
	// Trim to the budget (Read's bound is approximate), keeping one.
	next := res.Next // where the consumer's next fetch should ask
	size := 0
	for i := range recs {
		size += approxSize(&recs[i])
		if size > budget && i > 0 {
			next = recs[i].Offset
			recs = recs[:i]
			break
		}
	}
	if len(recs) == 0 {
		end := from // where the consumer's next fetch asks
		if next > from {
			// Nothing readable up to Next (a corrupt range, or a gap
			// recovery recorded): as for a batch compaction emptied,
			// a batch of no records ending there moves the consumer
			// on (KAFKA-5443).
			rp.RecordBatches, end = emptyBatch(from, next)
			rp.RecordBatches = s.leadBelow(topic, partition, res.LogStart, from, budget, rp.RecordBatches)
		}
		return nil, res.SkippedBelow(end), 0
	}
	end := recs[len(recs)-1].Offset + 1
	if next > end {
		// The read skipped offsets after its last record: a batch of
		// no records after the records' batches moves the consumer
		// past them too, so that its next fetch does not read, and
		// count, the same range again.
		rp.RecordBatches, end = emptyBatch(end, next)
	}
	return recs, res.SkippedBelow(end), 0
}

// leadBelow returns skip, the batch of no records an answer at from is
// made of, led by a batch of the partition's first readable record when
// that record is below from and both fit in budget. The consumers
// docs/kafka.md names drop a record below their fetch offset, as one from a
// compressed batch that started before it, but with it two of them move on
// where a batch of no records alone leaves them: kafka-python 2.0.2 fails on a response of only
// batches of no records (IndexError) and, given a record, moves its
// position to the last batch's end; kafkajs 2.2.4 ignores a batch of no
// records and, given only records below its fetch offset, moves on by one
// offset (as past records compaction removed). The lead is never counted
// as read: it is not handed to the consumer.
func (s *Server) leadBelow(topic string, partition int32, logStart, from int64, budget int, skip []byte) []byte {
	res, err := s.read(topic, int(partition), logStart, 1, 1)
	if err != nil || len(res.Records) == 0 || res.Records[0].Offset >= from {
		return skip
	}
	lead := res.Records[:1]
	n := batchesLen(lead)
	if n+len(skip) > budget {
		return skip
	}
	return append(appendBatches(make([]byte, 0, n+len(skip)), lead), skip...)
}

// emptyBatch returns a batch of no records from first on toward next-1
// (appendEmptyBatch ends a range too long for one batch sooner) and the
// offset after its last, where it moves the consumer.
func emptyBatch(first, next int64) ([]byte, int64) {
	b := appendEmptyBatch(nil, first, next-1)
	return b, first + int64(binary.BigEndian.Uint32(b[offLastDelta:])) + 1
}

// appendBatches encodes recs as batches v2, one per run of records with the
// same commit time (a LogAppendTime batch gives all its records one time).
// It grows dst as it goes: a caller that knows the size (batchesLen) grows
// dst once first.
func appendBatches(dst []byte, recs []engine.Record) []byte {
	for len(recs) > 0 {
		n := 1
		for n < len(recs) && recs[n].Timestamp == recs[0].Timestamp {
			n++
		}
		dst = appendBatch(dst, recs[:n])
		recs = recs[n:]
	}
	return dst
}

func approxSize(r *engine.Record) int {
	n := 16 + len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += 4 + len(h.Key) + len(h.Value)
	}
	return n
}

// ListOffsets special timestamps.
const (
	tsLatest   = -1
	tsEarliest = -2
	tsMax      = -3
)

// listOffsets answers ListOffsets: earliest is the log start, latest the
// HWM, a timestamp the first record committed at or after it (offset -1
// when there is none), -3 the last record. Its reads of a record hand none
// to the client, so the offsets they skip are not counted
// (engine.ReadUncounted).
func (s *Server) listOffsets(r *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		info, terr := s.eng.Describe(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.Timestamp, rp.Offset = -1, -1
			switch {
			case terr != nil:
				rp.ErrorCode = engineErrorCode(terr)
			case p.Partition < 0 || int(p.Partition) >= len(info.Partitions):
				rp.ErrorCode = errUnknownTopicOrPartition
			default:
				rp.LeaderEpoch = 0
				pi := info.Partitions[p.Partition]
				switch p.Timestamp {
				case tsLatest:
					rp.Offset = pi.HWM
				case tsEarliest:
					rp.Offset = pi.LogStart
				case tsMax:
					if pi.HWM > pi.LogStart {
						if res, err := s.eng.ReadUncounted(t.Topic, int(p.Partition), pi.HWM-1, 1, 1); err == nil && len(res.Records) == 1 {
							rp.Offset, rp.Timestamp = res.Records[0].Offset, res.Records[0].Timestamp
						}
					}
				default:
					off, err := s.eng.OffsetForTimestamp(t.Topic, int(p.Partition), p.Timestamp)
					if err != nil {
						rp.ErrorCode = engineErrorCode(err)
						break
					}
					if res, err := s.eng.ReadUncounted(t.Topic, int(p.Partition), off, 1, 1); err == nil && len(res.Records) == 1 {
						rp.Offset, rp.Timestamp = res.Records[0].Offset, res.Records[0].Timestamp
					}
				}
				if r.GetVersion() == 0 {
					if rp.Offset >= 0 {
						rp.OldStyleOffsets = []int64{rp.Offset}
					} else {
						rp.OldStyleOffsets = []int64{}
					}
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
