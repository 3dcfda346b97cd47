package wsapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// handshake dials path with the given Origin, Host and token (each "" for
// none) and reports the HTTP status (101 when the upgrade succeeded).
func handshake(t *testing.T, addr, path, origin, host, token string, tokenInQuery bool) int {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if host != "" {
		h.Set("Host", host)
	}
	if token != "" {
		if tokenInQuery {
			path += "?token=" + token
		} else {
			h.Set("Authorization", "Bearer "+token)
		}
	}
	ws, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+path, h)
	if err == nil {
		ws.Close()
		return resp.StatusCode
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	return resp.StatusCode
}

func TestHandshakeMatrix(t *testing.T) {
	opts := DefaultOptions()
	opts.Token = "s3cret"
	ts := startServer(t, opts)
	_, port, _ := net.SplitHostPort(ts.addr)

	origins := map[string]string{"evil": "http://evil.example", "null": "null", "absent": ""}
	hosts := map[string]string{"evil": "evil.example:" + port, "localhost": "localhost:" + port}
	tokens := map[string]string{"yes": "s3cret", "no": "", "wrong": "guess"}
	for on, origin := range origins {
		for hn, host := range hosts {
			for tn, token := range tokens {
				for _, path := range []string{"/v1/ws", "/v1/topics/t/tail", "/v1/topics/t/produce"} {
					got := handshake(t, ts.addr, path, origin, host, token, false)
					allowed := on == "absent" && hn == "localhost" && tn == "yes"
					if allowed != (got == http.StatusSwitchingProtocols) {
						t.Errorf("%s origin=%s host=%s token=%s: status %d, allowed=%v", path, on, hn, tn, got, allowed)
					}
				}
			}
		}
	}
	// Browser origins on loopback, any port, are fine; the token may come
	// in the query (browsers cannot set headers on a WebSocket).
	for _, origin := range []string{"http://localhost:3000", "http://127.0.0.1:5173", "http://[::1]:8080", "https://localhost"} {
		for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST"} {
			if got := handshake(t, ts.addr, "/v1/ws", origin, host, "s3cret", true); got != http.StatusSwitchingProtocols {
				t.Errorf("origin %s host %s with ?token: status %d, want 101", origin, host, got)
			}
		}
	}
	for _, origin := range []string{"http://localhost.evil.example", "http://127.0.0.1.nip.io", "file://", "chrome-extension://abc", "http://evil.example:7450"} {
		if got := handshake(t, ts.addr, "/v1/ws", origin, "localhost", "s3cret", false); got != http.StatusForbidden {
			t.Errorf("origin %s: status %d, want 403", origin, got)
		}
	}
	if got := handshake(t, ts.addr, "/v1/ws", "", "127.0.0.1.evil.example", "s3cret", false); got != http.StatusForbidden {
		t.Errorf("rebinding host: status %d, want 403", got)
	}
}

func TestAllowOriginAndHostOptions(t *testing.T) {
	opts := DefaultOptions()
	opts.AllowOrigins = []string{"http://myapp.test:8080"}
	opts.AllowHosts = []string{"pulse.test"}
	ts := startServer(t, opts)
	cases := []struct {
		origin, host string
		want         int
	}{
		{"http://myapp.test:8080", "localhost", 101},
		{"http://myapp.test:9090", "localhost", 403},
		{"", "pulse.test:7450", 101},
		{"", "other.test", 403},
		{"null", "pulse.test", 403},
		{"http://localhost:1234", "pulse.test", 101},
	}
	for _, tc := range cases {
		if got := handshake(t, ts.addr, "/v1/ws", tc.origin, tc.host, "", false); got != tc.want {
			t.Errorf("origin %q host %q: status %d, want %d", tc.origin, tc.host, got, tc.want)
		}
	}
}

func TestConnectionCap(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxConns = 2
	ts := startServer(t, opts)
	a := dialRaw(t, ts.addr, "/v1/ws", nil)
	dialRaw(t, ts.addr, "/v1/ws", nil)
	waitUntil(t, func() bool { return ts.Stats().Conns == 2 }, "two connections")
	third := dialRaw(t, ts.addr, "/v1/ws", nil)
	_, err := third.read()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || !strings.Contains(ce.Text, "connection limit") {
		t.Fatalf("third connection: %v, want close 1013 with a reason", err)
	}
	// The first two still work.
	if r := a.call(1, map[string]any{"op": "topics"}); errCode(r) != "" {
		t.Fatalf("topics: %v", r)
	}
}

// fakeAddrListener reports a non-loopback address without listening there.
type fakeAddrListener struct{ net.Listener }

func (fakeAddrListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 7450} }

func TestNonLoopbackNeedsToken(t *testing.T) {
	e, _ := openEngine(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := New(e, DefaultOptions())
	if err := s.Serve(fakeAddrListener{l}); !errors.Is(err, ErrTokenRequired) {
		t.Fatalf("Serve on a non-loopback address without a token: %v", err)
	}
}

// A refused handshake says why in its body, with the same text on the
// websocket endpoints as on the HTTP ones, and the token's auth scheme is
// matched without regard to case (RFC 7235: "bearer" is "Bearer").
func TestHandshakeRefusalTextAndBearerCase(t *testing.T) {
	opts := DefaultOptions()
	opts.Token = "s3cret"
	ts := startServer(t, opts)
	for _, path := range []string{"/v1/ws", "/v1/topics/t/tail", "/v1/topics/t/produce"} {
		h := http.Header{"Origin": {"http://evil.example"}, "Authorization": {"Bearer s3cret"}}
		ws, resp, err := websocket.DefaultDialer.Dial("ws://"+ts.addr+path, h)
		if err == nil {
			ws.Close()
			t.Fatalf("%s: foreign origin upgraded", path)
		}
		if resp == nil {
			t.Fatalf("%s: %v", path, err)
		}
		body := new(strings.Builder)
		if _, err := io.Copy(body, resp.Body); err != nil {
			t.Fatalf("%s: read body: %v", path, err)
		}
		want := `Origin "http://evil.example" is not allowed`
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body.String(), want) || !strings.Contains(body.String(), "--allow-origin") {
			t.Errorf("%s: %d %q, want 403 naming the origin and --allow-origin", path, resp.StatusCode, body)
		}
	}
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		h := http.Header{"Authorization": {scheme + " s3cret"}}
		ws, resp, err := websocket.DefaultDialer.Dial("ws://"+ts.addr+"/v1/ws", h)
		if err != nil {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Errorf("Authorization: %s <token>: refused (%d): %v", scheme, status, err)
			continue
		}
		ws.Close()
	}
	if got := handshake(t, ts.addr, "/v1/ws", "", "", "s3cre", false); got != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", got)
	}
}

// A peer that sends nothing, not even a pong, for PongWait is closed with
// a close frame saying so (1001), not cut off without one, when its
// socket can still take the frame.
func TestSilentPeerGetsKeepaliveClose(t *testing.T) {
	opts := DefaultOptions()
	opts.PongWait = 300 * time.Millisecond
	ts := startServer(t, opts)
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+ts.addr+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	pings := 0
	ws.SetPingHandler(func(string) error { pings++; return nil }) // no pong
	ws.SetReadDeadline(time.Now().Add(hangGuard))
	_, _, err = ws.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || !strings.Contains(ce.Text, "keepalive") {
		t.Fatalf("silent peer: %v, want close 1001 naming the keepalive", err)
	}
	if pings == 0 {
		t.Errorf("closed without a ping first")
	}
}

// Listening on every address (0.0.0.0, with a token), a client that
// reaches the server by one of the machine's IP addresses names it in
// Host and is accepted: an IP address of the connection's own local end
// is no DNS rebinding. Any other name or address is still refused.
func TestHostOfTheLocalAddressIsAllowedOnAnUnspecifiedListener(t *testing.T) {
	e, _ := openEngine(t)
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Token = "s3cret"
	s := New(e, opts)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	defer func() {
		s.Shutdown(context.Background())
		<-done
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	// 127.0.0.2 is an address of this machine (all of 127/8 is loopback
	// on Linux) that the loopback names do not cover.
	addr := net.JoinHostPort("127.0.0.2", port)
	if c, err := net.Dial("tcp", addr); err != nil {
		t.Skipf("cannot reach %s on this machine: %v", addr, err)
	} else {
		c.Close()
	}
	for host, want := range map[string]int{
		"127.0.0.2:" + port: http.StatusSwitchingProtocols,
		"127.0.0.2":         http.StatusSwitchingProtocols,
		"127.0.0.3:" + port: http.StatusForbidden,
		"evil.example":      http.StatusForbidden,
		"0.0.0.0:" + port:   http.StatusForbidden,
	} {
		if got := handshake(t, addr, "/v1/ws", "", host, "s3cret", false); got != want {
			t.Errorf("Host %s via %s: %d, want %d", host, addr, got, want)
		}
	}
}
