package kafka

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
)

// TestWildcardListenAdvertisesLoopback listens on every interface (as
// `--kafka-listen 0.0.0.0:PORT` does): the address Metadata advertises
// must be one a client can connect to, not the unspecified "::", which
// librdkafka cannot resolve (kcat then waits for its message timeout).
func TestWildcardListenAdvertisesLoopback(t *testing.T) {
	kcat := need(t, "kcat", "-V")
	eng, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(eng, DefaultOptions())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() { srv.Close(); <-served }()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	addr := "127.0.0.1:" + port

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	produce := exec.CommandContext(ctx, kcat, "-b", addr, "-P", "-t", "wild", "-X", "message.timeout.ms=15000")
	produce.Stdin = strings.NewReader("one\ntwo\n")
	if out, err := produce.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("kcat -P on a wildcard listener: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, kcat, "-b", addr, "-C", "-t", "wild", "-o", "beginning", "-e", "-q").Output()
	if err != nil || string(out) != "one\ntwo\n" {
		t.Fatalf("kcat -C on a wildcard listener: %v, read %q, want %q", err, out, "one\ntwo\n")
	}
	if got, want := srv.Addr(), addr; got != want {
		t.Fatalf("advertised %q, want %q", got, want)
	}
}
