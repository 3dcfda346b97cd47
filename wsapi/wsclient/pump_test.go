package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/wsapi/internal/wiretest"
	"github.com/pulselog/pulse/wsapi/wire"
)

// ackServer is a websocket server that reads produce requests with
// gorilla/websocket and acks each one with the request's position in the
// connection's stream as its offset; received records every request's
// (id, value) in the order read.
type ackServer struct {
	url      string
	mu       sync.Mutex
	received [][2]string
	closed   chan struct{} // closed when the server saw the client's close
	// stopAfter, when > 0, makes the server close the connection (without
	// a close frame) after reading that many requests, unanswered.
	stopAfter int
}

func newAckServer(t *testing.T, stopAfter int) *ackServer {
	s := &ackServer{closed: make(chan struct{}), stopAfter: stopAfter}
	s.url = wiretest.ServeWS(t, func(ws *websocket.Conn) {
		for n := 0; ; n++ {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					close(s.closed)
				}
				return
			}
			var req struct {
				ID    json.RawMessage `json:"id"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(msg, &req); err != nil {
				t.Errorf("request %q: %v", msg, err)
				return
			}
			s.mu.Lock()
			s.received = append(s.received, [2]string{string(req.ID), string(req.Value)})
			s.mu.Unlock()
			if s.stopAfter > 0 && n+1 == s.stopAfter {
				return
			}
			ack := fmt.Sprintf(`{"id":%s,"partition":0,"offset":%d,"timestamp":1}`, req.ID, n)
			if err := ws.WriteMessage(websocket.TextMessage, []byte(ack)); err != nil {
				return
			}
		}
	})
	return s
}

func (s *ackServer) dial(t *testing.T) *Client {
	c, err := Dial(context.Background(), s.url, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPumpKeepsEachCallersOrder produces from several goroutines at once,
// many requests in flight each: every goroutine's requests must reach the
// server in the order it sent them, and each ack must reach its own
// request.
func TestPumpKeepsEachCallersOrder(t *testing.T) {
	s := newAckServer(t, 0)
	c := s.dial(t)
	defer c.Close()
	const senders, each = 4, 500
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			var ps []*Pending
			for i := range each {
				v := fmt.Sprintf(`[%d,%d]`, g, i)
				p, err := c.ProduceRecordAsync("t", 0, wire.RecordIn{Value: json.RawMessage(v)})
				if err != nil {
					t.Error(err)
					return
				}
				ps = append(ps, p)
			}
			last := int64(-1)
			for i, p := range ps {
				acks, err := p.Wait(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				// Offsets are positions in the server's stream: a
				// sender's requests arrive in its order.
				if acks[0].Offset <= last {
					t.Errorf("sender %d request %d stored at %d, after %d", g, i, acks[0].Offset, last)
				}
				last = acks[0].Offset
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.received) != senders*each {
		t.Fatalf("server read %d requests, want %d", len(s.received), senders*each)
	}
	next := make([]int, senders)
	for _, r := range s.received {
		var gi [2]int
		if err := json.Unmarshal([]byte(r[1]), &gi); err != nil {
			t.Fatal(err)
		}
		if gi[1] != next[gi[0]] {
			t.Fatalf("sender %d: request %d arrived when %d was due", gi[0], gi[1], next[gi[0]])
		}
		next[gi[0]]++
	}
}

// TestCloseWritesQueuedRequests closes the client right after queueing
// requests: every one of them reaches the server before the close frame.
func TestCloseWritesQueuedRequests(t *testing.T) {
	s := newAckServer(t, 0)
	c := s.dial(t)
	const n = 2000
	for i := range n {
		if _, err := c.ProduceRecordAsync("t", 0, wire.RecordIn{Value: json.RawMessage(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	<-s.closed
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.received) != n {
		t.Fatalf("server read %d requests before the close frame, want %d", len(s.received), n)
	}
	for i, r := range s.received {
		if r[1] != fmt.Sprint(i) {
			t.Fatalf("request %d has value %s", i, r[1])
		}
	}
}

// TestLostConnectionEndsEveryPending has the server drop the connection
// with requests in flight: every pending request ends with an error (none
// waits forever), and requests sent afterwards fail at once.
func TestLostConnectionEndsEveryPending(t *testing.T) {
	s := newAckServer(t, 10)
	c := s.dial(t)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ps []*Pending
	for i := range 200 {
		p, err := c.ProduceRecordAsync("t", 0, wire.RecordIn{Value: json.RawMessage(fmt.Sprint(i))})
		if err != nil {
			break // the connection is already known to be gone
		}
		ps = append(ps, p)
	}
	acked := 0
	for _, p := range ps {
		if _, err := p.Wait(ctx); err == nil {
			acked++
		} else if errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("a pending request was never ended")
		}
	}
	if acked != 9 {
		t.Errorf("%d requests acked, want the 9 the server answered", acked)
	}
	<-c.Done()
	if _, err := c.ProduceRecordAsync("t", 0, wire.RecordIn{Value: json.RawMessage("1")}); err == nil {
		t.Fatal("produce on a lost connection: no error")
	}
}

// TestPendingWaitPollAndCancel checks a Pending's ways of waiting against
// a server that answers only when the test lets it: Poll before the reply
// says not done; a Wait given up by its context can be waited again and
// gets the reply; Poll and Wait after the reply, any number of times, give
// it; and a request whose connection ends gets the connection's error.
func TestPendingWaitPollAndCancel(t *testing.T) {
	release := make(chan struct{})
	url := wiretest.ServeWS(t, func(ws *websocket.Conn) {
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var req struct {
				ID int64 `json:"id"`
			}
			json.Unmarshal(msg, &req)
			if _, ok := <-release; !ok {
				return // drop the connection, the request unanswered
			}
			ws.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"id":%d,"partition":0,"offset":%d,"timestamp":1}`, req.ID, req.ID*10))
		}
	})
	c, err := Dial(context.Background(), url, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.ProduceRecordAsync("t", 0, wire.RecordIn{Value: json.RawMessage("1")})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := p.Poll(); done || err != nil {
		t.Fatalf("Poll before the reply: done %v, err %v", done, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
	release <- struct{}{}
	for range 2 {
		acks, err := p.Wait(context.Background())
		if err != nil || len(acks) != 1 || acks[0].Offset != 10 {
			t.Fatalf("Wait after the reply: %v, %v", acks, err)
		}
		if done, err := p.Poll(); !done || err != nil {
			t.Fatalf("Poll after the reply: done %v, err %v", done, err)
		}
	}
	p2, err := c.ProduceRecordAsync("t", 0, wire.RecordIn{Value: json.RawMessage("2")})
	if err != nil {
		t.Fatal(err)
	}
	close(release) // the server drops the connection
	if _, err := p2.Wait(context.Background()); err == nil {
		t.Fatal("Wait on a request whose connection ended: no error")
	}
	if done, err := p2.Poll(); !done || err == nil {
		t.Fatalf("Poll on a request whose connection ended: done %v, err %v", done, err)
	}
}

// TestSubscribeAsksForValueLens: a JSON subscription asks for value_lens
// (its pushes then say where each value ends), a binary one does not.
func TestSubscribeAsksForValueLens(t *testing.T) {
	reqs := make(chan map[string]json.RawMessage, 2)
	url := wiretest.ServeWS(t, func(ws *websocket.Conn) {
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var req map[string]json.RawMessage
			if err := json.Unmarshal(msg, &req); err != nil {
				return
			}
			reqs <- req
			reply := fmt.Sprintf(`{"id":%s,"sub":%d,"topic":"t","partitions":[{"partition":0,"from":0}]}`, req["id"], len(reqs))
			if err := ws.WriteMessage(websocket.TextMessage, []byte(reply)); err != nil {
				return
			}
		}
	})
	c, err := Dial(context.Background(), url, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, binary := range []bool{false, true} {
		if _, err := c.Subscribe(context.Background(), SubscribeOptions{Topic: "t", Partition: -1, Binary: binary}); err != nil {
			t.Fatalf("binary %v: %v", binary, err)
		}
		req := <-reqs
		lens, format := string(req["value_lens"]), string(req["format"])
		switch {
		case !binary && (lens != "true" || format != ""):
			t.Errorf("JSON subscribe sent value_lens %q, format %q; want true and none", lens, format)
		case binary && (lens != "" || format != `"binary"`):
			t.Errorf("binary subscribe sent value_lens %q, format %q; want none and \"binary\"", lens, format)
		}
	}
}
