package wsapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// GET /v1/topics/{topic}/events?from=&partition= streams a topic as
// Server-Sent Events, for a browser's EventSource (docs/http.md). Each
// record is one event (the default event type, so onmessage gets it):
//
//	id: 0/41
//	data: {"partition":0,"offset":41,"timestamp":...,"value":...}
//
// The id lists, for every partition of the stream in partition order,
// "<partition>/<offset>" of the last record delivered from it (one less
// than where the stream started there, until it delivered one), separated
// by commas: "0/41" for a one-partition topic, "0/41,1/-1,2/7" for three.
// When EventSource reconnects it sends the last id as Last-Event-ID, and
// the stream goes on after those offsets whatever from says, so nothing is
// repeated or missed, across a server restart too (offsets are never
// reused). A partition an id lacks (added by a grow after it) starts at
// its first record; a stream of the whole topic also follows a grow while
// it runs (followEventsGrowth), the id then listing the new partitions.
// A record value spanning lines becomes several data: lines, which
// EventSource joins back with "\n".

const (
	// sseRetry is the reconnection delay the stream asks EventSource for.
	sseRetry = time.Second
	// sseKeepalive is how often an idle stream sends a comment line, so
	// that a client gone away is noticed and proxies keep it open.
	sseKeepalive = 15 * time.Second
)

// sseBatch is one engine read of one partition, on its way to the writer.
type sseBatch struct {
	p    int
	res  engine.ReadResult
	err  error
	next int64
}

// parseLastEventID reads "p/o[,p/o...]"; each o is the last offset
// delivered from p (-1 and up).
func parseLastEventID(s string) (map[int]int64, *wire.Error) {
	last := make(map[int]int64)
	for _, part := range strings.Split(s, ",") {
		ps, os, ok := strings.Cut(strings.TrimSpace(part), "/")
		p, err1 := strconv.Atoi(ps)
		o, err2 := strconv.ParseInt(os, 10, 64)
		if !ok || err1 != nil || err2 != nil || p < 0 || o < -1 {
			return nil, wire.Errorf(wire.CodeInvalidRequest, "Last-Event-ID %q: want <partition>/<offset>[,<partition>/<offset>...] as this stream sends in id:", s)
		}
		last[p] = o
	}
	return last, nil
}

// appendEventID appends the id of the stream's position.
func appendEventID(dst []byte, parts []int, last map[int]int64) []byte {
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(p), 10)
		dst = append(dst, '/')
		dst = strconv.AppendInt(dst, last[p], 10)
	}
	return dst
}

// appendEventData appends b as data: lines.
func appendEventData(dst, b []byte) []byte {
	for {
		line, rest, more := bytes.Cut(b, []byte{'\n'})
		dst = append(dst, "data: "...)
		dst = append(dst, bytes.TrimSuffix(line, []byte{'\r'})...)
		dst = append(dst, '\n')
		if !more {
			return dst
		}
		b = rest
	}
}

// events is GET /v1/topics/{topic}/events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if !s.admitBrowser(w, r, "event stream") {
		return
	}
	topic := r.PathValue("topic")
	if e := validTopic(topic); e != nil {
		writeError(w, 0, e)
		return
	}
	rq, e := parseReadQuery(r, wire.FromLatest)
	if e != nil {
		writeError(w, 0, e)
		return
	}
	var resume map[int]int64
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if resume, e = parseLastEventID(id); e != nil {
			writeError(w, 0, e)
			return
		}
	}
	starts, err := s.startOffsets(topic, rq.partition, rq.from, "", false)
	missing := errors.Is(err, engine.ErrTopicNotFound)
	if err != nil && !missing {
		writeError(w, 0, toError(err))
		return
	}
	if resume != nil && !missing {
		if e := s.checkResume(topic, resume); e != nil {
			writeError(w, 0, e)
			return
		}
	}
	if n := s.sseStreams.Add(1); n > int64(s.opts.MaxConns) {
		s.sseStreams.Add(-1)
		writeError(w, http.StatusServiceUnavailable, wire.Errorf(wire.CodeRateLimited, "event stream limit reached (%d)", s.opts.MaxConns))
		return
	}
	defer s.sseStreams.Add(-1)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	head := fmt.Appendf(nil, "retry: %d\n", sseRetry.Milliseconds())
	if missing {
		// As a Kafka consumer does, wait for the topic; every record of a
		// topic created after the stream began is new to it, so the
		// stream then starts at the topic's first record.
		head = fmt.Appendf(head, ": waiting for topic %s to be created\n\n", topic)
		if !s.writeEvents(rc, w, head) {
			return
		}
		if starts, err = s.awaitTopic(r.Context(), topic, rq.partition); err != nil {
			if r.Context().Err() == nil {
				s.writeEvents(rc, w, appendEventError(nil, -1, err))
			}
			return
		}
		head = head[:0]
		resume = nil // it named offsets of a topic since deleted
	}
	parts := make([]int, len(starts))
	last := make(map[int]int64, len(starts))
	for i, st := range starts {
		parts[i] = st.Partition
		last[st.Partition] = st.From - 1
		if o, ok := resume[st.Partition]; ok {
			last[st.Partition] = o
			starts[i].From = o + 1
		} else if resume != nil && rq.partition == nil {
			// The id lists every partition of the stream it came from:
			// one it lacks was added by a grow after it, and all of its
			// records are new to the client.
			first, err := s.startOffsets(topic, &st.Partition, wire.From{Kind: wire.FromEarliest}, "", false)
			if err != nil {
				s.writeEvents(rc, w, appendEventError(nil, st.Partition, err))
				return
			}
			last[st.Partition] = first[0].From - 1
			starts[i].From = first[0].From
		}
	}
	sort.Ints(parts)
	head = fmt.Appendf(head, ": pulse events of %s from ", topic)
	head = append(appendEventID(head, parts, last), "\n\n"...)
	if !s.writeEvents(rc, w, head) {
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	batches := make(chan sseBatch, len(starts))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	read := func(st wire.StartPos) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.readEvents(ctx, topic, st.Partition, st.From, batches)
		}()
	}
	for _, st := range starts {
		read(st)
	}
	var grown <-chan []wire.StartPos
	if rq.partition == nil {
		grown = s.followEventsGrowth(ctx, &wg, topic, len(starts))
	}
	keepalive := time.NewTicker(sseKeepalive)
	defer keepalive.Stop()
	var buf []byte
	for {
		select {
		case b := <-batches:
			if b.err != nil {
				s.writeEvents(rc, w, appendEventError(buf[:0], b.p, b.err))
				return
			}
			buf = buf[:0]
			var rec []byte
			for i := range b.res.Records {
				last[b.p] = b.res.Records[i].Offset
				buf = append(buf, "id: "...)
				buf = append(appendEventID(buf, parts, last), '\n')
				rec = wire.AppendRecordJSON(rec[:0], b.p, &b.res.Records[i])
				buf = append(appendEventData(buf, rec), '\n')
			}
			if !s.writeEvents(rc, w, buf) {
				return
			}
		case added := <-grown:
			for _, st := range added {
				parts = append(parts, st.Partition)
				last[st.Partition] = st.From - 1
				read(st)
			}
		case <-keepalive.C:
			if !s.writeEvents(rc, w, []byte(": keepalive\n\n")) {
				return
			}
		case <-ctx.Done():
			return
		case <-s.stopC:
			return
		}
	}
}

// followEventsGrowth reports, on the channel it returns, the partitions a
// grow adds to topic past the first have (each from its first record), for
// a stream of the whole topic to read them too, as a whole-topic websocket
// subscription does (followGrowth). A backend that cannot report growth
// gets a channel that never delivers.
func (s *Server) followEventsGrowth(ctx context.Context, wg *sync.WaitGroup, topic string, have int) <-chan []wire.StartPos {
	out := make(chan []wire.StartPos)
	s.watchGrowth(ctx, wg, topic, have, func(from, to int) bool {
		var added []wire.StartPos
		for p := from; p < to; p++ {
			st, err := s.startOffsets(topic, &p, wire.From{Kind: wire.FromEarliest}, "", false)
			if err != nil {
				return false
			}
			added = append(added, st...)
		}
		select {
		case out <- added:
			return true
		case <-ctx.Done():
			return false
		}
	})
	return out
}

// checkResume refuses a Last-Event-ID past the end of a partition: this
// topic never handed out those offsets (the id came from another topic or
// data directory), and going on would skip whatever it writes next.
func (s *Server) checkResume(topic string, resume map[int]int64) *wire.Error {
	ti, err := s.b.Describe(topic)
	if err != nil {
		return toError(err)
	}
	for p, o := range resume {
		if p < len(ti.Partitions) && o >= ti.Partitions[p].LEO {
			return wire.Errorf(wire.CodeOffsetOutOfRange, "Last-Event-ID names offset %d of %s/%d, which ends at offset %d: not an id of this topic's stream", o, topic, p, ti.Partitions[p].LEO)
		}
	}
	return nil
}

// topicPoll is how often a stream waiting for its topic checks for it: the
// engine has no notification of topic creation.
const topicPoll = 100 * time.Millisecond

// awaitTopic waits until topic exists (or ctx ends, or the server stops)
// and returns where a stream starts in it: the first record of each
// partition (or of partition *only).
func (s *Server) awaitTopic(ctx context.Context, topic string, only *int) ([]wire.StartPos, error) {
	t := time.NewTicker(topicPoll)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.stopC:
			return nil, ErrServerClosed
		}
		starts, err := s.startOffsets(topic, only, wire.From{Kind: wire.FromEarliest}, "", false)
		if !errors.Is(err, engine.ErrTopicNotFound) {
			return starts, err
		}
	}
}

// appendEventError appends the event that ends a stream on err: an
// "error" event whose data is {"partition":p,"error":{...}} (no partition
// when p < 0).
func appendEventError(dst []byte, p int, err error) []byte {
	dst = append(dst, "event: error\n"...)
	data := []byte{'{'}
	if p >= 0 {
		data = append(strconv.AppendInt(append(data, `"partition":`...), int64(p), 10), ',')
	}
	data = append(wire.AppendErrorField(data, toError(err)), '}')
	return append(appendEventData(dst, data), '\n')
}

// writeEvents writes and flushes b; false when the client is gone or too
// slow to take it within writeWait.
func (s *Server) writeEvents(rc *http.ResponseController, w http.ResponseWriter, b []byte) bool {
	rc.SetWriteDeadline(time.Now().Add(writeWait))
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// readEvents reads partition p from next and hands each read to out, with
// engine.LongPoll (the long-poll loop of docs/architecture.md, retention
// reset included). One read at a time is in flight, so a slow client holds
// at most one read per partition in memory.
func (s *Server) readEvents(ctx context.Context, topic string, p int, next int64, out chan<- sseBatch) {
	send := func(b sseBatch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		res, err := engine.LongPoll(ctx, s.b, topic, p, next, s.opts.PushRecords, s.opts.PushBytes)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			send(sseBatch{p: p, err: err})
			return
		}
		if !send(sseBatch{p: p, res: res, next: res.Next}) {
			return
		}
		next = res.Next
	}
}
