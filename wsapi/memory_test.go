package wsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
)

// stalledDial connects a websocket client, with a small socket receive
// buffer when small is set, so that a client that does not read stalls the
// server quickly (and costs the kernel little).
func stalledDial(t testing.TB, addr string, small bool) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{ReadBufferSize: 1024, WriteBufferSize: 1024, NetDialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, a)
		if err == nil && small {
			c.(*net.TCPConn).SetReadBuffer(4 << 10)
		}
		return c, err
	}}
	ws, _, err := d.Dial("ws://"+addr+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// fillTopics produces about mib MiB of ~1 KiB records to each topic.
func fillTopics(t testing.TB, addr string, mib int, topics ...string) {
	t.Helper()
	ctx := testCtx(t)
	admin := dialClient(t, addr)
	var pend []*wsclient.Pending
	for _, topic := range topics {
		for r := range mib {
			recs := make([]wire.RecordIn, 1000)
			for i := range recs {
				recs[i].Value = jsonValue(r*1000 + i)
			}
			p, err := admin.ProduceAsync(topic, -1, recs)
			if err != nil {
				t.Fatal(err)
			}
			pend = append(pend, p)
		}
	}
	for _, p := range pend {
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A connection with four subscriptions over a backlog of 32 MiB that stops
// reading holds at most SendBytes of pushes (plus one record's JSON per
// push in flight), however long it stays stalled: the backlog waits on disk.
func TestStalledConnectionHoldsBoundedBytes(t *testing.T) {
	opts := DefaultOptions()
	opts.SlowConsumerWait = time.Hour // stay stalled, not cut off
	ts := startServer(t, opts)
	topics := []string{"t0", "t1", "t2", "t3"}
	fillTopics(t, ts.addr, 8, topics...)
	ws := stalledDial(t, ts.addr, false)
	for i, topic := range topics {
		msg := fmt.Sprintf(`{"op":"subscribe","id":%d,"topic":%q,"from":"earliest"}`, i, topic)
		if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	recJSON := int64(len(wire.AppendRecordJSON(nil, 0, &engine.Record{Offset: 1 << 40, Timestamp: 1 << 41, Value: jsonValue(1 << 20)})))
	bound := opts.SendBytes + 4*recJSON
	var c *conn
	waitUntil(t, func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		for cc := range ts.conns {
			if cc.subCount() == 4 {
				c = cc
			}
		}
		return c != nil
	}, "the four subscriptions")
	// Stalled: subscriptions wait for room, none can read.
	waitUntil(t, func() bool {
		if q := c.queued.Load(); q > bound {
			t.Fatalf("a stalled connection holds %d bytes, bound %d", q, bound)
		}
		return c.waiting.Load() >= 2
	}, "the subscriptions to stall")
	if q := c.queued.Load(); q > bound {
		t.Fatalf("a stalled connection holds %d bytes, bound %d", q, bound)
	}
	// Reading again delivers everything, in order, without a cut-off.
	next := map[int64]int64{}
	total := 0
	for total < 4*8*1000 {
		ws.SetReadDeadline(time.Now().Add(hangGuard))
		_, b, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("after %d records: %v", total, err)
		}
		var env struct {
			Sub     int64             `json:"sub"`
			Records []json.RawMessage `json:"records"`
		}
		if json.Unmarshal(b, &env) != nil || env.Sub == 0 {
			continue // a subscribe reply
		}
		for _, raw := range env.Records {
			r, err := wsclient.DecodeRecord(raw)
			if err != nil {
				t.Fatal(err)
			}
			if r.Offset != next[env.Sub] {
				t.Fatalf("sub %d: offset %d, want %d", env.Sub, r.Offset, next[env.Sub])
			}
			next[env.Sub]++
			total++
		}
	}
}

// rssBytes is the resident set size of this process (Linux).
func rssBytes(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestStalledSubscribersRSS measures the memory of 1,000 connections that
// subscribe and never read while a producer runs (PULSE_LONG=1; the
// figure is logged). The clients run in this process too: the figure is
// an upper bound of the server's cost.
func TestStalledSubscribersRSS(t *testing.T) {
	if os.Getenv("PULSE_LONG") == "" {
		t.Skip("a measurement: PULSE_LONG=1")
	}
	const n = 1000
	opts := DefaultOptions()
	opts.MaxConns = n + 10
	opts.SlowConsumerWait = time.Hour
	ts := startServer(t, opts)
	fillTopics(t, ts.addr, 8, "feed")
	runtime.GC()
	before := rssBytes(t)
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		conns[i] = stalledDial(t, ts.addr, true)
		if err := conns[i].WriteMessage(websocket.TextMessage, []byte(`{"op":"subscribe","id":1,"topic":"feed","from":"earliest"}`)); err != nil {
			t.Fatal(err)
		}
	}
	// A producer keeps adding while they stall.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		p := dialClient(t, ts.addr)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			recs := make([]wire.RecordIn, 100)
			for j := range recs {
				recs[j].Value = jsonValue(i*100 + j)
			}
			if _, err := p.Produce(ctx, "feed", -1, recs); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var peak, queued int64
	start := time.Now()
	for time.Since(start) < 8*time.Second { // writeWait (10 s) ends stalled connections
		if r := rssBytes(t); r > peak {
			peak = r
		}
		queued = ts.Stats().QueuedBytes
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d stalled subscribers: RSS %d MiB before, peak %d MiB, %.0f KiB per connection; queued now %d MiB (%.0f KiB per connection)",
		n, before>>20, peak>>20, float64(peak-before)/n/1024, queued>>20, float64(queued)/n/1024)
}
