package wsapi

import (
	"sync"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// pushBufs recycles the buffers of pushes that no pushCache entry holds:
// a subscription catching up builds push after push of about the same
// size, which would otherwise each be a fresh large allocation to zero and
// collect.
var pushBufs sync.Pool // of *[]byte

// getPushBuf returns an empty buffer for about size bytes (an estimate:
// appending past it grows it): a recycled one when one within an eighth
// below and a quarter above is at hand (a queued push then holds little
// more memory than the bytes the send budget counts), else a new one.
// Recycled buffers come back a little smaller (writeMessage recycles the
// message, which starts after the head room the push did not use).
func getPushBuf(size int) []byte {
	if p, _ := pushBufs.Get().(*[]byte); p != nil {
		if c := cap(*p); c >= size-size/8 && c <= size+size/4 {
			return (*p)[:0]
		}
	}
	return make([]byte, 0, size)
}

// putPushBuf recycles the buffer of a written push.
func putPushBuf(b []byte) {
	b = b[:0]
	pushBufs.Put(&b)
}

// binPushHeadRoom is room for a binary push's header line.
const binPushHeadRoom = wire.MaxPushHeaderLen

// deliverBinaryPush is deliverPush for a subscription made with
// "format":"binary": one binary push (wire.AppendPushHeader, then
// wire.AppendPushRecord per record) of res's records, cut at about limit
// bytes of records (pushRecords). The push and its reservation follow the
// rules of JSON pushes (SendBytes, SlowConsumerWait).
func (s *subscription) deliverBinaryPush(p int, res *engine.ReadResult, limit int) (int64, bool) {
	recs := res.Records
	est := binPushHeadRoom
	for i := range recs {
		if est-binPushHeadRoom >= limit {
			break
		}
		r := &recs[i]
		est += len(r.Key) + len(r.Value) + 24
		for _, h := range r.Headers {
			est += len(h.Key) + len(h.Value) + 4
		}
	}
	first, firstTS := recs[0].Offset, recs[0].Timestamp
	b, n, _, cached := s.pushRecords(p, recs, true, binPushHeadRoom, est, limit, func(b []byte, r *engine.Record, _ bool) ([]byte, int) {
		return wire.AppendPushRecord(b, first, firstTS, r), 0
	})
	next := res.Next
	if n < len(recs) {
		next = recs[n].Offset
	}
	var hb [binPushHeadRoom]byte
	h := wire.AppendPushHeader(hb[:0], &wire.BinaryPush{
		Sub: s.id, Partition: p, Offset: first, Timestamp: firstTS,
		Next: next, Skipped: res.SkippedBelow(next), Count: n,
	})
	start := binPushHeadRoom - len(h)
	copy(b[start:], h)
	b = b[start:]
	s.c.settle(int64(limit), int64(len(b)))
	return next, s.c.enqueueReserved(s.ctx, outMsg{b: b, binary: true, pooled: !cached})
}
