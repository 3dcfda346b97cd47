package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

type connMode int

const (
	modeMux     connMode = iota // GET /v1/ws
	modeProduce                 // GET /v1/topics/{topic}/produce
	modeTail                    // GET /v1/topics/{topic}/tail
)

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

	// ctx lives as long as the connection; cancel ends it (every
	// subscription and the produce worker watch it).
	ctx    context.Context
	cancel context.CancelFunc

	send     chan []byte   // replies and pushes for the write pump
	queued   atomic.Int64  // bytes waiting in send
	closeReq chan closeMsg // buffered 1; the first close request wins
	closingC chan struct{} // closed with the first close request
	closeOne sync.Once
	readDone chan struct{} // closed when the read pump returns

	inflight atomic.Int64 // produce requests accepted and not yet answered

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
		srv:      s,
		ws:       ws,
		mode:     mode,
		send:     make(chan []byte, s.opts.SendQueue),
		closeReq: make(chan closeMsg, 1),
		closingC: make(chan struct{}),
		readDone: make(chan struct{}),
		produceQ: make(chan *produceJob, s.opts.MaxInflight),
		subs:     make(map[int64]*subscription),
	}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

// queueLimit is the most bytes send holds for records of ordinary size:
// SendQueue messages, each at most a push of about 2×PushBytes of JSON or
// the ack of maxRequestRecords records. (A single record larger than that
// travels alone in its push, so the true bound also grows with the largest
// record.)
func (c *conn) queueLimit() int64 {
	return int64(c.srv.opts.SendQueue) * int64(max(2*c.srv.opts.PushBytes+64<<10, maxRequestRecords*64))
}

// run starts the write pump and the produce worker, runs the read pump in
// the calling goroutine, and returns once every goroutine of the connection
// has ended.
func (c *conn) run(r *http.Request, topic string) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writePump() }()
	go func() { defer wg.Done(); c.produceWorker() }()
	switch c.mode {
	case modeProduce:
		c.startPlainProduce(r, topic)
	case modeTail:
		c.startPlainTail(r, topic)
	}
	c.readPump()
	c.cancel()
	c.stopSubs()
	wg.Wait()
}

// readPump reads messages until the peer goes away or the connection is
// closed. SetReadLimit comes before the first read; a larger message makes
// the library send close 1009 and end the read.
func (c *conn) readPump() {
	defer close(c.readDone)
	c.ws.SetReadLimit(c.srv.opts.ReadLimit)
	c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(pongWait)) })
	hint := 512
	for {
		typ, msg, err := readMessage(c.ws, hint)
		hint = max(512, len(msg)+len(msg)/8)
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
		c.ws.SetReadDeadline(time.Now().Add(pongWait))
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
			c.handlePlainProduce(msg)
		case modeTail:
			// Tail connections only receive; anything sent is ignored.
		}
	}
}

// readMessage is ws.ReadMessage with the buffer sized from a hint (the
// size of the connection's previous messages), so that a producer's
// similar-sized batches are read without growing a buffer from scratch each
// time. The read limit applies as with ReadMessage.
func readMessage(ws *websocket.Conn, hint int) (int, []byte, error) {
	typ, r, err := ws.NextReader()
	if err != nil {
		return typ, nil, err
	}
	b := make([]byte, 0, hint)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return typ, b, nil
		}
		if err != nil {
			return typ, nil, err
		}
	}
}

// writePump writes queued messages and pings, and the close frame when one
// is requested. It is the connection's only writer.
func (c *conn) writePump() {
	ticker := time.NewTicker(pingPeriod)
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
			c.queued.Add(-int64(len(msg)))
			c.ws.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
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

// writeClose writes what is queued (when cm.flush), then the close frame,
// then gives the peer closeGrace to answer before the socket is closed.
func (c *conn) writeClose(cm closeMsg) {
	if cm.flush {
		for n := len(c.send); n > 0; n-- {
			msg := <-c.send
			c.queued.Add(-int64(len(msg)))
			c.ws.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
				return
			}
		}
	}
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	if err := c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(cm.code, cm.reason)); err != nil {
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
		if len(reason) > 120 { // a close frame's payload is at most 125 bytes
			reason = reason[:120]
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
			if c.closeWith(websocket.CloseTryAgainLater,
				"slow consumer: send queue full for "+c.srv.opts.SlowConsumerWait.String(), false) {
				c.srv.slowClosed.Add(1)
			}
		}
	}
	c.queued.Add(-int64(len(msg)))
	return false
}

// reply queues the answer to request id: fields is a JSON object body
// without braces (nil for {"id":..,"ok":true}), or err.
func (c *conn) reply(id json.RawMessage, fields []byte, err *Error) {
	b := make([]byte, 0, 64+len(fields))
	b = append(b, '{')
	if len(id) > 0 {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	switch {
	case err != nil:
		b = appendErrorField(b, err)
	case fields == nil:
		b = append(b, `"ok":true`...)
	default:
		b = append(b, fields...)
	}
	b = append(b, '}')
	c.enqueue(b)
}

// replyJSON queues {"id":..,"<name>":v}.
func (c *conn) replyJSON(id json.RawMessage, name string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		c.reply(id, nil, errorf(CodeInternal, "encoding reply: %v", err))
		return
	}
	f := make([]byte, 0, len(name)+3+len(body))
	f = appendJSONString(f, []byte(name))
	f = append(f, ':')
	f = append(f, body...)
	c.reply(id, f, nil)
}

func appendErrorField(b []byte, e *Error) []byte {
	b = append(b, `"error":{"code":`...)
	b = appendJSONString(b, []byte(e.Code))
	b = append(b, `,"message":`...)
	b = appendJSONString(b, []byte(e.Message))
	return append(b, '}')
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

// acceptProduce queues job for the produce worker, or says why not.
func (c *conn) acceptProduce(job *produceJob) *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return errorf(CodeShuttingDown, "server shutting down: produce refused, nothing was written")
	}
	if n := c.inflight.Load(); n >= int64(c.srv.opts.MaxInflight) {
		return errorf(CodeRateLimited, "%d produce requests are waiting for their ack (limit %d): wait for acks before sending more", n, c.srv.opts.MaxInflight)
	}
	c.inflight.Add(1)
	c.produceQ <- job // never blocks: len(produceQ) <= inflight < cap
	return nil
}

// handle dispatches one request of /v1/ws.
func (c *conn) handle(msg []byte) {
	var req request
	if !fastDecode(msg, &req) {
		req = request{}
		if err := json.Unmarshal(msg, &req); err != nil {
			c.reply(nil, nil, errorf(CodeInvalidJSON, "request is not a JSON object: %v", err))
			return
		}
	}
	if c.isDraining() && req.Op != "" {
		c.reply(req.ID, nil, errorf(CodeShuttingDown, "server shutting down: %s refused", req.Op))
		return
	}
	switch req.Op {
	case "produce":
		c.opProduce(&req)
	case "subscribe":
		c.opSubscribe(&req)
	case "unsubscribe":
		c.opUnsubscribe(&req)
	case "commit":
		c.opCommit(&req)
	case "topics":
		c.opTopics(&req)
	case "describe":
		c.opDescribe(&req)
	case "create_topic":
		c.opCreateTopic(&req)
	case "delete_topic":
		c.opDeleteTopic(&req)
	case "alter_topic":
		c.opAlterTopic(&req, msg)
	case "consumers":
		c.opConsumers(&req)
	case "offset_for_time":
		c.opOffsetForTime(&req, msg)
	case "":
		c.reply(req.ID, nil, errorf(CodeInvalidRequest, `request has no "op"`))
	default:
		c.reply(req.ID, nil, errorf(CodeUnknownOp, "unknown op %q (want produce, subscribe, unsubscribe, commit, topics, describe, create_topic or delete_topic)", req.Op))
	}
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
	out := make([]TopicInfo, 0, len(ts))
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

func (c *conn) opCreateTopic(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	cfg, err := req.Config.engineConfig()
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
			c.reply(req.ID, nil, errorf(CodeUnknownSubscription, "no subscription %d on this connection", req.Sub))
			return
		}
		topic = s.topic
		if consumer == "" {
			consumer = s.consumer
		}
	}
	if consumer == "" {
		c.reply(req.ID, nil, errorf(CodeInvalidRequest, `commit needs "consumer" (or a "sub" subscribed with one)`))
		return
	}
	if e := validTopic(topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if req.Partition == nil || req.Offset == nil {
		c.reply(req.ID, nil, errorf(CodeInvalidRequest, `commit needs "partition" and "offset"`))
		return
	}
	p, off := *req.Partition, *req.Offset
	t, err := c.srv.b.Describe(topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	if p < 0 || p >= len(t.Partitions) {
		c.reply(req.ID, nil, errorf(CodePartitionOutOfRange, "partition %d of topic %q: the topic has %d", p, topic, len(t.Partitions)))
		return
	}
	if pi := t.Partitions[p]; off < 0 || off > pi.LEO {
		c.reply(req.ID, nil, errorf(CodeOffsetOutOfRange, "offset %d of %s/%d: the log ends at %d", off, topic, p, pi.LEO))
		return
	}
	if err := c.srv.b.CommitCursor(consumer, topic, p, off); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.reply(req.ID, nil, nil)
}

// appendAck appends {"partition":..,"offset":..,"timestamp":..} fields
// (without braces).
func appendAckFields(b []byte, p int, off, ts int64) []byte {
	b = append(b, `"partition":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, off, 10)
	b = append(b, `,"timestamp":`...)
	return strconv.AppendInt(b, ts, 10)
}
