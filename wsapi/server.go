package wsapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// Server serves the websocket API of one Backend. Create it with New, serve
// it with Serve (or mount Handler), stop it with Shutdown.
type Server struct {
	b    Backend
	opts Options
	up   websocket.Upgrader

	// ctx is cancelled by Close (and by Shutdown when its context expires):
	// engine calls still running see it.
	ctx    context.Context
	cancel context.CancelFunc

	// connWG counts live connections, for Shutdown to wait on.
	connWG sync.WaitGroup

	// slowClosed counts connections closed as slow consumers.
	slowClosed atomic.Int64

	// stopC is closed when Shutdown or Close starts: the long-lived HTTP
	// responses (Server-Sent Events) end on it, so that http.Server's
	// Shutdown, which waits for every handler, can finish.
	stopC    chan struct{}
	stopOnce sync.Once

	// sseStreams counts live event streams (sse.go).
	sseStreams atomic.Int64

	// pushes shares the encoding of records among the subscriptions
	// that push them (pushcache.go).
	pushes *pushCache

	// mu guards conns, listenHosts, httpSrv and closing.
	mu          sync.Mutex
	conns       map[*conn]struct{}
	listenHosts []string // Host names allowed because Serve listens on them
	httpSrv     []*http.Server
	closing     bool
}

// New returns a server for b. Zero fields of opts take their defaults
// (AutoCreate excepted: start from DefaultOptions to keep it on).
func New(b Backend, opts Options) *Server {
	s := &Server{b: b, opts: opts.withDefaults(), conns: make(map[*conn]struct{}), stopC: make(chan struct{}), pushes: newPushCache()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.up = websocket.Upgrader{
		// A 64 KiB read buffer takes a batch of ~1 KiB records in a few
		// reads (pulse bench --ws: binary frames ~10% faster than 16 KiB).
		ReadBufferSize:  64 << 10,
		WriteBufferSize: 16 << 10,
		CheckOrigin:     s.checkOrigin,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			http.Error(w, reason.Error(), status)
		},
	}
	return s
}

// Handler returns the HTTP handler of the API: GET /v1/ws,
// GET /v1/topics/{topic}/produce and GET /v1/topics/{topic}/tail (websocket),
// POST and GET /v1/topics/{topic}/records (http_records.go), GET
// /v1/topics/{topic}/events (sse.go), and GET /metrics when
// Options.Metrics is set.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/ws", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, modeMux, "")
	})
	mux.HandleFunc("GET /v1/topics/{topic}/produce", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, modeProduce, r.PathValue("topic"))
	})
	mux.HandleFunc("GET /v1/topics/{topic}/tail", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, modeTail, r.PathValue("topic"))
	})
	s.routeHTTP(mux)
	return mux
}

// Serve accepts connections on l until Shutdown or Close. A listener that is
// not on a loopback address needs Options.Token (ErrTokenRequired).
func (s *Server) Serve(l net.Listener) error {
	host := ""
	if ta, ok := l.Addr().(*net.TCPAddr); ok {
		if !ta.IP.IsLoopback() && s.opts.Token == "" {
			return fmt.Errorf("listen %s: %w", l.Addr(), ErrTokenRequired)
		}
		if !ta.IP.IsUnspecified() && !ta.IP.IsLoopback() {
			host = ta.IP.String()
		}
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if host != "" {
		s.listenHosts = append(s.listenHosts, host)
	}
	s.httpSrv = append(s.httpSrv, hs)
	s.mu.Unlock()
	err := hs.Serve(batchListener{l})
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return err
}

// Shutdown stops accepting connections, refuses new requests, lets every
// produce already accepted finish and get its ack, then closes every
// connection with 1001 ("going away"). When ctx expires first, the remaining
// connections are closed at once and ctx's error is returned. The Backend is
// not closed: that is the caller's job, after Shutdown returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stop()
	s.mu.Lock()
	s.closing = true
	srvs := s.httpSrv
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var firstErr error
	for _, hs := range srvs {
		if err := hs.Shutdown(ctx); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, c := range conns {
		c.drain()
	}
	done := make(chan struct{})
	go func() { s.connWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.Close()
		<-done
		if firstErr == nil {
			firstErr = ctx.Err()
		}
	}
	s.cancel()
	return firstErr
}

// Close closes the listeners and every connection at once, without waiting
// for produces in flight (their engine calls see a cancelled context).
func (s *Server) Close() error {
	s.stop()
	s.mu.Lock()
	s.closing = true
	srvs := s.httpSrv
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.cancel()
	for _, hs := range srvs {
		hs.Close()
	}
	for _, c := range conns {
		c.ws.NetConn().Close()
	}
	s.connWG.Wait()
	return nil
}

// stop closes stopC, ending the event streams (sse.go).
func (s *Server) stop() {
	s.stopOnce.Do(func() { close(s.stopC) })
}

// Done is closed once the server has stopped (Shutdown finished, or Close).
func (s *Server) Done() <-chan struct{} { return s.ctx.Done() }

// Stats is a snapshot of the server's load.
type Stats struct {
	Conns         int   // live websocket connections, of which:
	MuxConns      int   //   on /v1/ws
	ProduceConns  int   //   on /v1/topics/{topic}/produce
	TailConns     int   //   on /v1/topics/{topic}/tail
	EventStreams  int   // live Server-Sent Event streams (/v1/topics/{topic}/events)
	Subscriptions int   // live subscriptions over all connections
	QueuedBytes   int64 // bytes of replies and pushes waiting for a writer
	QueueLimit    int64 // bound of QueuedBytes implied by the options
	SlowClosed    int64 // connections closed with 1013 as slow consumers, since New
}

// Stats returns the server's current load.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Conns: len(s.conns), SlowClosed: s.slowClosed.Load(), EventStreams: int(s.sseStreams.Load())}
	for c := range s.conns {
		switch c.mode {
		case modeMux:
			st.MuxConns++
		case modeProduce:
			st.ProduceConns++
		case modeTail:
			st.TailConns++
		}
		st.Subscriptions += c.subCount()
		st.QueuedBytes += c.queued.Load()
		st.QueueLimit += c.queueLimit()
	}
	return st
}

// serve runs the handshake checks, upgrades and runs one connection.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, mode connMode, topic string) {
	if !s.admit(w, r, "websocket handshake") || !s.admitOrigin(w, r, "websocket handshake") {
		return
	}
	ws, err := s.up.Upgrade(w, r, nil) // checks the Origin again (checkOrigin)
	if err != nil {
		s.opts.Logger.Warn("websocket handshake refused", "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr, "err", err)
		return
	}
	c := newConn(s, ws, mode)
	if code, reason := s.addConn(c); reason != "" {
		ws.SetWriteDeadline(time.Now().Add(writeWait))
		ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
		ws.Close()
		return
	}
	defer s.connWG.Done()
	defer s.removeConn(c)
	c.run(r, topic)
}

// Refusals of admit and admitBrowser, the same text on every endpoint.
const (
	hostRefusal   = "Host %q is not allowed (DNS rebinding protection): use localhost, 127.0.0.1 or [::1], or start pulse with --allow-host"
	tokenRefusal  = "missing or wrong token: send Authorization: Bearer <token> or ?token=<token>"
	originRefusal = "Origin %q is not allowed (cross-site request protection): pages on localhost, 127.0.0.1 or [::1] are, or start pulse with --allow-origin"
)

// admit runs the checks every endpoint makes before anything else: the
// Host header (DNS rebinding) and the token. On refusal it writes the
// response (403 or 401, plain text), logs one line naming what was refused
// and returns false.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, what string) bool {
	if !s.checkHost(r) {
		s.opts.Logger.Warn(what+" refused: Host not allowed", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf(hostRefusal, r.Host), http.StatusForbidden)
		return false
	}
	if !s.checkToken(r) {
		s.opts.Logger.Warn(what+" refused: bad or missing token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="pulse"`)
		http.Error(w, tokenRefusal, http.StatusUnauthorized)
		return false
	}
	return true
}

// admitOrigin runs the Origin check (checkOrigin) of every endpoint, so
// that a refused browser gets the same 403 text on each. On refusal it
// writes the response, logs one line naming the origin and returns false.
func (s *Server) admitOrigin(w http.ResponseWriter, r *http.Request, what string) bool {
	if s.checkOrigin(r) {
		return true
	}
	origin := r.Header.Get("Origin")
	s.opts.Logger.Warn(what+" refused: Origin not allowed", "origin", origin, "host", r.Host, "remote", r.RemoteAddr)
	http.Error(w, fmt.Sprintf(originRefusal, origin), http.StatusForbidden)
	return false
}

// admitBrowser is admit plus the Origin check the websocket upgrader makes
// (checkOrigin), for the plain HTTP endpoints: a page from a foreign origin
// is refused whatever the method and content type (a form or a
// text/plain fetch needs no CORS preflight, so the Origin check is what
// stops cross-site request forgery). An allowed browser origin gets the CORS
// headers that let its page read the response.
func (s *Server) admitBrowser(w http.ResponseWriter, r *http.Request, what string) bool {
	if !s.admit(w, r, what) || !s.admitOrigin(w, r, what) {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
	}
	return true
}

// addConn registers c, or returns the close code and reason it is refused
// with.
func (s *Server) addConn(c *conn) (code int, refusal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return websocket.CloseGoingAway, "server shutting down"
	}
	if len(s.conns) >= s.opts.MaxConns {
		return websocket.CloseTryAgainLater, fmt.Sprintf("connection limit reached (%d)", s.opts.MaxConns)
	}
	s.conns[c] = struct{}{}
	s.connWG.Add(1) // under mu, so never after Shutdown set closing and waits
	return 0, ""
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// loopbackHosts are the Host names always accepted.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// checkHost accepts a request whose Host header names a loopback host (any
// port), a host Serve listens on, the IP address the request arrived at, or
// one of Options.AllowHosts.
func (s *Server) checkHost(r *http.Request) bool {
	h := hostOnly(r.Host)
	if h == "" {
		return false
	}
	// An IP address of the connection's own local end: the address the
	// client reached the server by (on a 0.0.0.0 listener, any of the
	// machine's). A literal address is no DNS rebinding.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		if ip := net.ParseIP(h); ip != nil && ip.Equal(la.IP) && !ip.IsUnspecified() {
			return true
		}
	}
	for _, a := range loopbackHosts {
		if strings.EqualFold(h, a) {
			return true
		}
	}
	for _, a := range s.opts.AllowHosts {
		if strings.EqualFold(h, strings.Trim(a, "[]")) {
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.listenHosts {
		if strings.EqualFold(h, a) {
			return true
		}
	}
	return false
}

// hostOnly strips the port and IPv6 brackets from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// checkOrigin is the upgrader's CheckOrigin: no Origin (a non-browser
// client) is fine; "null" never is; otherwise the origin's host must be a
// loopback name (any scheme among http/https, any port) or the origin must be
// listed in Options.AllowOrigins.
func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if origin == "null" {
		return false
	}
	for _, a := range s.opts.AllowOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h := u.Hostname()
	for _, a := range loopbackHosts {
		if strings.EqualFold(h, a) {
			return true
		}
	}
	return false
}

// checkToken accepts anything when no token is configured, otherwise a
// matching "Authorization: Bearer" header or "token" query parameter.
func (s *Server) checkToken(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	got := r.URL.Query().Get("token")
	// The auth scheme is case-insensitive (RFC 7235 section 2.1).
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		got = token
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// validTopic checks a topic name before it reaches the engine.
func validTopic(name string) *wire.Error {
	if err := engine.ValidateTopicName(name); err != nil {
		return toError(err)
	}
	return nil
}
