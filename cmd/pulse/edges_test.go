package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A --server that is not an address of Pulse's websocket API is said to
// be one, naming the flag, by every client command, before anything is
// dialled; a well-formed address where nothing listens keeps "no pulse
// running at".
func TestServerFlagMalformed(t *testing.T) {
	for _, c := range []struct{ server, want string }{
		{"nonsense", `--server "nonsense": no port (want host:port or ws://host:port)`},
		{"127.0.0.1:99999", `--server "127.0.0.1:99999": port 99999 is not a port number (1 to 65535)`},
		{"127.0.0.1:abc", `--server "127.0.0.1:abc": port abc is not a port number (1 to 65535)`},
		{"ws://127.0.0.1", `--server "ws://127.0.0.1": no port (want host:port or ws://host:port)`},
		{"ws://127.0.0.1:7451/v1/topics/x/tail", `--server "ws://127.0.0.1:7451/v1/topics/x/tail": path /v1/topics/x/tail is not Pulse's websocket API (leave it out, or /v1/ws)`},
		{"http://127.0.0.1:7451", `--server "http://127.0.0.1:7451": scheme http (want host:port or ws://host:port)`},
	} {
		for _, args := range [][]string{
			{"produce", "t"}, {"tail", "t", "-e"}, {"topics", "list"}, {"consumers", "list"},
		} {
			_, errOut, err := pulse(t, "x\n", append(args, "--server", c.server)...)
			if err == nil || errOut != "pulse: "+c.want+"\n" {
				t.Errorf("pulse %v --server %s: %v, stderr %q; want %q", args, c.server, err, errOut, c.want)
			}
		}
	}
	// Where nothing listens, at a port just freed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().String()
	l.Close()
	for _, server := range []string{free, "ws://" + free, "ws://" + free + "/v1/ws"} {
		_, errOut, err := pulse(t, "x\n", "produce", "t", "--server", server)
		if err == nil || !strings.Contains(errOut, "no pulse running at "+free) {
			t.Errorf("produce --server %s: %v, stderr %q", server, err, errOut)
		}
	}
	// PULSE_SERVER is named when it is where the address came from.
	cmd := exec.Command(pulseBinary(t), "topics", "list")
	cmd.Env = append(os.Environ(), "PULSE_SERVER=nonsense")
	out, err := cmd.CombinedOutput()
	if want := "pulse: PULSE_SERVER \"nonsense\": no port (want host:port or ws://host:port)\n"; err == nil || string(out) != want {
		t.Errorf("PULSE_SERVER=nonsense pulse topics list: %v, %q; want %q", err, out, want)
	}
}

// inspect, verify and dump of a path that does not exist name the command
// and say what the argument should be, not only "stat X: no such file".
func TestOfflineCommandsMissingPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", missing}, "inspect: " + missing + " does not exist (want a data directory, a topic directory or a partition directory)"},
		{[]string{"verify", "-q", missing}, "verify: " + missing + " does not exist (want a data directory, a topic directory or a partition directory)"},
		{[]string{"inspect", "--data", missing}, "inspect: " + missing + " does not exist (want a data directory, a topic directory or a partition directory)"},
		{[]string{"dump", missing + ".log"}, "dump: " + missing + ".log does not exist (want a .log segment file, or an .index, snapshot or hwm file)"},
	} {
		out, errOut, err := pulse(t, "", c.args...)
		if err == nil || errOut != "pulse: "+c.want+"\n" || out != "" {
			t.Errorf("pulse %v: %v, stdout %q, stderr %q; want %q", c.args, err, out, errOut, c.want)
		}
	}
}

// pulse serve --listen 0.0.0.0:P listens on IPv4's every address, and its
// banner says so: ws://0.0.0.0:P, not ws://[::]:P (Go's dual-stack
// socket); the Kafka listener's part of the banner the same.
func TestServeBannerNamesTheListenAddress(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), "--listen", "0.0.0.0:0", "--kafka-listen", "0.0.0.0:0", "--token", "sekrit")
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil || host != "0.0.0.0" {
		t.Fatalf("banner address %q (%v), want 0.0.0.0:PORT", s.addr, err)
	}
	if got := mustPulse(t, "a\n", "produce", "banner", "--server", "127.0.0.1:"+port, "--token", "sekrit"); got != "" {
		t.Errorf("produce printed %q", got)
	}
	// The Kafka part is "Kafka on 0.0.0.0:Q" and takes connections on
	// 127.0.0.1:Q.
	m := regexp.MustCompile(`, Kafka on (\S+)\n$`).FindStringSubmatch(s.banner)
	if m == nil {
		t.Fatalf("banner %q names no Kafka listener", s.banner)
	}
	khost, kport, err := net.SplitHostPort(m[1])
	if err != nil || khost != "0.0.0.0" {
		t.Fatalf("Kafka listener in the banner %q (%v), want 0.0.0.0:PORT", m[1], err)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+kport)
	if err != nil {
		t.Fatalf("the Kafka listener of the banner takes no connection: %v", err)
	}
	c.Close()
}

// consumers reset --dry-run refuses the consumer names the real run
// refuses, with the same error and before printing any move; neither
// moves anything.
func TestConsumersResetDryRunRefusesWhatTheRunRefuses(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	mustPulse(t, "a\nb\n", "produce", "orders", "--server", s.addr)
	for _, name := range []string{"a/b", "", strings.Repeat("x", 250)} {
		args := []string{"consumers", "reset", name, "--topic", "orders", "--to-earliest", "--server", s.addr}
		dryOut, dryErr, derr := pulse(t, "", append(args, "--dry-run")...)
		out, errOut, err := pulse(t, "", args...)
		if err == nil || derr == nil || out != "" || dryOut != "" || dryErr != errOut || !strings.Contains(errOut, "invalid consumer name") {
			t.Errorf("consumers reset %q: run %v stdout %q stderr %q; dry run %v stdout %q stderr %q; want both refused alike", name, err, out, errOut, derr, dryOut, dryErr)
		}
	}
	// A name the store takes (a space, unicode) is moved by both.
	out := mustPulse(t, "", "consumers", "reset", "my group é", "--topic", "orders", "--to-latest", "--dry-run", "--server", s.addr)
	if out != "would move my group é orders partition 0: no cursor → 2\n" {
		t.Errorf("dry run of a good name printed %q", out)
	}
	if got := mustPulse(t, "", "consumers", "list", "--server", s.addr); strings.Contains(got, "my group") {
		t.Errorf("the dry run moved a cursor: %q", got)
	}
	out = mustPulse(t, "", "consumers", "reset", "my group é", "--topic", "orders", "--to-latest", "--server", s.addr)
	if out != "moved my group é orders partition 0: no cursor → 2\n" {
		t.Errorf("run of a good name printed %q", out)
	}
}

// pulse produce of many lines each well under the server's read limit
// succeeds, however they are batched: a request holds at most --batch
// records and, past its first, produceRequestBytes of them (100 lines of
// 20 KB read at once made one 2 MB request, which the server closed with
// 1009 for its 1 MiB read limit).
func TestProduceBatchesStayUnderTheReadLimit(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	var in strings.Builder
	for i := range 100 {
		in.WriteString(strings.Repeat(string(rune('a'+i%26)), 20000) + "\n")
	}
	// From a file, so that the lines are there as fast as they are read.
	f := filepath.Join(t.TempDir(), "lines")
	if err := os.WriteFile(f, []byte(in.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd := exec.Command(pulseBinary(t), "produce", "wide", "--server", s.addr)
	cmd.Stdin = stdin
	errOut, err := cmd.CombinedOutput()
	if err != nil || string(errOut) != "pulse: produced 100 records to wide\n" {
		t.Fatalf("produce of 100 lines of 20 KB: %v, output %q", err, errOut)
	}
	out := mustPulse(t, "", "tail", "wide", "-o", "beginning", "-e", "-f", `%v\n`, "--server", s.addr)
	if out != in.String() {
		t.Errorf("the topic holds %d bytes, want the %d of the input, in order", len(out), in.Len())
	}
}

// A line over the server's read limit is named in Pulse's words: its line
// number and size, the server's read limit (pulse serve --read-limit),
// that nothing of it was stored, and what became of the lines before it;
// not websocket close code 1009. Nothing of it or after it is stored.
func TestProduceLineOverTheReadLimit(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	in := "a\nb\n" + strings.Repeat("x", 2000000) + "\nc\n"
	f := filepath.Join(t.TempDir(), "lines")
	if err := os.WriteFile(f, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd := exec.Command(pulseBinary(t), "produce", "big", "--server", s.addr)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	got := string(out)
	if err == nil || strings.Contains(got, "1009") || strings.Contains(got, "message too big") {
		t.Fatalf("produce of a 2 MB line: %v, output %q", err, got)
	}
	// A line over 256 KiB goes alone once the lines before it are acked,
	// so they are.
	want := regexp.MustCompile(`^pulse: produced 2 records to big\npulse: produce to big: line 3 \(2000000 bytes; its request 2000\d{3} bytes\) is over the server's read limit \(pulse serve --read-limit, 1 MiB by default\): nothing of it was stored, and the server closed the connection; lines 1-2 before it were acked; nothing after it was stored\n$`)
	if !want.MatchString(got) {
		t.Fatalf("produce of a 2 MB line said %q, want %v", got, want)
	}
	if stored := mustPulse(t, "", "tail", "big", "-o", "beginning", "-e", "-f", `%v\n`, "--server", s.addr); stored != "a\nb\n" {
		t.Errorf("the topic holds %q, want a and b", stored)
	}
}
