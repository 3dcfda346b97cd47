package kafka

import (
	"encoding/binary"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// fetchResponse is a Fetch response whose record batches are encoded
// straight into the response frame from the records the engine returned:
// sized (batchesLen), then encoded in one pass, with no buffer of their own
// that kmsg would then copy. records[t][p] are the records of Topics[t].Partitions[p],
// encoded before that partition's RecordBatches (nil: its RecordBatches as
// they are). Everything else is kmsg's.
type fetchResponse struct {
	*kmsg.FetchResponse
	records      [][][]engine.Record
	fetchOffsets [][]int64 // the request's fetch offset of each partition
	skipped      [][]int64 // offsets each partition's answer moves the consumer past as skipped (fetchPartition)
}

// AppendTo encodes the response as kmsg.FetchResponse.AppendTo would with
// every partition's RecordBatches set to appendBatches(nil, its records)
// followed by its RecordBatches
// (fetchenc_test.go checks it byte for byte, version by version). A
// response with anything this encoder does not write (a version outside
// the served range, aborted transactions, tagged fields, unknown tags) is
// handed to kmsg whole.
func (r *fetchResponse) AppendTo(dst []byte) []byte {
	v := r.FetchResponse
	if !r.plain() {
		r.materialize()
		return v.AppendTo(dst)
	}
	version := v.Version
	flex := version >= 12
	dst = binary.BigEndian.AppendUint32(dst, uint32(v.ThrottleMillis))
	if version >= 7 {
		dst = binary.BigEndian.AppendUint16(dst, uint16(v.ErrorCode))
		dst = binary.BigEndian.AppendUint32(dst, uint32(v.SessionID))
	}
	dst = appendLen(dst, len(v.Topics), flex)
	for ti := range v.Topics {
		t := &v.Topics[ti]
		if flex {
			dst = binary.AppendUvarint(dst, uint64(len(t.Topic))+1)
		} else {
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(t.Topic)))
		}
		dst = append(dst, t.Topic...)
		dst = appendLen(dst, len(t.Partitions), flex)
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			dst = binary.BigEndian.AppendUint32(dst, uint32(p.Partition))
			dst = binary.BigEndian.AppendUint16(dst, uint16(p.ErrorCode))
			dst = binary.BigEndian.AppendUint64(dst, uint64(p.HighWatermark))
			dst = binary.BigEndian.AppendUint64(dst, uint64(p.LastStableOffset))
			if version >= 5 {
				dst = binary.BigEndian.AppendUint64(dst, uint64(p.LogStartOffset))
			}
			dst = appendNull(dst, flex) // aborted transactions
			if version >= 11 {
				dst = binary.BigEndian.AppendUint32(dst, uint32(p.PreferredReadReplica))
			}
			recs := r.recordsOf(ti, pi)
			switch {
			case recs == nil && p.RecordBatches == nil:
				dst = appendNull(dst, flex)
			case recs == nil:
				dst = appendLen(dst, len(p.RecordBatches), flex)
				dst = append(dst, p.RecordBatches...)
			default:
				n := batchesLen(recs) + len(p.RecordBatches)
				dst = appendBatches(slices.Grow(appendLen(dst, n, flex), n), recs)
				dst = append(dst, p.RecordBatches...)
			}
			if flex {
				dst = append(dst, 0) // no tagged fields
			}
		}
		if flex {
			dst = append(dst, 0)
		}
	}
	if flex {
		dst = append(dst, 0)
	}
	return dst
}

func (r *fetchResponse) recordsOf(t, p int) []engine.Record {
	if t < len(r.records) && p < len(r.records[t]) {
		return r.records[t][p]
	}
	return nil
}

// plain reports whether the response holds only what AppendTo writes
// itself.
func (r *fetchResponse) plain() bool {
	v := r.FetchResponse
	if v.Version < 4 || v.Version > 12 || len(v.Brokers) > 0 || v.UnknownTags.Len() > 0 {
		return false
	}
	for ti := range v.Topics {
		t := &v.Topics[ti]
		if t.UnknownTags.Len() > 0 {
			return false
		}
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			if p.AbortedTransactions != nil || p.UnknownTags.Len() > 0 ||
				p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1 || p.DivergingEpoch.UnknownTags.Len() > 0 ||
				p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1 || p.CurrentLeader.UnknownTags.Len() > 0 ||
				p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1 || p.SnapshotID.UnknownTags.Len() > 0 {
				return false
			}
		}
	}
	return true
}

// materialize encodes every partition's records into its RecordBatches,
// making the response an ordinary kmsg.FetchResponse.
func (r *fetchResponse) materialize() {
	for ti := range r.Topics {
		for pi := range r.Topics[ti].Partitions {
			if recs := r.recordsOf(ti, pi); recs != nil {
				p := &r.Topics[ti].Partitions[pi]
				p.RecordBatches = append(appendBatches(make([]byte, 0, batchesLen(recs)+len(p.RecordBatches)), recs), p.RecordBatches...)
			}
		}
	}
	r.records = nil
}

// appendLen appends the length n of an array or a bytes field: n+1 as a
// uvarint in the flexible versions, else an int32.
func appendLen(dst []byte, n int, flex bool) []byte {
	if flex {
		return binary.AppendUvarint(dst, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// appendNull appends a null array or bytes field (length -1; 0 in the
// flexible versions).
func appendNull(dst []byte, flex bool) []byte {
	if flex {
		return append(dst, 0)
	}
	return binary.BigEndian.AppendUint32(dst, ^uint32(0))
}

// batchesLen is the exact size of appendBatches(nil, recs).
func batchesLen(recs []engine.Record) int {
	n := 0
	for len(recs) > 0 {
		k := 1
		for k < len(recs) && recs[k].Timestamp == recs[0].Timestamp {
			k++
		}
		n += batchLen(recs[:k])
		recs = recs[k:]
	}
	return n
}

// batchLen is the exact size of appendBatch(nil, recs).
func batchLen(recs []engine.Record) int {
	n := batchHeaderLen
	base, first := recs[0].Offset, recs[0].Timestamp
	for i := range recs {
		body := recordBodyLen(&recs[i], recs[i].Timestamp-first, recs[i].Offset-base)
		n += varintLen(int64(body)) + body
	}
	return n
}
