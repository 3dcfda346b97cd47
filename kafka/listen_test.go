package kafka

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestWildcardListenAdvertisesLoopback listens on every interface (as
// `--kafka-listen 0.0.0.0:PORT` does): the address Metadata advertises
// must be one a client can connect to, not the unspecified "::", which
// librdkafka cannot resolve (kcat then waits for its message timeout).
func TestWildcardListenAdvertisesLoopback(t *testing.T) {
	kcat := need(t, "kcat", "-V")
	p := startPulseOn(t, "", "0.0.0.0:0", DefaultOptions())
	_, port, _ := net.SplitHostPort(p.addr)
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
	if got, want := p.srv.Addr(), addr; got != want {
		t.Fatalf("advertised %q, want %q", got, want)
	}
}

// TestWildcardListenAdvertisesTheAddressConnectedTo: on a listener on
// every interface, each connection's Metadata and FindCoordinator name the
// local address that connection reached, so a client on the network
// follows the interface's address, not a loopback it cannot reach.
func TestWildcardListenAdvertisesTheAddressConnectedTo(t *testing.T) {
	p := startPulseOn(t, "", ":0", DefaultOptions())
	_, port, _ := net.SplitHostPort(p.addr)

	hosts := []string{"127.0.0.1"}
	if ifaddrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifaddrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				hosts = append(hosts, ipn.IP.String()) // a machine without one tests loopback only
				break
			}
		}
	}
	for _, host := range hosts {
		addr := net.JoinHostPort(host, port)
		cl := kgoClient(t, addr)
		meta, err := kmsg.NewPtrMetadataRequest().RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatalf("Metadata via %s: %v", addr, err)
		}
		if len(meta.Brokers) != 1 || net.JoinHostPort(meta.Brokers[0].Host, strconv.Itoa(int(meta.Brokers[0].Port))) != addr {
			t.Errorf("Metadata via %s advertises %+v", addr, meta.Brokers)
		}
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = "g"
		coord, err := fc.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatalf("FindCoordinator via %s: %v", addr, err)
		}
		if got := net.JoinHostPort(coord.Host, strconv.Itoa(int(coord.Port))); got != addr {
			t.Errorf("FindCoordinator via %s names %s", addr, got)
		}
	}
	if len(hosts) < 2 {
		t.Log("no non-loopback IPv4 address: only the loopback connection was checked")
	}
}
