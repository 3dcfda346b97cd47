//go:build linux

package bench

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestListenerPID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	pid, err := listenerPID(addr)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("listenerPID(%s) = %d, %v; want this process, %d", addr, pid, err, os.Getpid())
	}
	_, port, _ := net.SplitHostPort(addr)
	if pid, err := listenerPID("localhost:" + port); err != nil || pid != os.Getpid() {
		t.Errorf("listenerPID(localhost:%s) = %d, %v", port, pid, err)
	}
	ln.Close()
	if pid, err := listenerPID(addr); err == nil || !strings.Contains(err.Error(), "port "+port) {
		t.Errorf("closed listener: pid %d, error %v; want one naming port %s", pid, err, port)
	}
	if _, err := listenerPID("192.0.2.1:" + port); err == nil || !strings.Contains(err.Error(), "--server-pid") {
		t.Errorf("non-loopback address: error %v, want one pointing at --server-pid", err)
	}
	if _, err := listenerPID("127.0.0.1"); err == nil {
		t.Error("address without a port: no error")
	}
}

func TestProcessCPU(t *testing.T) {
	// Some CPU time to see: work until the process has used a tick's
	// worth.
	for start := time.Now(); ; {
		if d, _ := processCPU(0); d > 20*time.Millisecond || time.Since(start) > 10*time.Second {
			break
		}
	}
	for _, pid := range []int{0, os.Getpid()} {
		d, err := processCPU(pid)
		if err != nil || d <= 0 {
			t.Errorf("processCPU(%d) = %v, %v; want a positive time", pid, d, err)
		}
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := statCPU(stat); err != nil || d < 0 {
		t.Errorf("statCPU(/proc/self/stat) = %v, %v", d, err)
	}
	if _, err := processCPU(1 << 30); err == nil {
		t.Error("processCPU of a pid that cannot exist: no error")
	}
}

func TestStatCPU(t *testing.T) {
	rest := " S 1 1 1 0 -1 4194560 100 0 0 0 250 125 0 0 20 0 1 0 5 1000 10 18446744073709551615"
	for _, name := range []string{"(pulse)", "(a b)", "(x) S 1 2 (y))"} {
		d, err := statCPU([]byte("42 " + name + rest))
		if err != nil || d != 3750*time.Millisecond {
			t.Errorf("statCPU with command %s = %v, %v; want 3.75s", name, d, err)
		}
	}
	for _, bad := range []string{"", "42 pulse S 1", "42 (pulse) S 1 1", "42 (pulse)" + strings.Replace(rest, "250", "x", 1), "42 (pulse)" + strings.Replace(rest, "125", "-5", 1)} {
		if d, err := statCPU([]byte(bad)); err == nil {
			t.Errorf("statCPU(%q) = %v, want an error", bad, d)
		}
	}
}

func TestProcessIO(t *testing.T) {
	for _, pid := range []int{0, os.Getpid()} {
		r, w, err := processIO(pid)
		if err != nil || r < 0 || w < 0 {
			t.Errorf("processIO(%d) = %d, %d, %v", pid, r, w, err)
		}
	}
	if _, _, err := processIO(1 << 30); err == nil {
		t.Error("processIO of a pid that cannot exist: no error")
	}
}
