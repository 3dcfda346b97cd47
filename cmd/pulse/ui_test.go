package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/layout"
)

// tmuxWait bounds how long the terminal test waits for the screen to show
// something (the binary starting, a screen loading). It is a deadline for a
// hung process, not a performance assertion.
const tmuxWait = 60 * time.Second

// tmux drives one private tmux server (its own socket, so a developer's
// sessions are never touched).
type tmux struct {
	t    *testing.T
	sock string
}

func (x tmux) run(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", x.sock}, args...)...).CombinedOutput()
	return string(out), err
}

func (x tmux) must(args ...string) string {
	x.t.Helper()
	out, err := x.run(args...)
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (x tmux) screen() string {
	out, _ := x.run("capture-pane", "-p", "-t", "ui")
	return out
}

// waitScreen waits until the pane shows every one of wants.
func (x tmux) waitScreen(wants ...string) string {
	x.t.Helper()
	deadline := time.Now().Add(tmuxWait)
	for {
		s := x.screen()
		ok := true
		for _, w := range wants {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the screen never showed %q; it shows:\n%s", wants, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (x tmux) keys(keys ...string) {
	x.t.Helper()
	x.must(append([]string{"send-keys", "-t", "ui"}, keys...)...)
}

// colourSGR returns the first SGR escape sequence in s that sets a
// foreground or background colour, or "".
func colourSGR(s string) string {
	for _, m := range regexp.MustCompile(`\x1b\[([0-9;:]*)m`).FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			if n, err := strconv.Atoi(p); err == nil && (n >= 30 && n <= 49 || n >= 90 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

// tmuxAndBinary makes sure tmux is there (skipping without it, except in
// CI, which installs it) and builds the real pulse binary into a temporary
// directory, which it returns with the binary's path.
func tmuxAndBinary(t *testing.T) (tmp, bin string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (apt-get install -y tmux); .ci/run installs it")
		}
		t.Skip("tmux is not installed (apt-get install -y tmux): skipping the terminal test")
	}
	tmp = t.TempDir()
	bin = filepath.Join(tmp, "pulse")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return tmp, bin
}

// TestTerminalUI builds the real binary, starts it in tmux on a known data
// dir, types keys and reads the screen back.
func TestTerminalUI(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)

	data := filepath.Join(tmp, "data")
	e := openWithTopic(t, data, "orders", 2)
	var recs []engine.Record
	for i := 0; i < 20; i++ {
		recs = append(recs, engine.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i))})
	}
	if _, err := e.Produce(context.Background(), "orders", 0, recs); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	x := tmux{t: t, sock: filepath.Join(tmp, "tmux.sock")}
	cmd := fmt.Sprintf("NO_COLOR=1 %s --data %s --listen 127.0.0.1:0 --kafka-listen off --theme dark; echo pulse-exited-$?; sleep 600", bin, data)
	x.must("new-session", "-d", "-s", "ui", "-x", "120", "-y", "32", cmd)
	t.Cleanup(func() { x.run("kill-server") })

	screen := x.waitScreen("pulse", "theme dark", "orders", "Topics", "ws 127.0.0.1:")
	m := regexp.MustCompile(`ws (127\.0\.0\.1:\d+)`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no websocket address in the header:\n%s", screen)
	}
	wsAddr := m[1]
	// NO_COLOR: the screen carries no colour at all.
	if sgr := colourSGR(x.must("capture-pane", "-e", "-p", "-t", "ui")); sgr != "" {
		t.Errorf("colour escape sequence %q on screen under NO_COLOR", sgr)
	}
	if !strings.Contains(screen, "theme dark (no colour)") {
		t.Errorf("the header does not say colour is off:\n%s", screen)
	}
	x.keys("Enter")
	x.waitScreen("Topics / orders", "LOG START", "p1 ") // rows loaded: t has one to tail
	x.keys("t")                                         // tail p0
	x.waitScreen("Topics / orders / p0 / tail", `{"order":19}`, "LIVE")

	// Produce from the form opened on the tail: partition 0 is filled in.
	x.keys("p")
	x.waitScreen("Produce to orders")
	x.keys("-l", "from-tmux")
	x.keys("Tab")
	x.keys("-l", `{"typed":"in tmux"}`)
	x.keys("Tab", "Tab")
	x.keys("Enter")
	x.waitScreen("acked: partition 0, offset 20")
	x.keys("Escape")
	x.waitScreen(`{"typed":"in tmux"}`, "from-tmux") // the tail saw it arrive

	// The websocket API served by the same process: a record produced
	// over it shows up in the open tail.
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+wsAddr+"/v1/topics/orders/produce", nil)
	if err != nil {
		t.Fatalf("websocket dial %s: %v", wsAddr, err)
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"via":"websocket"}`)); err != nil {
		t.Fatal(err)
	}
	var ack struct {
		Partition int   `json:"partition"`
		Offset    int64 `json:"offset"`
	}
	if err := ws.ReadJSON(&ack); err != nil {
		t.Fatalf("websocket ack: %v", err)
	}
	ws.Close()
	if ack.Partition == 0 {
		x.waitScreen(`{"via":"websocket"}`)
	} else {
		x.keys("]") // the keyless record went round-robin to p1
		x.waitScreen("orders p1", `{"via":"websocket"}`)
	}

	// Keys written together reach the UI as one multi-rune key: the
	// prompt must be open before its text is typed.
	x.keys(":")
	x.waitScreen("enter ok")
	x.keys("-l", "theme light")
	x.waitScreen(":theme light")
	x.keys("Enter")
	x.waitScreen("theme light")
	x.keys("?")
	x.waitScreen("Commands", ":theme NAME")
	x.keys("Escape")
	x.waitScreen("theme light", "LIVE") // a key right after esc would arrive as alt+key
	x.keys("q")
	x.waitScreen("pulse-exited-0")

	// The UI closed the engine: the data dir opens again, with the record.
	e, err = engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatalf("reopen after the UI quit: %v", err)
	}
	defer e.Close()
	res, err := e.Read("orders", 0, 20, 1, 1<<20)
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read the produced record: %d records, %v", len(res.Records), err)
	}
	if r := res.Records[0]; string(r.Key) != "from-tmux" || string(r.Value) != `{"typed":"in tmux"}` {
		t.Fatalf("stored key %q value %q", r.Key, r.Value)
	}
}

func TestDisplayPath(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for in, want := range map[string]string{
		"/home/u/.local/share/pulse": "~/.local/share/pulse",
		"/home/u":                    "~",
		"/home/u2/data":              "/home/u2/data",
		"/tmp/pulse-demo-1":          "/tmp/pulse-demo-1",
		"rel/data":                   "rel/data",
	} {
		if got := displayPath(in); got != want {
			t.Errorf("displayPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// openWithTopic opens the engine on data (created if needed) and creates
// topic with the default configuration and partitions partitions; the
// caller closes the engine before handing the dir to a pulse process.
func openWithTopic(t *testing.T, data, topic string, partitions int) *engine.Engine {
	t.Helper()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = partitions
	if err := e.CreateTopic(topic, cfg); err != nil {
		e.Close()
		t.Fatal(err)
	}
	return e
}

// TestTerminalUISignals: SIGTERM and SIGINT (kill, a service manager, an
// IDE's stop button) and SIGHUP (the terminal window closed) end the
// terminal UI as q does: status 0, the engine closed, the data dir free for
// the next pulse.
func TestTerminalUISignals(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)
	data := filepath.Join(tmp, "data")
	if err := openWithTopic(t, data, "orders", 1).Close(); err != nil {
		t.Fatal(err)
	}
	x := tmux{t: t, sock: filepath.Join(tmp, "tmux.sock")}
	t.Cleanup(func() { x.run("kill-server") })
	// A session of its own keeps the tmux server up while each run's
	// session is killed and made again.
	x.must("new-session", "-d", "-s", "keep", "sleep 600")
	pidFile := filepath.Join(tmp, "pid")
	// Only a clean close writes the partition's snapshot: a process the
	// signal killed leaves none.
	snapshot := filepath.Join(layout.PartitionDir(data, "orders", 0), layout.SnapshotFile)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		os.Remove(pidFile)
		if err := os.Remove(snapshot); err != nil {
			t.Fatal(err)
		}
		x.run("kill-session", "-t", "ui")
		cmd := fmt.Sprintf("sh -c 'echo $$ >%s; exec %s --data %s --listen 127.0.0.1:0 --kafka-listen off'; echo pulse-exited-$?; sleep 600", pidFile, bin, data)
		x.must("new-session", "-d", "-s", "ui", "-x", "120", "-y", "32", cmd)
		x.waitScreen("Topics", "orders")
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("pid file %q: %v", b, err)
		}
		proc, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Signal(sig); err != nil {
			t.Fatal(err)
		}
		x.waitScreen("pulse-exited-")
		if s := x.screen(); !strings.Contains(s, "pulse-exited-0") {
			t.Errorf("after %v the UI did not exit with status 0:\n%s", sig, s)
		}
		if _, err := os.Stat(snapshot); err != nil {
			t.Errorf("after %v the engine was not closed: %v", sig, err)
		}
		e, err := engine.Open(engine.DefaultOptions(data))
		if err != nil {
			t.Fatalf("reopen after %v: %v", sig, err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
