package wsapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// jsonValue is a ~1 KiB JSON-like record value.
func jsonValue(i int) []byte {
	return fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, strings.Repeat("p", 1000))
}

func TestSlowConsumerCutOffWithBoundedMemory(t *testing.T) {
	slowConsumerCutOff(t, `{"op":"subscribe","id":1,"topic":"firehose","from":"earliest"}`, websocket.TextMessage)
}

// TestSlowBinaryConsumerCutOff: binary pushes keep to the same send
// budget and slow-consumer rule as JSON ones.
func TestSlowBinaryConsumerCutOff(t *testing.T) {
	slowConsumerCutOff(t, `{"op":"subscribe","id":1,"topic":"firehose","from":"earliest","format":"binary"}`, websocket.BinaryMessage)
}

// slowConsumerCutOff fills a topic, subscribes with subscribe from a client
// that stops reading, and checks that the server holds no more than its
// bound for it and cuts it off with 1013; the pushes it did get are
// websocket messages of type pushType.
func slowConsumerCutOff(t *testing.T, subscribe string, pushType int) {
	opts := DefaultOptions()
	opts.SendQueue = 2
	opts.PushRecords = 64
	opts.PushBytes = 16 << 10
	opts.SlowConsumerWait = 200 * time.Millisecond
	ts := startServer(t, opts)
	ctx := testCtx(t)
	admin := dialClient(t, ts.addr)
	if _, err := admin.CreateTopic(ctx, "firehose", wire.TopicConfig{SyncMode: "interval"}); err != nil {
		t.Fatal(err)
	}
	const requests, perReq = 160, 100 // 16,000 records, ~16 MiB
	var pend []*wsclient.Pending
	for r := range requests {
		recs := make([]wire.RecordIn, perReq)
		for i := range recs {
			recs[i].Value = jsonValue(r*perReq + i)
		}
		p, err := admin.ProduceAsync("firehose", 0, recs)
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, p)
	}
	for _, p := range pend {
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	produced := int64(requests * perReq * len(jsonValue(0)))

	// A client with a small receive buffer subscribes and stops reading.
	d := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(16 << 10)
		}
		return c, err
	}}
	ws, _, err := d.Dial("ws://"+ts.addr+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(subscribe)); err != nil {
		t.Fatal(err)
	}
	// The server fills the socket, then the bounded queue, then cuts the
	// client off; its queued bytes never pass the bound on the way.
	waitUntil(t, func() bool {
		st := ts.Stats()
		if st.QueuedBytes > st.QueueLimit {
			t.Fatalf("server queues %d bytes for its connections, bound %d", st.QueuedBytes, st.QueueLimit)
		}
		return st.SlowClosed == 1
	}, "the slow consumer to be cut off")

	// Reading again (with a normal buffer, or the small window makes the
	// rest crawl): what the socket buffered, then the close frame.
	ws.NetConn().(*net.TCPConn).SetReadBuffer(4 << 20)
	var received int64
	pushes := 0
	for {
		ws.SetReadDeadline(time.Now().Add(hangGuard))
		typ, b, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater || !strings.Contains(ce.Text, "slow consumer") {
				t.Fatalf("slow consumer ended with %v, want close 1013 with a reason", err)
			}
			break
		}
		received += int64(len(b))
		if !bytes.HasPrefix(b, []byte(`{"id":1,`)) {
			if typ != pushType {
				t.Fatalf("push of message type %d, want %d: %.80q", typ, pushType, b)
			}
			pushes++
		}
	}
	if pushes == 0 {
		t.Fatal("the slow consumer got no push at all")
	}
	if received >= produced/2 {
		t.Fatalf("the slow consumer got %d bytes of the %d stored: the server buffered for it instead of stopping", received, produced)
	}
	waitUntil(t, func() bool { return ts.Stats().Conns == 1 }, "the slow connection to be gone")
	// Everyone else is unaffected.
	if _, err := admin.Describe(ctx, "firehose"); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownAnswersAcceptedProduces(t *testing.T) {
	dir := t.TempDir()
	e, err := reopenEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(e, DefaultOptions())
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	addr := l.Addr().String()

	c := dialRaw(t, addr, "/v1/ws", nil)
	tail := dialRaw(t, addr, "/v1/ws", nil)
	c.call(0, map[string]any{"op": "produce", "topic": "sd", "value": "first"})
	if r := tail.call(1, map[string]any{"op": "subscribe", "topic": "sd"}); errCode(r) != "" {
		t.Fatal(r)
	}
	const n = 300
	for i := 1; i <= n; i++ {
		c.send(map[string]any{"op": "produce", "id": i, "topic": "sd", "value": fmt.Sprintf("v%d", i)})
	}
	first := c.next()
	if errCode(first) != "" {
		t.Fatalf("first reply: %v", first)
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	acked := map[string]bool{fmt.Sprintf("v%d", int(num(t, first, "id"))): true}
	refused := 0
	for {
		m, err := c.read()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
				t.Fatalf("producer connection ended with %v, want close 1001", err)
			}
			break
		}
		switch errCode(m) {
		case "":
			acked[fmt.Sprintf("v%d", int(num(t, m, "id")))] = true
		case wire.CodeShuttingDown:
			refused++
		default:
			t.Fatalf("reply during shutdown: %v", m)
		}
	}
	for {
		_, err := tail.read()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
				t.Fatalf("subscriber ended with %v, want close 1001", err)
			}
			break
		}
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// What is stored is exactly what was acked.
	e2, err := reopenEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	res, err := e2.Read("sd", 0, 0, 10000, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, r := range res.Records[1:] {
		stored[string(r.Value)] = true
	}
	if len(stored) != len(acked) {
		t.Fatalf("stored %d records, acked %d (refused %d)", len(stored), len(acked), refused)
	}
	for v := range acked {
		if !stored[v] {
			t.Fatalf("acked %s is not stored", v)
		}
	}
	t.Logf("shutdown: %d acked, %d refused, %d unanswered", len(acked), refused, n-len(acked)-refused)
}

// TestDrainingRefusesNewRequests holds a connection in the state Shutdown
// puts it in before its last produce is answered, to see every new request
// refused with shutting_down and nothing stored.
func TestDrainingRefusesNewRequests(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "d", "value": 1}); errCode(r) != "" {
		t.Fatal(r)
	}
	ts.mu.Lock()
	var sc *conn
	for k := range ts.conns {
		sc = k
	}
	ts.mu.Unlock()
	sc.mu.Lock()
	sc.draining = true // as drain sets it; the produce queue stays open here
	sc.mu.Unlock()
	for i, req := range []map[string]any{
		{"op": "produce", "topic": "d", "value": 2},
		{"op": "create_topic", "topic": "e"},
		{"op": "subscribe", "topic": "d"},
		{"op": "topics"},
	} {
		if r := c.call(10+i, req); errCode(r) != wire.CodeShuttingDown {
			t.Errorf("%v while draining: %v", req["op"], r)
		}
	}
	if ti, err := ts.eng.Describe("d"); err != nil || ti.Partitions[0].LEO != 1 {
		t.Fatalf("topic d after refused produces: %+v %v", ti, err)
	}
	if _, err := ts.eng.Describe("e"); err == nil {
		t.Fatal("create_topic ran while draining")
	}
}
