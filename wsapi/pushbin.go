package wsapi

import (
	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// binaryMark is the first byte of a queued message that the write pump
// sends as a binary message, without that byte: a binary push. Every text
// message the server queues is a JSON object, so it starts with '{'.
const binaryMark = 0

// writeMessage writes one queued message: a binary push (binaryMark first)
// as a binary message, anything else as a text message.
func (c *conn) writeMessage(msg []byte) error {
	if len(msg) > 0 && msg[0] == binaryMark {
		return c.ws.WriteMessage(websocket.BinaryMessage, msg[1:])
	}
	return c.ws.WriteMessage(websocket.TextMessage, msg)
}

// binPushHeadRoom is room for binaryMark and a binary push's header line.
const binPushHeadRoom = 1 + wire.MaxPushHeaderLen

// deliverBinaryPush is deliverPush for a subscription made with
// "format":"binary": one binary push (wire.AppendPushHeader, then
// wire.AppendPushRecord per record) of res's records, cut at about limit
// bytes of records, the records taken from and given to the pushCache as
// deliverPush does with JSON. The push and its reservation follow the
// rules of JSON pushes (SendBytes, SlowConsumerWait).
func (s *subscription) deliverBinaryPush(p int, res *engine.ReadResult, limit int) (int64, bool) {
	pc := s.c.srv.pushes
	recs := res.Records
	shared, cached, k := pc.lookup(s.topic, p, true, recs)
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
	b := make([]byte, binPushHeadRoom, est)
	n := 0 // records in the push
	if k > 0 {
		n = 1
		for n < k && cached.ends[n-1] < limit {
			n++
		}
		b = append(b, cached.data[:cached.ends[n-1]]...)
	}
	fromCache := n
	var ends []int // record ends, for the cache
	first, firstTS := recs[0].Offset, recs[0].Timestamp
	if n < len(recs) && (n == 0 || len(b)-binPushHeadRoom < limit) {
		if shared {
			ends = make([]int, 0, len(recs))
			if n > 0 {
				ends = append(ends, cached.ends[:n]...)
			}
		}
		for n < len(recs) {
			if n > 0 && len(b)-binPushHeadRoom >= limit {
				break
			}
			b = wire.AppendPushRecord(b, first, firstTS, &recs[n])
			if shared {
				ends = append(ends, len(b)-binPushHeadRoom)
			}
			n++
		}
	}
	next := res.Next
	if n < len(recs) {
		next = recs[n].Offset
	}
	pc.encoded.Add(int64(n - fromCache))
	if ends != nil {
		pc.store(s.topic, p, true, &encodedRun{recs: recs[:n:n], ends: ends, data: b[binPushHeadRoom:len(b):len(b)]})
	}
	var hb [binPushHeadRoom]byte
	h := append(hb[:0], binaryMark)
	h = wire.AppendPushHeader(h, &wire.BinaryPush{
		Sub: s.id, Partition: p, Offset: first, Timestamp: firstTS,
		Next: next, Skipped: res.Skipped, Count: n,
	})
	start := binPushHeadRoom - len(h)
	copy(b[start:], h)
	b = b[start:]
	s.c.settle(int64(limit), int64(len(b)))
	return next, s.c.enqueueReserved(s.ctx, b)
}
