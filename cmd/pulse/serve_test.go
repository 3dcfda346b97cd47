package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
)

// clientBins maps a test to the pulse binary built for it.
var clientBins sync.Map

// pulseBinary builds the pulse command once per test, into the test's
// temporary directory.
func pulseBinary(t *testing.T) string {
	t.Helper()
	if bin, ok := clientBins.Load(t); ok {
		return bin.(string)
	}
	bin := filepath.Join(t.TempDir(), "pulse")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	clientBins.Store(t, bin)
	t.Cleanup(func() { clientBins.Delete(t) })
	return bin
}

// served is a `pulse serve` process.
type served struct {
	cmd    *exec.Cmd
	addr   string
	banner string
	stderr *bytes.Buffer
	waited chan error
}

var bannerRE = regexp.MustCompile(`^pulse: serving (.+) on ws://([^/]+)/v1/ws`)

// startServe runs `pulse serve` on dir and port 0 and reads its banner.
func startServe(t *testing.T, dir string, extra ...string) *served {
	t.Helper()
	bin := pulseBinary(t)
	// The Kafka listener on a free port, never the default 9092 (the
	// documentation tests use it); extra may name another.
	cmd := exec.Command(bin, append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--kafka-listen", "127.0.0.1:0"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, stderr: &bytes.Buffer{}, waited: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	banner, err := bufio.NewReader(stdout).ReadString('\n')
	m := bannerRE.FindStringSubmatch(banner)
	if err != nil || m == nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve banner %q (%v), stderr %s", banner, err, s.stderr)
	}
	if strings.Count(banner, "\n") != 1 {
		t.Errorf("banner is not one line: %q", banner)
	}
	s.addr, s.banner = m[2], banner
	go func() { io.Copy(io.Discard, stdout); s.waited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-s.waited
		}
	})
	return s
}

// stop sends sig and waits for the process to exit.
func (s *served) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.waited:
		return err
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		t.Fatalf("pulse serve did not exit after %v; stderr %s", sig, s.stderr)
		return nil
	}
}

// pulse runs a client command and returns its stdout; stdin may be "".
func pulse(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(pulseBinary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), errb.String(), err
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("pulse %v did not finish; stdout %s stderr %s", args, out.String(), errb.String())
		return "", "", nil
	}
}

// mustPulse runs a client command that must succeed.
func mustPulse(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := pulse(t, stdin, args...)
	if err != nil {
		t.Fatalf("pulse %v: %v\nstdout %s\nstderr %s", args, err, out, errOut)
	}
	return out
}

func TestServeAndClientCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	srv := []string{"--server", s.addr}
	with := func(args ...string) []string { return append(args, srv...) }

	if out := mustPulse(t, "", with("topics", "create", "orders", "--partitions", "3", "--sync-mode", "interval", "--codec", "none", "--segment", "1MiB", "--retention", "1h", "--cleanup", "compact")...); !strings.Contains(out, "created topic orders (3 partitions, none, interval)") {
		t.Fatalf("topics create: %q", out)
	}
	if _, errOut, err := pulse(t, "", with("topics", "create", "orders")...); err == nil || !strings.Contains(errOut, "topic_exists") {
		t.Fatalf("creating orders twice: %v %s", err, errOut)
	}
	if _, errOut, err := pulse(t, "", with("topics", "create", "../evil")...); err == nil || !strings.Contains(errOut, "invalid_topic") {
		t.Fatalf("creating ../evil: %v %s", err, errOut)
	}

	// Lines of stdin, one key and headers for all: one partition.
	_, errOut, err := pulse(t, "first\n{\"a\":1}\n\nthird\ttabbed\n", with("produce", "orders", "--key", "user-1", "--header", "source=cli", "-H", "trace=t1")...)
	if err != nil || !strings.Contains(errOut, "produced 3 records to orders") {
		t.Fatalf("produce lines: %v %s", err, errOut)
	}
	// JSON lines with their own keys, partitions, tombstones.
	jl := `{"key":"k2","value":{"x":2},"headers":{"h":"v"},"partition":1}
{"key":"k2","value":null,"partition":1}
{"value_b64":"/wAB","partition":1}
`
	if _, errOut, err := pulse(t, jl, with("produce", "orders", "--json")...); err != nil || !strings.Contains(errOut, "produced 3 records") {
		t.Fatalf("produce --json: %v %s", err, errOut)
	}
	// A bad JSON line stops with its line number, after what came before.
	if _, errOut, err := pulse(t, "{\"value\":1}\nnot json\n", with("produce", "orders", "--json", "--partition", "2")...); err == nil || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "produced 1 record to") {
		t.Fatalf("produce --json with a bad line: %v %s", err, errOut)
	}

	// Tail, kcat style, from the beginning of partition 1.
	out := mustPulse(t, "", with("tail", "orders", "--partition", "1", "--from", "earliest", "--count", "3")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("tail printed %q", out)
	}
	want := []string{"1\t0\t* \tk2\t{\"x\":2}", "1\t1\t* \tk2\t<tombstone>", "1\t2\t* \t-\t\"\\xff\\x00\\x01\""}
	for i, l := range lines {
		f := strings.Split(l, "\t")
		w := strings.Split(want[i], "\t")
		if len(f) != 5 || f[0] != w[0] || f[1] != w[1] || f[3] != w[3] || f[4] != w[4] {
			t.Errorf("tail line %d = %q, want fields %q", i, l, w)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", f[2]); err != nil {
			t.Errorf("tail line %d timestamp %q: %v", i, f[2], err)
		}
	}
	// --json prints the wire form; --from N and @ms.
	out = mustPulse(t, "", with("tail", "orders", "--from", "1", "--partition", "1", "--count", "1", "--json")...)
	var rec map[string]any
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec["tombstone"] != true || rec["offset"] != float64(1) {
		t.Fatalf("tail --json: %q %v", out, err)
	}
	out = mustPulse(t, "", with("tail", "orders", "--from", "@0", "--partition", "1", "--count", "1")...)
	if !strings.HasPrefix(out, "1\t0\t") {
		t.Fatalf("tail --from @0: %q", out)
	}

	// A consumer resumes where it stopped.
	out = mustPulse(t, "", with("tail", "orders", "--partition", "1", "--from", "earliest", "--consumer", "ops", "--count", "2")...)
	if strings.Count(out, "\n") != 2 {
		t.Fatalf("consumer tail: %q", out)
	}
	out = mustPulse(t, "", with("tail", "orders", "--partition", "1", "--consumer", "ops", "--count", "1")...)
	if !strings.HasPrefix(out, "1\t2\t") {
		t.Fatalf("consumer resumed at %q, want offset 2", out)
	}

	out = mustPulse(t, "", with("topics", "list")...)
	if !strings.Contains(out, "orders") || !strings.Contains(out, "compact") {
		t.Fatalf("topics list: %q", out)
	}
	out = mustPulse(t, "", with("topics", "describe", "orders")...)
	for _, w := range []string{"partitions  3", "sync mode   interval", "cleanup     compact", "retention   1h", "segment     1.0 MiB (1048576 bytes)", "PARTITION"} {
		if !strings.Contains(out, w) {
			t.Errorf("describe lacks %q:\n%s", w, out)
		}
	}
	out = mustPulse(t, "", with("topics", "list", "--json")...)
	var tl []map[string]any
	if err := json.Unmarshal([]byte(out), &tl); err != nil || len(tl) != 1 {
		t.Fatalf("topics list --json: %q %v", out, err)
	}

	// Auto-create on first produce.
	mustPulse(t, "hello\n", with("produce", "fresh")...)
	out = mustPulse(t, "", with("tail", "fresh", "--from", "earliest", "--count", "1")...)
	if !strings.HasSuffix(strings.TrimSpace(out), "\t-\thello") {
		t.Fatalf("tail of an auto-created topic: %q", out)
	}
	if out := mustPulse(t, "", with("topics", "delete", "fresh")...); !strings.Contains(out, "deleted topic fresh") {
		t.Fatalf("topics delete: %q", out)
	}
	if _, errOut, err := pulse(t, "", with("topics", "describe", "fresh")...); err == nil || !strings.Contains(errOut, "topic_not_found") {
		t.Fatalf("describe a deleted topic: %v %s", err, errOut)
	}

	// SIGTERM: a clean exit, then the data is all there.
	if err := s.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("pulse serve exit after SIGTERM: %v\n%s", err, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "shutting down") {
		t.Errorf("stderr after SIGTERM: %s", s.stderr)
	}
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatalf("reopening after SIGTERM: %v", err)
	}
	defer e.Close()
	ti, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range ti.Partitions {
		n += p.HWM
	}
	if n != 7 {
		t.Fatalf("orders holds %d records after restart, want 7", n)
	}
	if off, ok, err := e.Cursor("ops", "orders", 1); err != nil || !ok || off != 3 {
		t.Fatalf("cursor of ops: %d %v %v, want 3", off, ok, err)
	}
}

func TestClientsWithoutAServer(t *testing.T) {
	// A port nobody listens on: take one and release it.
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	addr := s.addr
	if err := s.stop(t, syscall.SIGINT); err != nil {
		t.Fatalf("pulse serve exit after SIGINT: %v\n%s", err, s.stderr)
	}
	for _, args := range [][]string{
		{"topics", "list"},
		{"tail", "x"},
		{"produce", "x"},
		{"topics", "create", "x"},
	} {
		_, errOut, err := pulse(t, "line\n", append(args, "--server", addr)...)
		want := "no pulse running at " + addr + ": start one with `pulse` or `pulse serve`"
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("pulse %v without a server: %v %q, want %q", args, err, errOut, want)
		}
	}
}

func TestServeTokenAndSecondInstance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir, "--token", "s3cret")
	if _, errOut, err := pulse(t, "", "topics", "list", "--server", s.addr); err == nil || !strings.Contains(errOut, "401") {
		t.Fatalf("no token: %v %s", err, errOut)
	}
	mustPulse(t, "", "topics", "list", "--server", s.addr, "--token", "s3cret")
	// The data directory is locked: a second serve on it fails clearly,
	// naming the directory once.
	_, errOut, err := pulse(t, "", "serve", "--data", dir, "--listen", "127.0.0.1:0", "--kafka-listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(errOut, "locked") {
		t.Fatalf("second serve on the same data dir: %v %s", err, errOut)
	}
	if n := strings.Count(errOut, dir); n != 1 {
		t.Errorf("second serve on the same data dir names it %d times: %s", n, errOut)
	}
	if err := s.stop(t, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
}

func TestProduceLineRecords(t *testing.T) {
	hs, err := parseHeaders([]string{"a=1", "b=x=y"})
	if err != nil || hs["a"] != "1" || hs["b"] != "x=y" {
		t.Fatalf("parseHeaders: %v %v", hs, err)
	}
	for _, bad := range []string{"nokey", "=v"} {
		if _, err := parseHeaders([]string{bad}); err == nil {
			t.Errorf("parseHeaders(%q) accepted", bad)
		}
	}
	r, err := lineRecord([]byte("plain"), 1, produceConfig{key: "k", keySet: true}, hs)
	if err != nil || string(r.Value) != `"plain"` || *r.Key != "k" || r.Headers["a"] != "1" {
		t.Fatalf("plain line: %+v %v", r, err)
	}
	// A JSON object or array line is sent as JSON (and reads back as
	// JSON); any other line is text ("42" stays the string "42").
	for line, want := range map[string]string{`{"total":12.5}`: `{"total":12.5}`, ` [1,2] `: `[1,2]`, `42`: `"42"`, `null`: `"null"`, `{"broken"`: `"{\"broken\""`} {
		if r, err := lineRecord([]byte(line), 1, produceConfig{}, nil); err != nil || string(r.Value) != want {
			t.Errorf("line %q: value %s, want %s (%v)", line, r.Value, want, err)
		}
	}
	r, err = lineRecord([]byte{0xff, 0xfe}, 1, produceConfig{}, nil)
	if err != nil || r.ValueB64 == nil || *r.ValueB64 != "//4=" {
		t.Fatalf("binary line: %+v %v", r, err)
	}
	if _, err := lineRecord([]byte(`{"key":"k"}`), 7, produceConfig{jsonLines: true}, nil); err == nil || !strings.Contains(err.Error(), "line 7") {
		t.Fatalf("JSON line without a value: %v", err)
	}
	// The server's words for a record object's mistakes, not Go's.
	for line, want := range map[string]string{
		`{"value":1,"colour":"red"}`:    `line 3: unknown field "colour"`,
		`{"key":5,"value":1}`:           `line 3: field "key": got number, want a string`,
		`{"value":1,"headers":{"a":1}}`: `line 3: field "headers": got number, want a string`,
		`[{"value":1}]`:                 `line 3: a record is a JSON object`,
	} {
		if _, err := lineRecord([]byte(line), 3, produceConfig{jsonLines: true}, nil); err == nil || err.Error() != want {
			t.Errorf("JSON line %s: %v, want %q", line, err, want)
		}
	}
	// Text after the record is refused, as the server refuses it, rather
	// than dropped.
	if _, err := lineRecord([]byte(`{"value":1} {"value":2}`), 4, produceConfig{jsonLines: true}, nil); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("JSON line with text after the record: %v", err)
	}
}

func TestTailPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"hello":            "hello",
		"tab\there":        `"tab\there"`,
		"{\n  \"a\": 1\n}": `{"a":1}`,
		"\xff":             `"\xff"`,
		"ünïcode":          "ünïcode",
		"":                 "",
	} {
		if got := printable([]byte(in)); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListenAndToken(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:7450": true, "localhost:1": true, "[::1]:7450": true, "0.0.0.0:7450": false, ":7450": false, "192.168.1.2:7450": false} {
		if got := isLoopbackListen(addr); got != want {
			t.Errorf("isLoopbackListen(%q) = %v", addr, got)
		}
	}
	cfg := apiConfig{Listen: "0.0.0.0:7450"}
	if made, err := cfg.ensureToken(); err != nil || !made || len(cfg.Token) != 32 {
		t.Fatalf("ensureToken on 0.0.0.0: %v %v %q", made, err, cfg.Token)
	}
	cfg = apiConfig{Listen: "127.0.0.1:7450"}
	if made, _ := cfg.ensureToken(); made || cfg.Token != "" {
		t.Fatalf("ensureToken on loopback made %q", cfg.Token)
	}
}

// TestTailConsumerOnABusyTopic: a tail that commits as it prints keeps up
// with many pushes in flight (commits must not wait while the subscription's
// buffer fills), and its cursor ends where it stopped.
func TestTailConsumerOnABusyTopic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	var in strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&in, "r%d\n", i)
	}
	if _, errOut, err := pulse(t, in.String(), "produce", "busy", "--server", s.addr); err != nil || !strings.Contains(errOut, "produced 20000 records") {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	out := mustPulse(t, "", "tail", "busy", "--from", "earliest", "--consumer", "c1", "--count", "19999", "--server", s.addr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 19999 || !strings.HasSuffix(lines[19998], "\tr19998") {
		t.Fatalf("tail printed %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if err := s.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if off, ok, err := e.Cursor("c1", "busy", 0); err != nil || !ok || off != 19999 {
		t.Fatalf("cursor %d %v %v, want 19999", off, ok, err)
	}
}
