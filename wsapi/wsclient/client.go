package wsclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// Client is a Go client of /v1/ws, used by the pulse commands. It is safe for
// concurrent use: requests are matched to replies by id, and pushes are
// routed to their Subscription.
type Client struct {
	ws   *websocket.Conn
	addr string

	// wmu serializes writes (gorilla allows one writer at a time): the
	// write pump's, and Close's.
	wmu sync.Mutex
	// out is the write pump's buffer: the frames it writes in one system
	// call (guarded by wmu).
	out []byte

	// qmu guards queue and werr. Requests are queued in the order they
	// were given ids' turn to be sent, and the write pump writes them in
	// that order.
	qmu    sync.Mutex
	queue  []outFrame
	spare  []outFrame // the previous queue's array, for reuse
	queued int        // bytes in queue
	room   *sync.Cond // on qmu: broadcast when the pump took the queue
	werr   error      // why a write failed; nothing is queued after it
	wake   chan struct{}

	// mu guards nextID, pending, subs and err.
	mu      sync.Mutex
	nextID  int64
	pending map[int64]pendingCall
	subs    map[int64]*Subscription // live subscriptions; pushes of others are dropped
	err     error                   // why the connection ended; nil while it lives

	done chan struct{} // closed when the reader ends

	// bufs recycles the encode buffers of produce requests (*[]byte): a
	// request's bytes are not referenced once its frame is written.
	bufs sync.Pool
}

// maxPooledBuf is the largest encode buffer kept for reuse.
const maxPooledBuf = 4 << 20

// Timing of the client's connection (the server's are its own, in package
// wsapi's options.go).
const (
	// writeWait is the time allowed to write one message to the server.
	writeWait = 10 * time.Second
	// closeGrace is how long Close waits for the server's close reply.
	closeGrace = time.Second
)

// encodeFrame sends the frame encode appends to a recycled buffer (the
// write pump recycles it once the frame is written).
func (c *Client) encodeFrame(typ int, encode func(b []byte, id int64) []byte) (*Pending, error) {
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	return c.startFrame(nil, typ, bp, func(id int64) []byte {
		*bp = encode((*bp)[:0], id)
		return *bp
	})
}

// outFrame is a frame waiting for the write pump.
type outFrame struct {
	typ int
	b   []byte
	buf *[]byte // b's recycled buffer, or nil
}

// directFrameBytes is the size from which a frame is written by its
// caller rather than by the write pump.
const directFrameBytes = 32 << 10

// maxQueuedBytes bounds the bytes of the frames waiting for the write pump:
// a caller that sends more waits for the pump (as a blocking write would
// make it wait for the socket), so that a server not reading does not make
// the client hold unbounded memory.
const maxQueuedBytes = 8 << 20

// writePump writes the queued frames until the connection ends: all the
// frames it finds queued at once in one system call, so that a client with
// many requests in flight sends them in few writes (and wakes the server
// few times).
func (c *Client) writePump() {
	for {
		select {
		case <-c.wake:
		case <-c.done:
			c.qmu.Lock()
			if c.werr == nil {
				c.werr = ErrClientClosed
			}
			c.queue, c.queued = nil, 0
			c.room.Broadcast()
			c.qmu.Unlock()
			return
		}
		c.wmu.Lock()
		c.writeQueued()
		c.wmu.Unlock()
	}
}

// writeQueued writes every queued frame, in order; wmu is held. After a
// failed write the connection is closed (the reader then ends every
// pending request with the reason) and nothing more is queued.
func (c *Client) writeQueued() {
	for {
		c.qmu.Lock()
		q := c.queue
		c.queue, c.spare, c.queued = c.spare[:0], nil, 0
		c.room.Broadcast()
		c.qmu.Unlock()
		if len(q) == 0 {
			c.recycle(q)
			return
		}
		nc := c.ws.NetConn()
		nc.SetWriteDeadline(time.Now().Add(writeWait))
		var err error
		out := c.out[:0]
		for i := range q {
			if err == nil {
				if len(out) > 0 && len(out)+maxFrameHeader+len(q[i].b) > wire.MaxWriteBatch {
					_, err = nc.Write(out)
					out = out[:0]
				}
				out = appendFrame(out, q[i].typ, q[i].b)
			}
			if bp := q[i].buf; bp != nil && cap(*bp) <= maxPooledBuf {
				c.bufs.Put(bp)
			}
			q[i] = outFrame{}
		}
		if err == nil {
			_, err = nc.Write(out)
		}
		if cap(out) <= 2*wire.MaxWriteBatch {
			c.out = out[:0]
		}
		if err != nil {
			c.qmu.Lock()
			c.werr = fmt.Errorf("sending request: %w", err)
			c.queue, c.queued = nil, 0
			c.room.Broadcast()
			c.qmu.Unlock()
			c.ws.Close()
			return
		}
		c.recycle(q)
	}
}

// recycle keeps q's array for the next queue.
func (c *Client) recycle(q []outFrame) {
	c.qmu.Lock()
	if c.spare == nil {
		c.spare = q[:0]
	}
	c.qmu.Unlock()
}

// DialOptions configure Dial.
type DialOptions struct {
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// Header is added to the handshake request (Origin, for tests).
	Header http.Header
}

// readBufferSize is the size of the connection's read buffer (Dial).
const readBufferSize = 16 << 10

// Dial connects to a running Pulse. addr is "host:port" or a ws:// URL;
// without a path, /v1/ws is used. An address that is neither is an
// *AddrError; when nothing listens there, the error wraps ErrNotRunning.
func Dial(ctx context.Context, addr string, opts DialOptions) (*Client, error) {
	u, hostport, err := wsURL(addr, "/v1/ws")
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range opts.Header {
		h[k] = v
	}
	if opts.Token != "" {
		h.Set("Authorization", "Bearer "+opts.Token)
	}
	// The write buffer is the library's for control frames and the
	// handshake only: data frames are written by the write pump. A read
	// of at least the read buffer's size into an empty buffer goes
	// straight into the message (bufio.Reader.Read), and the read loop
	// reads each message into a buffer with room to spare (ReadMessage's
	// hint): a small read buffer leaves only the ends of large messages
	// (pushes) to be copied through it, while it still holds many small
	// messages (acks) per read.
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: readBufferSize, WriteBufferSize: 4 << 10}
	ws, resp, err := d.DialContext(ctx, u, h)
	if err != nil {
		return nil, dialError(hostport, resp, err)
	}
	c := &Client{
		ws:      ws,
		addr:    hostport,
		pending: make(map[int64]pendingCall),
		subs:    make(map[int64]*Subscription),
		done:    make(chan struct{}),
		wake:    make(chan struct{}, 1),
	}
	c.room = sync.NewCond(&c.qmu)
	go c.readLoop()
	go c.writePump()
	return c, nil
}

// AddrError is an address Dial cannot take for a Pulse websocket API:
// Reason says what is wrong with it. Callers that took Addr from a flag
// name the flag (errors.As).
type AddrError struct {
	Addr   string
	Reason string
}

func (e *AddrError) Error() string {
	return fmt.Sprintf("server address %q: %s", e.Addr, e.Reason)
}

// wsURL turns "host:port" or a ws(s)://host:port URL (path empty, / or
// path, any query) into a URL with path, and returns its host:port. Any
// other address is an *AddrError, before anything is dialled.
func wsURL(addr, path string) (string, string, error) {
	bad := func(format string, a ...any) error {
		return &AddrError{Addr: addr, Reason: fmt.Sprintf(format, a...)}
	}
	const want = "(want host:port or ws://host:port)"
	full := addr
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok {
		scheme, rest, full = "ws", addr, "ws://"+addr
	}
	if scheme != "ws" && scheme != "wss" {
		return "", "", bad("scheme %s %s", scheme, want)
	}
	hostport := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		hostport = rest[:i]
	}
	if hostport == "" {
		return "", "", bad("no host %s", want)
	}
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return "", "", bad("no port %s", want)
		}
		return "", "", bad("%s %s", strings.TrimPrefix(err.Error(), "address "+hostport+": "), want)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", bad("port %s is not a port number (1 to 65535)", port)
	}
	u, err := url.Parse(full)
	if err != nil {
		return "", "", bad("%v", err)
	}
	if u.User != nil || u.Fragment != "" {
		return "", "", bad("want host:port or ws://host:port, optionally with ?token=")
	}
	switch u.Path {
	case "", "/":
		u.Path = path
	case path:
	default:
		return "", "", bad("path %s is not Pulse's websocket API (leave it out, or %s)", u.Path, path)
	}
	return u.String(), u.Host, nil
}

// dialError explains a failed dial: nothing listening, or a refused handshake.
func dialError(hostport string, resp *http.Response, err error) error {
	if resp != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return fmt.Errorf("pulse at %s refused the connection: %s: %s", hostport, resp.Status, strings.TrimSpace(string(body)))
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial") {
		return fmt.Errorf("%w at %s: start one with `pulse` or `pulse serve`", ErrNotRunning, hostport)
	}
	return fmt.Errorf("connecting to pulse at %s: %w", hostport, err)
}

// Addr is the host:port the client is connected to.
func (c *Client) Addr() string { return c.addr }

// Close sends a normal close frame and ends the connection.
func (c *Client) Close() error {
	c.wmu.Lock()
	c.writeQueued() // the requests sent before Close go first
	c.qmu.Lock()
	if c.werr == nil {
		// Nothing is written after the close frame.
		c.werr = fmt.Errorf("sending request: %w", websocket.ErrCloseSent)
	}
	c.queue, c.queued = nil, 0
	c.room.Broadcast()
	c.qmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(writeWait))
	err := c.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"))
	c.wmu.Unlock()
	if err == nil {
		select {
		case <-c.done:
		case <-time.After(closeGrace):
		}
	}
	c.ws.Close()
	<-c.done
	return nil
}

// Done is closed when the connection has ended; Err says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (a *websocket.CloseError carries the
// server's close code and reason), or nil while it lives.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// envelope is every server message: a reply (ID set) or a push (Sub set
// and no ID).
type envelope struct {
	ID         *int64            `json:"id"`
	Sub        int64             `json:"sub"`
	Error      *wire.Error       `json:"error"`
	Partition  int               `json:"partition"`
	Offset     int64             `json:"offset"`
	Timestamp  int64             `json:"timestamp"`
	Acks       []engine.Ack      `json:"acks"`
	Topics     []wire.TopicInfo  `json:"topics"`
	Topic      json.RawMessage   `json:"topic"`
	Consumer   json.RawMessage   `json:"consumer"` // delete_consumer
	Partitions []wire.StartPos   `json:"partitions"`
	Next       int64             `json:"next"`
	Skipped    int64             `json:"skipped"`
	Records    []json.RawMessage `json:"records"`
}

func (c *Client) readLoop() {
	defer close(c.done)
	var err error
	hint := 512
	for {
		var msg []byte
		var typ int
		typ, msg, err = wire.ReadMessage(c.ws, hint)
		if err != nil {
			break
		}
		hint = max(512, len(msg)+len(msg)/8)
		var env envelope
		var recs []Record // a push's records, when fastPush or binaryPush read them
		if typ == websocket.BinaryMessage {
			if recs = binaryPush(msg, &env); env.Sub == 0 {
				continue // not even a push header: nothing to route it to
			}
		} else if !fastAcks(msg, &env) {
			var ok bool
			if recs, ok = fastPush(msg, &env); !ok && !fastReply(msg, &env) && json.Unmarshal(msg, &env) != nil {
				continue
			}
		}
		if env.Error != nil && env.Acks != nil {
			// A produce that failed part-way: null marks a record that
			// was not stored.
			var partial struct {
				Acks []*engine.Ack `json:"acks"`
			}
			if json.Unmarshal(msg, &partial) == nil {
				env.Error.Stored = partial.Acks
			}
		}
		c.mu.Lock()
		switch {
		case env.ID != nil:
			if pc, ok := c.pending[*env.ID]; ok {
				delete(c.pending, *env.ID)
				if pc.sub != nil && !pc.sub.abandoned && env.Error == nil && env.Sub != 0 {
					// A subscribe reply: the subscription is live before
					// its first push is read.
					pc.sub.ID, pc.sub.Starts = env.Sub, env.Partitions
					c.subs[env.Sub] = pc.sub
				}
				pc.p.deliver(env, true)
			}
			c.mu.Unlock()
		case env.Sub != 0:
			s := c.subs[env.Sub]
			c.mu.Unlock()
			if s != nil {
				s.push(env, recs) // may block: backpressure reaches the server
			}
		default:
			c.mu.Unlock()
		}
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		err = fmt.Errorf("%w: %v", ErrClientClosed, err)
	}
	c.mu.Lock()
	c.err = err
	for id, pc := range c.pending {
		delete(c.pending, id)
		pc.p.deliver(envelope{}, false)
	}
	subs := c.subs
	c.subs = map[int64]*Subscription{}
	c.mu.Unlock()
	for _, s := range subs {
		s.end(err)
	}
}

// Pending is a request sent and not yet answered.
type Pending struct {
	c *Client

	// mu guards state, env and ch. The reader delivers the reply into env;
	// a waiter that finds none yet makes ch, which the delivery closes (most
	// replies of a pipelining producer arrive before anyone waits, and cost
	// no channel).
	mu    sync.Mutex
	state pendingState
	env   envelope
	ch    chan struct{}

	size int // bytes of the request's message (set before it is queued)
}

// Size is the bytes of the request's message: what the server's read
// limit counts (a larger message ends the connection with close 1009).
func (p *Pending) Size() int { return p.size }

// pendingState says whether a Pending's reply has come.
type pendingState uint8

const (
	pendingWaiting pendingState = iota
	pendingReplied              // env holds the reply
	pendingEnded                // the connection ended first
)

// deliver ends p with its reply env (ok), or with the end of the connection.
func (p *Pending) deliver(env envelope, ok bool) {
	p.mu.Lock()
	if ok {
		p.env, p.state = env, pendingReplied
	} else {
		p.state = pendingEnded
	}
	if p.ch != nil {
		close(p.ch)
	}
	p.mu.Unlock()
}

// start sends req (a JSON object without "id") and returns its Pending.
func (c *Client) start(req map[string]any) (*Pending, error) {
	return c.startWith(func(id int64) any { req["id"] = id; return req })
}

// startWith sends the request build returns for a fresh id.
func (c *Client) startWith(build func(id int64) any) (*Pending, error) {
	var merr error
	p, err := c.startRaw(func(id int64) []byte {
		b, err := json.Marshal(build(id))
		merr = err
		return b
	})
	if merr != nil {
		return nil, fmt.Errorf("encoding request: %w", merr)
	}
	return p, err
}

// pendingCall is a request waiting for its reply.
type pendingCall struct {
	p   *Pending
	sub *Subscription // a subscribe's, registered when the reply arrives
}

// startRaw sends the request encoded by build for a fresh id.
func (c *Client) startRaw(build func(id int64) []byte) (*Pending, error) {
	return c.startCall(nil, build)
}

// startCall is startRaw for a subscribe when sub is not nil.
func (c *Client) startCall(sub *Subscription, build func(id int64) []byte) (*Pending, error) {
	return c.startFrame(sub, websocket.TextMessage, nil, build)
}

// startFrame is startCall sending a frame of type typ, which build encodes
// (into *buf, recycled once written, when buf is not nil). The frame is
// queued for the write pump: requests are written in the order their
// startFrame calls queued them.
func (c *Client) startFrame(sub *Subscription, typ int, buf *[]byte, build func(id int64) []byte) (*Pending, error) {
	p := &Pending{c: c}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = pendingCall{p: p, sub: sub}
	c.mu.Unlock()
	b := build(id)
	p.size = len(b)
	var err error
	if b == nil {
		err = errors.New("sending request: request could not be encoded")
	} else {
		c.qmu.Lock()
		for c.werr == nil && c.queued > maxQueuedBytes {
			c.room.Wait()
		}
		direct := len(b) >= directFrameBytes
		if err = c.werr; err == nil {
			c.queue = append(c.queue, outFrame{typ: typ, b: b, buf: buf})
			c.queued += len(b)
			if len(c.queue) == 1 && !direct {
				select {
				case c.wake <- struct{}{}:
				default:
				}
			}
		}
		c.qmu.Unlock()
		if err == nil && direct {
			// A large frame is written by its caller, with what is
			// queued before it: it gains nothing from waiting for
			// others, and its caller waits for the socket as a
			// blocking write would.
			c.wmu.Lock()
			c.writeQueued()
			c.wmu.Unlock()
		}
	}
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, err
	}
	return p, nil
}

// wait returns the reply, the server's *Error, or why the connection ended.
func (p *Pending) wait(ctx context.Context) (envelope, error) {
	p.mu.Lock()
	if p.state == pendingWaiting {
		if p.ch == nil {
			p.ch = make(chan struct{})
		}
		ch := p.ch
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return envelope{}, ctx.Err()
		}
		p.mu.Lock()
	}
	state, env := p.state, p.env
	p.mu.Unlock()
	return p.result(state, env)
}

// result is what wait returns for a Pending in state (not waiting).
func (p *Pending) result(state pendingState, env envelope) (envelope, error) {
	switch {
	case state == pendingEnded:
		return env, p.c.Err()
	case env.Error != nil:
		return env, env.Error
	}
	return env, nil
}

// Poll reports whether the reply has arrived and, if so, the error it
// carries; it does not wait.
func (p *Pending) Poll() (done bool, err error) {
	p.mu.Lock()
	state, env := p.state, p.env
	p.mu.Unlock()
	if state == pendingWaiting {
		return false, nil
	}
	_, err = p.result(state, env)
	return true, err
}

// Err waits for the reply and returns the error it carries, if any.
func (p *Pending) Err(ctx context.Context) error {
	_, err := p.wait(ctx)
	return err
}

// Wait returns the acks of a produce started with ProduceAsync or
// ProduceRecordAsync.
func (p *Pending) Wait(ctx context.Context) ([]engine.Ack, error) {
	env, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	if env.Acks == nil {
		return []engine.Ack{{Partition: env.Partition, Offset: env.Offset, Timestamp: env.Timestamp}}, nil
	}
	return env.Acks, nil
}

func (c *Client) call(ctx context.Context, req map[string]any) (envelope, error) {
	p, err := c.start(req)
	if err != nil {
		return envelope{}, err
	}
	return p.wait(ctx)
}

// ProduceAsync sends a produce of recs to topic (partition -1: the server
// picks per record, unless a record names its own) without waiting for the
// acks. Requests of one client are stored in the order they were sent.
func (c *Client) ProduceAsync(topic string, partition int, recs []wire.RecordIn) (*Pending, error) {
	for i := range recs {
		if v := recs[i].Value; len(v) > 0 && !wire.ValidJSON(v) {
			return nil, fmt.Errorf("record %d: value is not valid JSON (use ValueB64 for bytes)", i)
		}
	}
	return c.encodeFrame(websocket.TextMessage, func(b []byte, id int64) []byte {
		return appendProduceRequest(b, id, topic, partition, recs)
	})
}

// appendProduceRequest encodes a produce request by hand: it is the hot
// path of a producing client, and reflection would cost more than the
// network. Values must be valid JSON (checked by the caller).
func appendProduceRequest(b []byte, id int64, topic string, partition int, recs []wire.RecordIn) []byte {
	size := 64 + len(topic)
	for i := range recs {
		size += 32 + len(recs[i].Value)
		if recs[i].Key != nil {
			size += len(*recs[i].Key) + 8
		}
	}
	b = slices.Grow(b, size)
	b = appendProduceHeader(b, id, topic, partition)
	b = append(b, `,"records":[`...)
	for i := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRecordIn(b, &recs[i])
	}
	return append(b, "]}"...)
}

// appendProduceHeader opens a produce request: op, id, topic and partition
// (-1: none), without the closing brace.
func appendProduceHeader(b []byte, id int64, topic string, partition int) []byte {
	b = append(b, `{"op":"produce","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"topic":`...)
	b = wire.AppendJSONString(b, []byte(topic))
	if partition >= 0 {
		b = append(b, `,"partition":`...)
		b = strconv.AppendInt(b, int64(partition), 10)
	}
	return b
}

// appendBinaryProduce encodes a binary produce frame (see
// decodeBinaryProduce): id, topic and partition (-1: none) in the header.
func appendBinaryProduce(b []byte, id int64, topic string, partition int, recs []engine.Record) []byte {
	size := 64 + len(topic)
	for i := range recs {
		size += 16 + len(recs[i].Key) + len(recs[i].Value)
		for _, h := range recs[i].Headers {
			size += 10 + len(h.Key) + len(h.Value)
		}
	}
	b = slices.Grow(b, size)
	b = appendProduceHeader(b, id, topic, partition)
	b = append(b, "}\n"...)
	return wire.AppendBinaryRecords(b, recs)
}

// appendRecordIn encodes one record of a produce request.
func appendRecordIn(b []byte, r *wire.RecordIn) []byte {
	b = append(b, '{')
	open := len(b) // no field written yet while len(b) == open
	sep := func(b []byte, name string) []byte {
		if len(b) != open {
			b = append(b, ',')
		}
		return append(b, name...)
	}
	if r.Key != nil {
		b = wire.AppendJSONString(sep(b, `"key":`), []byte(*r.Key))
	}
	if r.KeyB64 != nil {
		b = wire.AppendJSONString(sep(b, `"key_b64":`), []byte(*r.KeyB64))
	}
	if len(r.Value) > 0 {
		b = append(sep(b, `"value":`), r.Value...)
	}
	if r.ValueB64 != nil {
		b = wire.AppendJSONString(sep(b, `"value_b64":`), []byte(*r.ValueB64))
	}
	if r.Tombstone {
		b = sep(b, `"tombstone":true`)
	}
	b = appendStringMap(b, sep, `"headers":{`, r.Headers)
	b = appendStringMap(b, sep, `"headers_b64":{`, r.HeadersB64)
	if r.Partition != nil {
		b = strconv.AppendInt(sep(b, `"partition":`), int64(*r.Partition), 10)
	}
	return append(b, '}')
}

// appendStringMap appends the field name (with its opening brace) and the
// JSON object of m, unless m is empty.
func appendStringMap(b []byte, sep func([]byte, string) []byte, name string, m map[string]string) []byte {
	if len(m) == 0 {
		return b
	}
	b = sep(b, name)
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = wire.AppendJSONString(b, []byte(k))
		b = append(b, ':')
		b = wire.AppendJSONString(b, []byte(v))
	}
	return append(b, '}')
}

// ProduceBytesAsync sends a produce of recs to topic (partition -1: the
// server picks per record) in a binary frame, without waiting for the acks:
// keys, values and header values are stored exactly as they are, without
// JSON encoding on either side, which makes it the fastest way to produce
// batches. Each record's Key, Value and Headers are used (a nil Value is a
// tombstone); Offset and Timestamp are ignored. Requests of one client are
// stored in the order they were sent.
func (c *Client) ProduceBytesAsync(topic string, partition int, recs []engine.Record) (*Pending, error) {
	if len(recs) == 0 {
		return nil, errors.New("produce of no records")
	}
	return c.encodeFrame(websocket.BinaryMessage, func(b []byte, id int64) []byte {
		return appendBinaryProduce(b, id, topic, partition, recs)
	})
}

// ProduceBytes is ProduceBytesAsync waiting for one ack per record.
func (c *Client) ProduceBytes(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	p, err := c.ProduceBytesAsync(topic, partition, recs)
	if err != nil {
		return nil, err
	}
	return p.Wait(ctx)
}

// ProduceRecordAsync sends a produce of one inline record (the request form
// without "records") without waiting for the ack.
func (c *Client) ProduceRecordAsync(topic string, partition int, rec wire.RecordIn) (*Pending, error) {
	if v := rec.Value; len(v) > 0 && !wire.ValidJSON(v) {
		return nil, errors.New("value is not valid JSON (use ValueB64 for bytes)")
	}
	return c.encodeFrame(websocket.TextMessage, func(b []byte, id int64) []byte {
		return appendProduceRecord(b, id, topic, partition, &rec)
	})
}

// appendProduceRecord encodes a produce request of one inline record: the
// request's fields, then the record's own fields without its partition (the
// request's wins, as on the server). The value must be valid JSON (checked
// by the caller).
func appendProduceRecord(b []byte, id int64, topic string, partition int, rec *wire.RecordIn) []byte {
	size := 96 + len(topic) + len(rec.Value)
	if rec.Key != nil {
		size += len(*rec.Key) + 8
	}
	b = slices.Grow(b, size)
	b = appendProduceHeader(b, id, topic, partition)
	r := *rec
	r.Partition = nil
	start := len(b)
	b = appendRecordIn(b, &r)
	if len(b)-start == 2 { // {}: no field
		return append(b[:start], '}')
	}
	b[start] = ',' // the record's fields continue the request's
	return b
}

// Produce sends recs and waits for one ack per record.
func (c *Client) Produce(ctx context.Context, topic string, partition int, recs []wire.RecordIn) ([]engine.Ack, error) {
	p, err := c.ProduceAsync(topic, partition, recs)
	if err != nil {
		return nil, err
	}
	return p.Wait(ctx)
}

// Topics lists every topic.
func (c *Client) Topics(ctx context.Context) ([]wire.TopicInfo, error) {
	env, err := c.call(ctx, map[string]any{"op": "topics"})
	return env.Topics, err
}

// Describe returns one topic.
func (c *Client) Describe(ctx context.Context, topic string) (wire.TopicInfo, error) {
	env, err := c.call(ctx, map[string]any{"op": "describe", "topic": topic})
	if err != nil {
		return wire.TopicInfo{}, err
	}
	var t wire.TopicInfo
	return t, json.Unmarshal(env.Topic, &t)
}

// CreateTopic creates a topic; zero fields of cfg take the defaults.
func (c *Client) CreateTopic(ctx context.Context, topic string, cfg wire.TopicConfig) (wire.TopicInfo, error) {
	env, err := c.call(ctx, map[string]any{"op": "create_topic", "topic": topic, "config": cfg})
	if err != nil {
		return wire.TopicInfo{}, err
	}
	var t wire.TopicInfo
	return t, json.Unmarshal(env.Topic, &t)
}

// DeleteTopic deletes a topic and its data.
func (c *Client) DeleteTopic(ctx context.Context, topic string) error {
	_, err := c.call(ctx, map[string]any{"op": "delete_topic", "topic": topic})
	return err
}

// Commit stores consumer's cursor for one partition: the next offset it
// wants to read.
func (c *Client) Commit(ctx context.Context, consumer, topic string, partition int, offset int64) error {
	_, err := c.call(ctx, map[string]any{"op": "commit", "consumer": consumer, "topic": topic, "partition": partition, "offset": offset})
	return err
}

// SubscribeOptions say what to subscribe to.
type SubscribeOptions struct {
	Topic string
	// Partition is one partition, or -1 for all of them.
	Partition int
	// From is "earliest", "latest" (the default), an offset ("42") or a
	// timestamp in Unix ms ("@1700000000000").
	From string
	// Consumer, when set, resumes from the consumer's committed cursors.
	Consumer string
	// Buffer is how many pushes the Subscription channel holds (default 16).
	Buffer int
	// Binary asks for binary pushes ("format":"binary", docs/websocket.md):
	// the records arrive on C as with JSON pushes, without JSON on either
	// side, and without Raw.
	Binary bool
}

// Subscription receives the pushes of one subscribe.
type Subscription struct {
	c      *Client
	ID     int64
	Starts []wire.StartPos // where each partition starts

	ch   chan Push
	quit chan struct{} // closed when the subscription ends
	// abandoned is set (under c.mu) when Subscribe gave up waiting for the
	// reply, so that the read loop does not register it.
	abandoned bool
	// sendMu is held while a push is sent on ch, so that end closes ch only
	// when no send is under way.
	sendMu sync.Mutex
	mu     sync.Mutex // guards err
	err    error
	once   sync.Once
}

// end closes C with err as the reason; only the first call counts.
func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.quit)
		s.sendMu.Lock()
		close(s.ch)
		s.sendMu.Unlock()
	})
}

// Push is one delivery: records of one partition in offset order, or an
// error ending that partition's delivery.
type Push struct {
	Partition int
	Next      int64 // offset after the last record: what to commit
	Skipped   int64 // records skipped in a corrupt range before these
	Records   []Record
	Err       *wire.Error
}

// Record is one record as the server sent it. Its Key, Value and header
// values may be sub-slices of the message it arrived in (JSON or binary
// push), which the client reads into a buffer of its own and never reuses:
// they stay valid, keep that message in memory while held, and share it
// with Raw and the push's other records (copy before modifying one).
type Record struct {
	Partition int
	Offset    int64
	Timestamp int64
	Key       []byte // nil: no key
	Value     []byte // nil: tombstone
	Headers   []engine.Header
	// Raw is the record's JSON as sent by the server (nil in a binary
	// push).
	Raw json.RawMessage
}

// Subscribe starts a subscription. Its pushes arrive on C until the
// subscription or the connection ends.
func (c *Client) Subscribe(ctx context.Context, o SubscribeOptions) (*Subscription, error) {
	req := map[string]any{"op": "subscribe", "topic": o.Topic}
	if o.Partition >= 0 {
		req["partition"] = o.Partition
	}
	if o.Consumer != "" {
		req["consumer"] = o.Consumer
	}
	if o.Binary {
		req["format"] = wire.FormatBinary
	} else {
		// The pushes then say where each value ends (fastPush); a server
		// older than the field ignores it, and its pushes are checked in
		// full.
		req["value_lens"] = true
	}
	from, err := wire.ParseFromText(o.From)
	if err != nil {
		return nil, err
	}
	switch from.Kind {
	case wire.FromEarliest:
		req["from"] = "earliest"
	case wire.FromLatest:
		req["from"] = "latest"
	case wire.FromOffset:
		req["from"] = map[string]int64{"offset": from.N}
	case wire.FromTimestamp:
		req["from"] = map[string]int64{"timestamp": from.N}
	}
	if o.Buffer <= 0 {
		o.Buffer = 16
	}
	s := &Subscription{c: c, ch: make(chan Push, o.Buffer), quit: make(chan struct{})}
	p, err := c.startCall(s, func(id int64) []byte {
		req["id"] = id
		b, _ := json.Marshal(req)
		return b
	})
	if err != nil {
		return nil, err
	}
	if _, err := p.wait(ctx); err != nil {
		c.mu.Lock()
		s.abandoned = true
		registered := s.ID != 0 && c.subs[s.ID] == s
		c.mu.Unlock()
		if registered {
			// The caller gave up waiting after all: stop it.
			s.stopLocal()
			c.start(map[string]any{"op": "unsubscribe", "sub": s.ID})
		}
		return nil, err
	}
	return s, nil
}

// stopLocal ends the subscription on this side: C closes, and pushes still
// arriving for it are dropped.
func (s *Subscription) stopLocal() {
	s.c.mu.Lock()
	if s.c.subs[s.ID] == s {
		delete(s.c.subs, s.ID)
	}
	s.c.mu.Unlock()
	s.end(nil)
}

// C delivers the pushes; it is closed when the subscription ends.
func (s *Subscription) C() <-chan Push { return s.ch }

// Err says why C was closed.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Unsubscribe stops the subscription: C closes at once (pushes still on
// their way are dropped), then the server is told.
func (s *Subscription) Unsubscribe(ctx context.Context) error {
	s.stopLocal()
	_, err := s.c.call(ctx, map[string]any{"op": "unsubscribe", "sub": s.ID})
	return err
}

// Commit stores the subscription consumer's cursor for one partition and
// waits for the server to confirm it. While Commit waits, the client keeps
// delivering pushes to C: a caller that commits from the loop reading C and
// lets C fill up (Buffer pushes) blocks the connection; use CommitAsync
// there.
func (s *Subscription) Commit(ctx context.Context, partition int, offset int64) error {
	p, err := s.CommitAsync(partition, offset)
	if err != nil {
		return err
	}
	return p.Err(ctx)
}

// CommitAsync sends a commit without waiting for its confirmation.
func (s *Subscription) CommitAsync(partition int, offset int64) (*Pending, error) {
	return s.c.start(map[string]any{"op": "commit", "sub": s.ID, "partition": partition, "offset": offset})
}

// push delivers one push; recs, when not nil, are env.Records already
// decoded (fastPush).
func (s *Subscription) push(env envelope, recs []Record) {
	p := Push{Partition: env.Partition, Next: env.Next, Skipped: env.Skipped, Err: env.Error}
	if recs != nil {
		p.Records = recs
	}
	for _, raw := range env.Records[min(len(recs), len(env.Records)):] {
		r, err := DecodeRecord(raw)
		if err != nil {
			p.Err = wire.Errorf(wire.CodeInvalidJSON, "record from server: %v", err)
			break
		}
		p.Records = append(p.Records, r)
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	select {
	case <-s.quit:
		return
	default:
	}
	select {
	case s.ch <- p:
	case <-s.quit:
	}
}

// DecodeRecord parses one record of a push or of the tail endpoint.
func DecodeRecord(raw []byte) (Record, error) {
	if r, ok := fastRecord(raw); ok {
		return r, nil
	}
	return decodeRecordJSON(raw)
}

// decodeRecordJSON is DecodeRecord with encoding/json, for every record.
func decodeRecordJSON(raw []byte) (Record, error) {
	var w struct {
		Partition  int               `json:"partition"`
		Offset     int64             `json:"offset"`
		Timestamp  int64             `json:"timestamp"`
		Key        *string           `json:"key"`
		KeyB64     *string           `json:"key_b64"`
		Value      json.RawMessage   `json:"value"`
		ValueB64   *string           `json:"value_b64"`
		Tombstone  bool              `json:"tombstone"`
		Headers    map[string]string `json:"headers"`
		HeadersB64 map[string]string `json:"headers_b64"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return Record{}, err
	}
	r := Record{Partition: w.Partition, Offset: w.Offset, Timestamp: w.Timestamp, Raw: json.RawMessage(raw)}
	var err error
	switch {
	case w.Key != nil:
		r.Key = []byte(*w.Key)
	case w.KeyB64 != nil:
		if r.Key, err = base64.StdEncoding.DecodeString(*w.KeyB64); err != nil {
			return r, fmt.Errorf("key_b64: %w", err)
		}
	}
	switch {
	case w.Tombstone:
	case w.ValueB64 != nil:
		if r.Value, err = base64.StdEncoding.DecodeString(*w.ValueB64); err != nil {
			return r, fmt.Errorf("value_b64: %w", err)
		}
	case len(w.Value) > 0 && w.Value[0] == '"':
		var s string
		if err := json.Unmarshal(w.Value, &s); err != nil {
			return r, fmt.Errorf("value: %w", err)
		}
		r.Value = []byte(s)
	default:
		r.Value = []byte(w.Value)
	}
	for k, v := range w.Headers {
		r.Headers = append(r.Headers, engine.Header{Key: k, Value: []byte(v)})
	}
	for k, v := range w.HeadersB64 {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return r, fmt.Errorf("headers_b64: %w", err)
		}
		r.Headers = append(r.Headers, engine.Header{Key: k, Value: b})
	}
	if len(r.Headers) > 1 {
		// The object's order is gone with the maps: the headers come in
		// their names' order, the order a JSON produce stores them in.
		slices.SortFunc(r.Headers, func(a, b engine.Header) int { return strings.Compare(a.Key, b.Key) })
	}
	return r, nil
}
