package kafka

import (
	"bytes"
	"fmt"
	"net"
	"sort"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi"
)

// pulse is a Pulse engine with the Kafka listener on an ephemeral port.
type pulse struct {
	eng  *engine.Engine
	srv  *Server
	addr string
	dir  string
}

func startPulse(t testing.TB, dir string, opts Options) *pulse {
	t.Helper()
	return startPulseOn(t, dir, "127.0.0.1:0", opts)
}

// startPulseOn is startPulse with the listener on listen (host:port).
func startPulseOn(t testing.TB, dir, listen string, opts Options) *pulse {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	eng, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	return servePulse(t, eng, listen, opts)
}

// startPulseOnEngine is startPulse on an engine opened with options of the
// test's own; the listener closes it on cleanup.
func startPulseOnEngine(t testing.TB, eng *engine.Engine, opts Options) *pulse {
	t.Helper()
	return servePulse(t, eng, "127.0.0.1:0", opts)
}

func servePulse(t testing.TB, eng *engine.Engine, listen string, opts Options) *pulse {
	t.Helper()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(eng, opts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	p := &pulse{eng: eng, srv: srv, addr: l.Addr().String(), dir: eng.Dir()}
	t.Cleanup(func() { p.stop(t); <-served })
	return p
}

func (p *pulse) stop(t testing.TB) {
	if p.srv == nil {
		return
	}
	p.srv.Close()
	if err := p.eng.Close(); err != nil && err != engine.ErrClosed {
		t.Errorf("closing the engine: %v", err)
	}
	p.srv = nil
}

// rec is a record as clients see it, for byte-for-byte comparisons.
type rec struct {
	Topic     string
	Partition int32
	Key       string
	Value     string
	Headers   string
}

func (r rec) String() string {
	return fmt.Sprintf("%s/%d key=%q value=%q headers=%s", r.Topic, r.Partition, r.Key, r.Value, r.Headers)
}

func headerString(kv ...[2][]byte) string {
	var b bytes.Buffer
	for _, h := range kv {
		fmt.Fprintf(&b, "%q=%q;", h[0], h[1])
	}
	return b.String()
}

func sortRecs(rs []rec) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].String() < rs[j].String() })
}

// sameRecs fails unless got and want hold the same records (any order).
func sameRecs(t testing.TB, got, want []rec) {
	t.Helper()
	sortRecs(got)
	sortRecs(want)
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

// serveWebsocket serves the websocket API on eng on an ephemeral port
// until the test ends and returns its address.
func serveWebsocket(t testing.TB, eng *engine.Engine) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ws := wsapi.New(eng, wsapi.DefaultOptions())
	go ws.Serve(l)
	t.Cleanup(func() { ws.Close() })
	return l.Addr().String()
}
