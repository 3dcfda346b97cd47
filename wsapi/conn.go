package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

type connMode int

const (
	modeMux     connMode = iota // GET /v1/ws
	modeProduce                 // GET /v1/topics/{topic}/produce
	modeTail                    // GET /v1/topics/{topic}/tail
)

// maxCloseReason bounds a close frame's reason: its payload is at most 125
// bytes, 2 of them the code.
const maxCloseReason = 123

// outMsg is what the write pump writes: one text message, or (framed)
// complete websocket frames, encoded by appendTextFrame, that it writes as
// they are: the replies to a run of requests, queued as one.
type outMsg struct {
	b      []byte
	framed bool // b is complete websocket frames (appendTextFrame), written as they are
	binary bool // b is a binary message (a binary push), not text
	pooled bool // b goes back to pushBufs once written (no pushCache entry holds it)
}

// appendTextFrame appends the header of a final, unmasked (server) text
// frame of n payload bytes; the payload follows.
func appendTextFrame(b []byte, n int) []byte { return wire.AppendFrameHeader(b, wire.OpText, n, false) }

// closeMsg asks the write pump to send a close frame and end the connection.
type closeMsg struct {
	code   int
	reason string
	flush  bool // write what is queued first (graceful); false drops it
}

// conn is one websocket connection. The read pump (run's goroutine) is the
// only reader and the write pump the only writer, as in gorilla's chat
// example; replies and pushes reach the writer through send, a bounded queue.
type conn struct {
	srv  *Server
	ws   *websocket.Conn
	mode connMode
	// bc is ws's connection when Serve accepted it (nil under another
	// server): the write pump writes the messages it finds queued together
	// in one system call.
	bc *wire.BatchConn

	// ctx lives as long as the connection; cancel ends it (every
	// subscription and the produce worker watch it).
	ctx    context.Context
	cancel context.CancelFunc

	send   chan outMsg  // replies and pushes for the write pump
	queued atomic.Int64 // bytes in send or being written, plus those reserved for pushes being built

	// roomMu guards roomC, which is closed and replaced when the write
	// pump took bytes off queued (a broadcast to subscriptions waiting for
	// room in Options.SendBytes, as engine.NotifyC is for records).
	roomMu   sync.Mutex
	roomC    chan struct{}
	waiting  atomic.Int32  // reserve calls waiting for room
	closeReq chan closeMsg // buffered 1; the first close request wins
	closingC chan struct{} // closed with the first close request
	closeOne sync.Once
	readDone chan struct{} // closed when the read pump returns
	// closeSent is closed once the write pump has written the close frame
	// (or failed to).
	closeSent chan struct{}

	inflight atomic.Int64 // requests accepted and not yet answered

	// req is the read pump's request, decoded into for each message.
	req request

	// plain is the fixed part of records of a produce endpoint connection;
	// set before the read pump starts, then only read by it.
	plain *plainProduce

	// mu guards draining, queueClosed (produceQ's closing), subs and nextSub.
	mu          sync.Mutex
	draining    bool
	queueClosed bool
	produceQ    chan *produceJob // cap MaxInflight; closed by drain
	subs        map[int64]*subscription
	nextSub     int64
}

func newConn(s *Server, ws *websocket.Conn, mode connMode) *conn {
	c := &conn{
		srv:       s,
		ws:        ws,
		mode:      mode,
		send:      make(chan outMsg, s.opts.SendQueue),
		roomC:     make(chan struct{}),
		closeReq:  make(chan closeMsg, 1),
		closingC:  make(chan struct{}),
		readDone:  make(chan struct{}),
		closeSent: make(chan struct{}),
		produceQ:  make(chan *produceJob, s.opts.MaxInflight),
		subs:      make(map[int64]*subscription),
	}
	c.bc, _ = ws.NetConn().(*wire.BatchConn)
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

// queueLimit is the most bytes the connection holds for records of
// ordinary size: SendBytes of pushes, plus SendQueue replies of at most the
// ack of maxRequestRecords records. (A single record larger than SendBytes
// travels alone in its push, so the true bound also grows with the largest
// record.)
func (c *conn) queueLimit() int64 {
	return c.srv.opts.SendBytes + int64(c.srv.opts.SendQueue)*maxRequestRecords*64
}

// taken is called by the write pump for each message it took off send.
func (c *conn) taken(n int) {
	c.queued.Add(-int64(n))
	// Sequentially consistent atomics: either a reserve sees this
	// decrement, or this load sees that it waits.
	if c.waiting.Load() == 0 {
		return
	}
	c.roomMu.Lock()
	close(c.roomC)
	c.roomC = make(chan struct{})
	c.roomMu.Unlock()
}

// reserve waits until want more bytes fit in the connection's SendBytes
// budget (or nothing at all is held: one push always fits) and reserves
// them for a push. It fails when ctx ends, the connection closes, or no
// room came for SlowConsumerWait: the client is not reading, and the
// connection is closed with 1013.
func (c *conn) reserve(ctx context.Context, want int64) bool {
	var timer *time.Timer
	for {
		c.roomMu.Lock()
		// Counted as waiting before queued is read: a taken that
		// decrements queued after this read then sees the count and
		// wakes us (taken's comment).
		c.waiting.Add(1)
		if h := c.queued.Load(); h == 0 || h+want <= c.srv.opts.SendBytes {
			c.queued.Add(want)
			c.waiting.Add(-1)
			c.roomMu.Unlock()
			return true
		}
		room := c.roomC
		c.roomMu.Unlock()
		if timer == nil {
			timer = time.NewTimer(c.srv.opts.SlowConsumerWait)
			defer timer.Stop()
		}
		more := false
		select {
		case <-room:
			// The client read something: it is slow only when
			// nothing moves for SlowConsumerWait.
			more = true
			timer.Reset(c.srv.opts.SlowConsumerWait) // no stale tick since Go 1.23
		case <-c.closingC:
		case <-ctx.Done():
		case <-timer.C:
			c.slowConsumer()
		}
		c.waiting.Add(-1)
		if !more {
			return false
		}
	}
}

// settle turns a reservation of reserved bytes into one of actual bytes,
// the size of the messages built with it.
func (c *conn) settle(reserved, actual int64) {
	if actual >= reserved {
		c.queued.Add(actual - reserved)
	} else {
		c.release(reserved - actual)
	}
}

// release gives back n reserved bytes that no message took.
func (c *conn) release(n int64) {
	if n != 0 {
		c.taken(int(n))
	}
}

// slowConsumer closes the connection with 1013: what it was sent could not
// be queued for SlowConsumerWait.
func (c *conn) slowConsumer() {
	if c.closeWith(websocket.CloseTryAgainLater,
		"slow consumer: send queue full for "+c.srv.opts.SlowConsumerWait.String(), false) {
		c.srv.slowClosed.Add(1)
	}
}

// run starts the write pump and the produce worker, runs the read pump in
// the calling goroutine, and returns once every goroutine of the connection
// has ended.
func (c *conn) run(r *http.Request, topic string) {
	var writer, worker sync.WaitGroup
	writer.Add(1)
	go func() { defer writer.Done(); c.writePump() }()
	worker.Add(1)
	go func() { defer worker.Done(); c.produceWorker() }()
	switch c.mode {
	case modeProduce:
		c.startPlainProduce(r, topic)
	case modeTail:
		c.startPlainTail(r, topic)
	}
	c.readPump()
	c.cancel()
	// The worker runs subscribe requests: once it has ended no
	// subscription can start, so stopSubs stops them all.
	worker.Wait()
	c.stopSubs()
	writer.Wait()
}

// readPump reads messages until the peer goes away or the connection is
// closed. SetReadLimit comes before the first read; a larger message makes
// the library send close 1009 and end the read.
func (c *conn) readPump() {
	defer close(c.readDone)
	c.ws.SetReadLimit(c.srv.opts.ReadLimit)
	wait := c.srv.opts.PongWait
	c.ws.SetReadDeadline(time.Now().Add(wait))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(wait)) })
	hint := 512
	// The read deadline moves at most once a second (each move is a
	// system call's worth of work), or a tenth of wait when that is
	// shorter: a peer still has between wait-step and wait after its
	// last message.
	step := min(time.Second, wait/10)
	deadlineSet := time.Now()
	for {
		typ, msg, err := wire.ReadMessage(c.ws, hint)
		hint = max(512, len(msg)+len(msg)/8)
		if isTimeout(err) {
			// Silent for wait, pongs included: the peer is taken for
			// gone, but told so if its socket still takes a frame.
			c.closeWith(websocket.CloseGoingAway, "keepalive: nothing from the client for "+wait.String(), false)
			// Returning ends the connection: first let the frame go.
			select {
			case <-c.closeSent:
			case <-c.ctx.Done():
			}
			return
		}
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				// The library sent close 1009. Discard what the client is
				// still sending for a moment: closing a socket with unread
				// input resets it, and the reset can destroy the close
				// frame before the client reads it.
				c.srv.opts.Logger.Warn("websocket closed: message over the read limit", "limit", c.srv.opts.ReadLimit)
				nc := c.ws.NetConn()
				nc.SetReadDeadline(time.Now().Add(closeGrace))
				io.Copy(io.Discard, nc)
			}
			return
		}
		if now := time.Now(); now.Sub(deadlineSet) >= step {
			c.ws.SetReadDeadline(now.Add(wait))
			deadlineSet = now
		}
		select {
		case <-c.closingC:
			// After the close frame no reply can be sent: a request read
			// now is not executed at all, so that no reply means not done.
			continue
		default:
		}
		switch c.mode {
		case modeMux:
			if typ == websocket.BinaryMessage {
				c.handleBinary(msg)
				continue
			}
			c.handle(msg)
		case modeProduce:
			c.handlePlainProduce(typ, msg)
		case modeTail:
			// Tail connections only receive; anything sent is ignored.
		}
	}
}

// isTimeout reports whether err is a read that hit its deadline (the
// connection's reads do not wrap it as os.ErrDeadlineExceeded).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// writePump writes queued messages and pings, and the close frame when one
// is requested. It is the connection's only writer.
func (c *conn) writePump() {
	ticker := time.NewTicker(c.srv.opts.PongWait * 9 / 10)
	defer func() {
		ticker.Stop()
		c.ws.Close()
		c.cancel()
	}()
	for {
		select {
		case cm := <-c.closeReq:
			c.writeClose(cm)
			return
		default:
		}
		select {
		case cm := <-c.closeReq:
			c.writeClose(cm)
			return
		case msg := <-c.send:
			if !c.writeQueued(msg) {
				return
			}
		case <-ticker.C:
			c.ws.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.ws.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		case <-c.ctx.Done():
			return
		}
	}
}

// maxWriteMessages bounds the messages the write pump writes in one
// system call, so that a close request waits for at most that many.
const maxWriteMessages = 256

// writeQueued writes msg and, when more messages are already queued (and
// the connection is a wire.BatchConn), up to maxWriteMessages of them and
// wire.MaxWriteBatch bytes, all in one system call: a pipelining producer's acks
// and a subscriber's pushes then cost one write together, not one each.
// Each message counts against the budget until it is written (its bytes
// are held until then). It reports whether every write succeeded.
func (c *conn) writeQueued(msg outMsg) bool {
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	if c.bc == nil || len(c.send) == 0 {
		err := c.write(msg)
		c.taken(len(msg.b))
		return err == nil
	}
	c.bc.Hold()
	n, size := 1, len(msg.b)
	err := c.write(msg)
	for err == nil && n < maxWriteMessages && size < wire.MaxWriteBatch {
		select {
		case m := <-c.send:
			err = c.write(m)
			n++
			size += len(m.b)
			continue
		default:
		}
		break
	}
	if ferr := c.bc.Flush(); err == nil {
		err = ferr
	}
	c.taken(size)
	return err == nil
}

// write writes one queued message: through the library, or, when framed,
// as it is to the connection (the library writes each of its own frames
// in one write, so frames never interleave).
func (c *conn) write(m outMsg) error {
	var err error
	switch {
	case m.framed:
		nc := c.ws.NetConn()
		nc.SetWriteDeadline(time.Now().Add(writeWait))
		_, err = nc.Write(m.b)
	case m.binary:
		err = c.ws.WriteMessage(websocket.BinaryMessage, m.b)
	default:
		err = c.ws.WriteMessage(websocket.TextMessage, m.b)
	}
	if m.pooled {
		// Not referenced once written: gorilla and BatchConn copy or
		// write it before returning.
		putPushBuf(m.b)
	}
	return err
}

// writeClose writes what is queued (when cm.flush), then the close frame,
// then gives the peer closeGrace to answer before the socket is closed.
func (c *conn) writeClose(cm closeMsg) {
	if cm.flush {
		for n := len(c.send); n > 0; n-- {
			msg := <-c.send
			c.ws.SetWriteDeadline(time.Now().Add(writeWait))
			err := c.write(msg)
			c.taken(len(msg.b))
			if err != nil {
				return
			}
		}
	}
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	err := c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(cm.code, cm.reason))
	close(c.closeSent)
	if err != nil {
		return
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-c.readDone:
	case <-t.C:
	}
}

// closeWith asks the write pump to close the connection with code and
// reason. Only the first request counts; closeWith reports whether this was
// it.
func (c *conn) closeWith(code int, reason string, flush bool) (first bool) {
	c.closeOne.Do(func() {
		first = true
		if len(reason) > maxCloseReason {
			// Cut on a character boundary: the reason is UTF-8 text.
			n := maxCloseReason
			for n > 0 && !utf8.RuneStart(reason[n]) {
				n--
			}
			reason = reason[:n]
		}
		c.closeReq <- closeMsg{code: code, reason: reason, flush: flush}
		close(c.closingC)
		if code != websocket.CloseNormalClosure && code != websocket.CloseGoingAway {
			c.srv.opts.Logger.Warn("websocket closed by server", "code", code, "reason", reason)
		}
	})
	return first
}

// enqueue hands msg to the write pump. When the queue stays full for
// SlowConsumerWait the client is not reading fast enough: the connection is
// closed with 1013 and the queue dropped, so that a stalled client cannot
// make the server hold more than queueLimit bytes for it. It reports whether
// msg was queued.
func (c *conn) enqueue(msg []byte) bool { return c.enqueueCtx(c.ctx, msg) }

// enqueueCtx is enqueue that also gives up when ctx (a subscription's) ends.
func (c *conn) enqueueCtx(ctx context.Context, msg []byte) bool {
	c.queued.Add(int64(len(msg)))
	return c.send1(ctx, outMsg{b: msg})
}

// enqueueFrames queues frames, complete websocket frames
// (appendTextFrame), as one message.
func (c *conn) enqueueFrames(frames []byte) bool {
	c.queued.Add(int64(len(frames)))
	return c.send1(c.ctx, outMsg{b: frames, framed: true})
}

// enqueueReserved queues msg (a push), whose bytes were reserved (reserve)
// with others: it is enqueueCtx without counting them again.
func (c *conn) enqueueReserved(ctx context.Context, msg outMsg) bool {
	return c.send1(ctx, msg)
}

// send1 hands msg, already counted in queued, to the write pump; on
// failure it is uncounted.
func (c *conn) send1(ctx context.Context, msg outMsg) bool {
	select {
	case c.send <- msg:
		return true
	case <-c.closingC:
	case <-ctx.Done():
	default:
		t := time.NewTimer(c.srv.opts.SlowConsumerWait)
		defer t.Stop()
		select {
		case c.send <- msg:
			return true
		case <-c.closingC:
		case <-ctx.Done():
		case <-t.C:
			c.slowConsumer()
		}
	}
	c.release(int64(len(msg.b)))
	return false
}

// reply queues the answer to request id: fields is a JSON object body
// without braces (nil for {"id":..,"ok":true}), or err.
func (c *conn) reply(id json.RawMessage, fields []byte, err *wire.Error) {
	c.enqueue(wire.AppendReply(make([]byte, 0, 64+len(fields)), id, fields, err))
}

// replyJSON queues {"id":..,"<name>":v}.
func (c *conn) replyJSON(id json.RawMessage, name string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		c.reply(id, nil, wire.Errorf(wire.CodeInternal, "encoding reply: %v", err))
		return
	}
	f := make([]byte, 0, len(name)+3+len(body))
	f = wire.AppendJSONString(f, []byte(name))
	f = append(f, ':')
	f = append(f, body...)
	c.reply(id, f, nil)
}

// drain starts a graceful close for Shutdown: no new requests, every
// accepted produce answered, subscriptions stopped, then close 1001.
func (c *conn) drain() {
	c.mu.Lock()
	c.draining = true
	if !c.queueClosed {
		c.queueClosed = true
		close(c.produceQ) // the produce worker answers what is queued, then closes
	}
	c.mu.Unlock()
	c.stopSubs()
}

// accept queues job for the connection's worker, or says why not. Every
// request of /v1/ws goes through this queue, so that replies come in
// request order.
func (c *conn) accept(job *produceJob) *wire.Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return wire.Errorf(wire.CodeShuttingDown, "server shutting down: request refused, nothing was written")
	}
	if n := c.inflight.Load(); n >= int64(c.srv.opts.MaxInflight) {
		return wire.Errorf(wire.CodeRateLimited, "%d requests are waiting for their reply (limit %d): wait for replies before sending more", n, c.srv.opts.MaxInflight)
	}
	c.inflight.Add(1)
	c.produceQ <- job // never blocks: len(produceQ) <= inflight < cap
	return nil
}

// submit queues job, or answers at once why it cannot be queued.
func (c *conn) submit(job *produceJob) {
	if e := c.accept(job); e != nil {
		c.reply(job.id, nil, e)
	}
}

// inOrder runs fn (the execution of a request other than produce) in the
// worker, after every request read before it has been answered.
func (c *conn) inOrder(id json.RawMessage, fn func()) {
	c.submit(&produceJob{id: id, run: fn})
}

// refuseInOrder answers request id with e, in request order.
func (c *conn) refuseInOrder(id json.RawMessage, e *wire.Error) {
	c.inOrder(id, func() { c.reply(id, nil, e) })
}

// handle dispatches one request of /v1/ws. It runs in the read pump: it
// decodes and validates, and the worker executes and answers in order.
func (c *conn) handle(msg []byte) {
	// A produce request is decoded into the read pump's own request
	// (opProduce keeps nothing of it); the others get one of their own,
	// which their execution in the worker keeps.
	req, e := decodeRequestInto(msg, "request", &c.req)
	if e != nil {
		var id json.RawMessage
		if req != nil {
			id = req.ID
		}
		c.refuseInOrder(id, e)
		return
	}
	if c.isDraining() && req.Op != "" {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeShuttingDown, "server shutting down: %s refused", req.Op))
		return
	}
	if req.Op == "produce" {
		c.opProduce(req)
		return
	}
	own := *req
	own.Records, own.spare = slices.Clone(req.Records), nil
	req = &own
	var op func(*request)
	switch req.Op {
	case "subscribe":
		op = c.opSubscribe
	case "unsubscribe":
		op = c.opUnsubscribe
	case "commit":
		op = c.opCommit
	case "topics":
		op = c.opTopics
	case "describe":
		op = c.opDescribe
	case "create_topic":
		op = func(r *request) { c.opCreateTopic(r, msg) }
	case "delete_topic":
		op = c.opDeleteTopic
	case "alter_topic":
		op = func(r *request) { c.opAlterTopic(r, msg) }
	case "consumers":
		op = c.opConsumers
	case "delete_consumer":
		op = func(r *request) { c.opDeleteConsumer(r, msg) }
	case "offset_for_time":
		op = func(r *request) { c.opOffsetForTime(r, msg) }
	case "":
		c.refuseInOrder(req.ID, wire.Errorf(wire.CodeInvalidRequest, `request has no "op"`))
		return
	default:
		c.refuseInOrder(req.ID, wire.Errorf(wire.CodeUnknownOp, "unknown op %q (want produce, subscribe, unsubscribe, commit, topics, describe, create_topic, delete_topic, alter_topic, consumers, delete_consumer or offset_for_time)", req.Op))
		return
	}
	c.inOrder(req.ID, func() { op(req) })
}

func (c *conn) isDraining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

func (c *conn) opTopics(req *request) {
	ts, err := c.srv.b.Topics()
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	out := make([]wire.TopicInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, wireTopic(t))
	}
	c.replyJSON(req.ID, "topics", out)
}

func (c *conn) opDescribe(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	t, err := c.srv.b.Describe(req.Topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.replyJSON(req.ID, "topic", wireTopic(t))
}

func (c *conn) opCreateTopic(req *request, msg []byte) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if e := checkConfigFields(msg); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	cfg, err := engineConfig(req.Config)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	if err := c.srv.b.CreateTopic(req.Topic, cfg); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	t, err := c.srv.b.Describe(req.Topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.replyJSON(req.ID, "topic", wireTopic(t))
}

func (c *conn) opDeleteTopic(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if err := c.srv.b.DeleteTopic(req.Topic); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.reply(req.ID, nil, nil)
}

// opCommit stores a consumer cursor: the next offset the consumer wants.
// The consumer and topic come from the request, or from subscription "sub".
func (c *conn) opCommit(req *request) {
	consumer, topic := req.Consumer, req.Topic
	if req.Sub != 0 {
		s := c.sub(req.Sub)
		if s == nil {
			c.reply(req.ID, nil, wire.Errorf(wire.CodeUnknownSubscription, "no subscription %d on this connection", req.Sub))
			return
		}
		topic = s.topic
		if consumer == "" {
			consumer = s.consumer
		}
	}
	if consumer == "" {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeInvalidRequest, `commit needs "consumer" (or a "sub" subscribed with one)`))
		return
	}
	if err := engine.ValidateConsumerName(consumer); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	if e := validTopic(topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if req.Partition == nil || req.Offset == nil {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeInvalidRequest, `commit needs "partition" and "offset"`))
		return
	}
	// The backend checks the partition and the offset (ErrPartitionOutOfRange,
	// ErrOffsetOutOfRange), under the same look-up as the commit.
	if err := c.srv.b.CommitCursor(consumer, topic, *req.Partition, *req.Offset); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.reply(req.ID, nil, nil)
}
