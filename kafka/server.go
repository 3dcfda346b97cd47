package kafka

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// nodeID is Pulse's broker id: the only broker, leader of every partition.
const nodeID = 0

// Server serves the Kafka protocol for one engine. Create it with New.
type Server struct {
	eng     *engine.Engine
	records RecordPath // produce and fetch reads: Options.Records, else eng
	opts    Options
	groups  *coordinator
	pids    *producers

	bigBuffers chan []byte // response buffers kept between responses (putBigBuffer)

	ctx    context.Context // cancelled by Close: ends long-polls and joins
	cancel context.CancelFunc

	// mu guards listeners, conns, host, port and closed.
	mu        sync.Mutex
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	host      string
	port      int32
	closed    bool

	wg sync.WaitGroup // connection goroutines

	unregister func() // removes the server from the engine's member sources (Close)
}

// New returns a server for eng; nothing is served until Serve.
func New(eng *engine.Engine, opts Options) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{eng: eng, records: opts.Records, opts: opts.withDefaults(), pids: newProducers(), bigBuffers: make(chan []byte, keptBigBuffers), ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}}
	if s.records == nil {
		s.records = eng
	}
	s.groups = newCoordinator(s)
	// The engine shows the groups' live members and refuses to delete a
	// group's cursors under them (engine.DeleteConsumer).
	s.unregister = eng.AddMemberSource(s)
	return s
}

// Serve accepts connections on l until Close; it returns ErrServerClosed
// after Close.
func (s *Server) Serve(l net.Listener) error {
	adv := s.opts.Advertise
	if adv == "" {
		adv = l.Addr().String()
	}
	host, portStr, err := net.SplitHostPort(adv)
	if err != nil {
		return fmt.Errorf("kafka: advertised address %q: %w", adv, err)
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil {
		return fmt.Errorf("kafka: advertised port %q: %w", portStr, err)
	}
	// A listener on every interface (0.0.0.0, [::], :PORT) reports the
	// unspecified address, which no client can connect to (librdkafka
	// cannot even resolve "::"): each of its connections is told the
	// address it reached Pulse at instead, so a client on this machine
	// follows 127.0.0.1 and one on the network the interface's address.
	// Addr reports 127.0.0.1 for it.
	ip := net.ParseIP(host)
	wildcard := s.opts.Advertise == "" && (host == "" || ip != nil && ip.IsUnspecified())
	if wildcard {
		host = "127.0.0.1"
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners = append(s.listeners, l)
	if s.host == "" {
		s.host, s.port = host, int32(port)
	}
	s.mu.Unlock()
	s.groups.start()

	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("kafka: accept: %w", err)
		}
		s.mu.Lock()
		if s.closed || len(s.conns) >= s.opts.MaxConns {
			s.mu.Unlock()
			s.opts.Logger.Warn("kafka: connection refused", "remote", c.RemoteAddr().String(), "reason", "connection limit or closing")
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c, wildcard)
	}
}

// Close stops the listeners, ends long-polls and closes every connection,
// then waits for their goroutines. Requests being answered (a produce
// waiting for its fsync) finish first.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		// Unblock reads; a response being written still gets out.
		c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.groups.stop()
	s.unregister()
	return nil
}

// Addr is the advertised address ("" before Serve).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.host == "" {
		return ""
	}
	return net.JoinHostPort(s.host, strconv.Itoa(int(s.port)))
}

func (s *Server) advertised() (string, int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host, s.port
}

// peer is what the handlers know of a connection: the client's host (as
// Kafka shows it, "/IP") and the address Metadata and FindCoordinator
// advertise to it.
type peer struct {
	host    string
	advHost string
	advPort int32
	// skipOnly holds, per partition, the offset this connection's last
	// fetch of it was answered at with only a batch of no records (a
	// corrupt or lost range up to the HWM): a fetch at it again waits as at
	// the HWM (fetch.go).
	skipOnly map[topicPartition]int64
}

// topicPartition names one partition of a topic.
type topicPartition struct {
	topic     string
	partition int32
}

// serveConn answers the requests of one connection in order. A connection
// of a wildcard listener is advertised the local address it connected to.
func (s *Server) serveConn(c net.Conn, wildcard bool) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	br := bufio.NewReaderSize(c, 64<<10)
	pr := peer{host: clientHost(c.RemoteAddr()), skipOnly: map[topicPartition]int64{}}
	pr.advHost, pr.advPort = s.advertised()
	if la, ok := c.LocalAddr().(*net.TCPAddr); ok && wildcard {
		pr.advHost, pr.advPort = la.IP.String(), int32(la.Port)
	}
	var out []byte
	var body bytes.Buffer
	for {
		if !s.armRead(c) {
			return
		}
		req, err := readFrame(br, &body, s.opts.MaxRequestBytes, func() { c.SetReadDeadline(time.Now().Add(s.opts.FrameTimeout)) })
		if err != nil {
			if !errors.Is(err, io.EOF) && s.ctx.Err() == nil {
				s.opts.Logger.Warn("kafka: closing connection", "remote", c.RemoteAddr().String(), "err", err)
			}
			return
		}
		if out == nil {
			out = s.getBigBuffer()
		}
		out, err = s.handle(out[:0], req, pr)
		if err != nil {
			s.opts.Logger.Warn("kafka: closing connection", "remote", c.RemoteAddr().String(), "err", err)
			return
		}
		if len(out) == 0 {
			continue // acks=0 produce: no response
		}
		c.SetWriteDeadline(time.Now().Add(s.opts.FrameTimeout))
		if _, err := c.Write(out); err != nil {
			return
		}
		if cap(out) > keptResponseBuffer {
			// A large response buffer goes back to the server's few, so
			// that connections share what big fetches need.
			s.putBigBuffer(out)
			out = nil
		}
		if body.Cap() > 4<<20 {
			body = bytes.Buffer{}
		}
	}
}

const (
	// keptResponseBuffer is the largest response buffer a connection
	// keeps to itself; larger ones (fetch responses) go to the server's
	// bigBuffers.
	keptResponseBuffer = 1 << 20
	// keptBigBuffers response buffers of at most maxKeptBigBuffer bytes
	// are kept between responses for any connection to use.
	keptBigBuffers   = 2
	maxKeptBigBuffer = 32 << 20
)

// getBigBuffer returns an empty kept response buffer, or nil.
func (s *Server) getBigBuffer() []byte {
	select {
	case b := <-s.bigBuffers:
		return b[:0]
	default:
		return nil
	}
}

// putBigBuffer keeps b for a later response unless keptBigBuffers are kept
// already or it is too large to keep.
func (s *Server) putBigBuffer(b []byte) {
	if cap(b) <= maxKeptBigBuffer {
		select {
		case s.bigBuffers <- b[:0]:
		default:
		}
	}
}

// armRead sets c's idle deadline unless the server is closing. Close sets
// every connection's deadline under the same lock, so a connection either
// sees closed here or has its deadline cut short by Close.
func (s *Server) armRead(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	c.SetReadDeadline(time.Now().Add(s.opts.IdleTimeout))
	return true
}

// readFrame reads one size-prefixed frame into body and returns its bytes
// (valid until the next call). The body is read into a buffer that grows
// with what actually arrives, so a frame that announces a large size costs
// only the bytes sent. started is called once the size has arrived.
func readFrame(r io.Reader, body *bytes.Buffer, limit int, started func()) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	switch {
	case n < 8: // api key, version, correlation id at least
		return nil, fmt.Errorf("%w: frame size %d", ErrBadFrame, n)
	case int64(n) > int64(limit):
		return nil, fmt.Errorf("%w: frame of %d bytes, the limit is %d", ErrRequestTooLarge, n, limit)
	}
	started()
	body.Reset()
	if _, err := io.CopyN(body, r, int64(n)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: reading a %d-byte frame: %w", ErrBadFrame, n, err)
	}
	return body.Bytes(), nil
}

// header is a parsed request header.
type header struct {
	key, version int16
	correlation  int32
	clientID     string
}

// parseRequest decodes one request frame (without its size prefix). It
// returns the header even when the body cannot be decoded, so that an
// ApiVersions of an unserved version can still be answered.
func parseRequest(frame []byte) (header, kmsg.Request, error) {
	var h header
	if len(frame) < 10 {
		return h, nil, fmt.Errorf("%w: %d-byte header", ErrBadFrame, len(frame))
	}
	h.key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.correlation = int32(binary.BigEndian.Uint32(frame[4:]))
	idLen := int(int16(binary.BigEndian.Uint16(frame[8:])))
	rest := frame[10:]
	if idLen > 0 {
		if idLen > len(rest) {
			return h, nil, fmt.Errorf("%w: client id of %d bytes in a %d-byte frame", ErrBadFrame, idLen, len(frame))
		}
		h.clientID, rest = string(rest[:idLen]), rest[idLen:]
	}
	rng, ok := served(h.key)
	if !ok {
		return h, nil, fmt.Errorf("%w: key %d (%s)", ErrUnknownKey, h.key, kmsg.NameForKey(h.key))
	}
	if h.version < rng.min || h.version > rng.max {
		return h, nil, fmt.Errorf("%w: %s v%d, Pulse serves v%d-v%d", errUnsupportedVersion, kmsg.NameForKey(h.key), h.version, rng.min, rng.max)
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if req.IsFlexible() {
		var err error
		if rest, err = skipTags(rest); err != nil {
			return h, nil, fmt.Errorf("%w: header tags: %w", ErrBadFrame, err)
		}
	}
	if err := req.ReadFrom(rest); err != nil {
		return h, nil, fmt.Errorf("%w: %s v%d body: %w", ErrBadFrame, kmsg.NameForKey(h.key), h.version, err)
	}
	return h, req, nil
}

var errUnsupportedVersion = errors.New("kafka: unsupported version")

// skipTags skips a tagged-field section (KIP-482).
func skipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, io.ErrUnexpectedEOF
	}
	b = b[k:]
	for range n {
		_, k := binary.Uvarint(b) // tag
		if k <= 0 {
			return nil, io.ErrUnexpectedEOF
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, io.ErrUnexpectedEOF
		}
		b = b[k+int(size):]
	}
	return b, nil
}

// clientHost is a client's address as Kafka's DescribeGroups shows it
// ("/127.0.0.1").
func clientHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return "/" + ta.IP.String()
	}
	return "/" + a.String()
}

// handle answers one request frame from the client pr, appending the
// size-prefixed response to out. An empty result means no response
// (acks=0); an error closes the connection.
func (s *Server) handle(out []byte, frame []byte, pr peer) ([]byte, error) {
	h, req, err := parseRequest(frame)
	if err != nil {
		if h.key == int16(kmsg.ApiVersions) && errors.Is(err, errUnsupportedVersion) {
			// KIP-511: answer a version Pulse does not serve with a v0
			// response carrying UNSUPPORTED_VERSION and the served
			// ranges, so the client can retry with one of them.
			resp := s.apiVersions(nil)
			resp.SetVersion(0)
			resp.ErrorCode = errUnsupportedVersionCode
			return frameResponse(out, h, resp), nil
		}
		return nil, err
	}
	resp, err := s.dispatch(h, req, pr)
	if err != nil {
		return nil, err
	}
	if resp == nil {
		return out[:0], nil
	}
	resp.SetVersion(h.version)
	return frameResponse(out, h, resp), nil
}

// frameResponse appends the size, response header and body of resp.
func frameResponse(out []byte, h header, resp kmsg.Response) []byte {
	start := len(out)
	out = append(out, 0, 0, 0, 0)
	out = binary.BigEndian.AppendUint32(out, uint32(h.correlation))
	// Response header v1 (tag section) for flexible versions, except
	// ApiVersions, whose response header is always v0.
	if resp.IsFlexible() && h.key != int16(kmsg.ApiVersions) {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out[start:], uint32(len(out)-start-4))
	return out
}

// dispatch routes a decoded request to its handler. A nil response with a
// nil error means no response is sent.
func (s *Server) dispatch(h header, req kmsg.Request, pr peer) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return s.apiVersions(r), nil
	case *kmsg.MetadataRequest:
		return s.metadata(r, pr), nil
	case *kmsg.ProduceRequest:
		resp := s.produce(r)
		if r.Acks == 0 {
			return nil, nil
		}
		return resp, nil
	case *kmsg.FetchRequest:
		return s.fetch(r, pr.skipOnly), nil
	case *kmsg.ListOffsetsRequest:
		return s.listOffsets(r), nil
	case *kmsg.CreateTopicsRequest:
		return s.createTopics(r), nil
	case *kmsg.DeleteTopicsRequest:
		return s.deleteTopics(r), nil
	case *kmsg.DescribeConfigsRequest:
		return s.describeConfigs(r), nil
	case *kmsg.IncrementalAlterConfigsRequest:
		return s.incrementalAlterConfigs(r), nil
	case *kmsg.CreatePartitionsRequest:
		return s.createPartitions(r), nil
	case *kmsg.DeleteGroupsRequest:
		return s.deleteGroups(r), nil
	case *kmsg.OffsetDeleteRequest:
		return s.offsetDelete(r), nil
	case *kmsg.InitProducerIDRequest:
		return s.initProducerID(r), nil
	case *kmsg.FindCoordinatorRequest:
		return s.findCoordinator(r, pr), nil
	case *kmsg.JoinGroupRequest:
		return s.groups.join(r, h.clientID, pr.host), nil
	case *kmsg.SyncGroupRequest:
		return s.groups.sync(r), nil
	case *kmsg.HeartbeatRequest:
		return s.groups.heartbeat(r), nil
	case *kmsg.LeaveGroupRequest:
		return s.groups.leave(r), nil
	case *kmsg.OffsetCommitRequest:
		return s.offsetCommit(r), nil
	case *kmsg.OffsetFetchRequest:
		return s.offsetFetch(r), nil
	case *kmsg.DescribeGroupsRequest:
		return s.groups.describe(r), nil
	case *kmsg.ListGroupsRequest:
		return s.groups.list(r), nil
	}
	return nil, fmt.Errorf("%w: key %d", ErrUnknownKey, h.key)
}
