package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/pulselog/pulse/wsapi/wsclient"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hangGuard bounds every blocking read of a test so that a bug shows up as
// a failure instead of a stuck test binary. It is not a timing assertion:
// nothing here is expected to take more than a small fraction of it.
const hangGuard = 30 * time.Second

// testServer is a Server on a real 127.0.0.1 listener.
type testServer struct {
	*Server
	eng  testEngine
	dir  string
	addr string // host:port
}

// startServer serves a fresh engine with opts on 127.0.0.1:0.
func startServer(t testing.TB, opts Options) *testServer {
	t.Helper()
	e, dir := openEngine(t)
	ts := serveBackend(t, e, dir, opts)
	ts.eng = e
	return ts
}

// serveBackend serves b (which may wrap the engine of dir) with opts on
// 127.0.0.1:0; the caller sets eng.
func serveBackend(t testing.TB, e Backend, dir string, opts Options) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(e, opts)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return &testServer{Server: s, dir: dir, addr: l.Addr().String()}
}

// rawConn is a plain gorilla client speaking raw JSON.
type rawConn struct {
	t  testing.TB
	ws *websocket.Conn
	// pending holds messages read while looking for another one.
	pending []map[string]any
}

func dialRaw(t testing.TB, addr, path string, h http.Header) *rawConn {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+path, h)
	if err != nil {
		status := ""
		if resp != nil {
			status = resp.Status
		}
		t.Fatalf("dial %s%s: %v %s", addr, path, err, status)
	}
	c := &rawConn{t: t, ws: ws}
	t.Cleanup(func() { ws.Close() })
	return c
}

func (c *rawConn) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendText(string(b))
}

func (c *rawConn) sendText(s string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one message (from pending first).
func (c *rawConn) next() map[string]any {
	c.t.Helper()
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m
	}
	m, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// message reads one message as it came, failing the test when none does.
func (c *rawConn) message() (typ int, b []byte) {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(hangGuard))
	typ, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return typ, b
}

func (c *rawConn) read() (map[string]any, error) {
	c.ws.SetReadDeadline(time.Now().Add(hangGuard))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("server sent non-JSON %q: %v", b, err)
	}
	return m, nil
}

// waitFor reads until a message matches, keeping the others in pending.
func (c *rawConn) waitFor(match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for i, m := range c.pending {
		if match(m) {
			c.pending = append(c.pending[:i:i], c.pending[i+1:]...)
			return m
		}
	}
	for {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("read while waiting: %v", err)
		}
		if match(m) {
			return m
		}
		c.pending = append(c.pending, m)
	}
}

// call sends req with id and returns the reply with that id.
func (c *rawConn) call(id int, req map[string]any) map[string]any {
	c.t.Helper()
	req["id"] = id
	c.send(req)
	return c.waitFor(func(m map[string]any) bool { return m["id"] == float64(id) })
}

// errCode returns the error code of a reply, "" when it is not an error.
func errCode(m map[string]any) string {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return ""
	}
	s, _ := e["code"].(string)
	return s
}

// num reads a JSON number field as int64.
func num(t testing.TB, m map[string]any, k string) int64 {
	t.Helper()
	f, ok := m[k].(float64)
	if !ok {
		t.Fatalf("field %q missing or not a number in %v", k, m)
	}
	return int64(f)
}

// topicDirs lists the topic directories on disk.
func topicDirs(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "topics"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// dialClient connects a wsapi.Client, closed at cleanup.
func dialClient(t testing.TB, addr string) *wsclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := wsclient.Dial(ctx, addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}
