package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// `pulse tail ... | head -3`: once the reader of its output is gone, the
// tail ends with status 0 and says nothing, instead of dying of SIGPIPE
// (status 141 in a shell, which fails a pipeline under pipefail).
func TestTailIntoAClosedPipeExitsZero(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	// More than a pipe buffer of output, so that the tail is still
	// writing when the reader goes away.
	var in strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&in, "line %d %s\n", i, strings.Repeat("x", 100))
	}
	mustPulse(t, in.String(), "produce", "piped", "--server", s.addr)
	for _, args := range [][]string{
		{"-o", "beginning"},
		{"-o", "beginning", "-e"},
		{"-o", "beginning", "--json"},
		{"-o", "beginning", "-f", `%v\n`},
		{"-o", "beginning", "--consumer", "headreader"},
	} {
		cmd := exec.Command(pulseBinary(t), append([]string{"tail", "piped", "--server", s.addr}, args...)...)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(stdout)
		for range 3 { // head -3
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatalf("tail %v: %v before 3 lines; stderr %s", args, err, errb.String())
			}
		}
		stdout.Close()
		err = cmd.Wait()
		if err != nil || errb.String() != "" {
			t.Errorf("tail %v into a pipe closed after 3 lines: %v, stderr %q; want status 0 and nothing said", args, err, errb.String())
		}
	}
	// What a tail that lost its reader committed is at most what it wrote.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := wsclient.Dial(ctx, s.addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc, err := c.ConsumerOn(ctx, "piped", "headreader")
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range tc.Consumers {
		if cc.Consumer == "headreader" && cc.Offset >= 5000 {
			t.Errorf("headreader committed offset %d: past what it could have printed", cc.Offset)
		}
	}
}

// A --listen that is not an address is said to be one, without the hint
// for an address another pulse holds; a taken one keeps the hint.
func TestServeListenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ listen, want, not string }{
		{"127.0.0.1:99999", "invalid port", "is another pulse running"},
		{"nonsense", "missing port in address", "is another pulse running"},
	} {
		_, errOut, err := pulse(t, "", "serve", "--data", filepath.Join(dir, "d"), "--listen", c.listen, "--kafka-listen", "off")
		if err == nil || !strings.Contains(errOut, c.want) || strings.Contains(errOut, c.not) {
			t.Errorf("serve --listen %s: %v, stderr %q; want %q without %q", c.listen, err, errOut, c.want, c.not)
		}
	}
	s := startServe(t, filepath.Join(dir, "first"))
	_, errOut, err := pulse(t, "", "serve", "--data", filepath.Join(dir, "second"), "--listen", s.addr, "--kafka-listen", "off")
	if err == nil || !strings.Contains(errOut, "(is another pulse running? use --listen ADDR)") {
		t.Errorf("serve --listen on a taken address: %v, stderr %q", err, errOut)
	}
}

// Flags of numbers that cannot mean anything are refused naming the flag,
// before anything is sent: a partition below -1 (which was taken for
// "every partition" or "by key"), a negative count (taken for "no
// limit"), a batch below 1 (taken for 1).
func TestClientNumberFlagsRefused(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	mustPulse(t, "a\n", "produce", "nums", "--server", s.addr)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tail", "nums", "-p", "-2", "-o", "beginning", "-e"}, "--partition -2: want a partition (0 or more), or -1 for every partition"},
		{[]string{"tail", "nums", "-c", "-1", "-o", "beginning", "-e"}, "--count -1: want 0 (no limit) or more"},
		{[]string{"produce", "nums", "-p", "-2"}, "--partition -2: want a partition (0 or more), or -1 for by key or round-robin"},
		{[]string{"produce", "nums", "--batch", "0"}, "--batch 0: want at least 1"},
	} {
		out, errOut, err := pulse(t, "b\n", append(c.args, "--server", s.addr)...)
		if err == nil || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("pulse %v: %v, stdout %q, stderr %q; want %q", c.args, err, out, errOut, c.want)
		}
	}
	if got := mustPulse(t, "", "tail", "nums", "-o", "beginning", "-e", "-f", `%v\n`, "--server", s.addr); got != "a\n" {
		t.Errorf("after the refused produces the topic holds %q, want only a", got)
	}
}

// SIGINT or SIGTERM stops a `pulse produce` waiting for its next line (it
// used to go on until stdin ended), and it says it was stopped by the
// signal, after the count of what was acked, not "context canceled".
func TestProduceInterrupted(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		topic := fmt.Sprintf("stopped-%d", sig)
		cmd := exec.Command(pulseBinary(t), "produce", topic, "--server", s.addr)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(stdin, "one\n")
		// Wait for the line to be stored: the tail prints it once it is.
		if got := mustPulse(t, "", "tail", topic, "-o", "beginning", "-c", "1", "-f", `%v\n`, "--server", s.addr); got != "one\n" {
			t.Fatalf("tail printed %q", got)
		}
		// With its stdin still open, as a producer typing lines is.
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("produce did not stop on %v with its stdin open; stderr %q", sig, errb.String())
		}
		stdin.Close()
		msg := errb.String()
		if err == nil || !strings.Contains(msg, "pulse: produced 1 record to "+topic+"\n") ||
			!strings.Contains(msg, "stopped ("+sig.String()+" signal received)") || strings.Contains(msg, "context canceled") {
			t.Errorf("produce stopped by %v: %v, stderr %q", sig, err, msg)
		}
	}
}

// A record the server refuses is named by its line of the input, not by
// its place in whichever request the lines were batched into.
func TestProduceRefusalNamesTheLine(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	var hs []string
	for i := range 65 {
		hs = append(hs, "-H", fmt.Sprintf("h%02d=v", i))
	}
	_, errOut, err := pulse(t, "a\n", append([]string{"produce", "many", "--server", s.addr}, hs...)...)
	if want := "pulse: produce to many: line 1: invalid_request: 65 headers (at most 64 per record)\n"; err == nil || errOut != want {
		t.Errorf("produce with 65 headers: %v, stderr %q, want %q", err, errOut, want)
	}
	var many strings.Builder
	many.WriteString(`{"value":"c","headers":{`)
	for i := range 65 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"h%02d":"v"`, i)
	}
	many.WriteString("}}\n")
	in := "{\"value\":\"a\"}\n{\"value\":\"b\"}\n\n" + many.String() + "{\"value\":\"d\"}\n"
	_, errOut, err = pulse(t, in, "produce", "many", "--json", "--server", s.addr)
	if want := "line 4: invalid_request: 65 headers (at most 64 per record)"; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("produce --json with 65 headers on line 4: %v, stderr %q, want %q", err, errOut, want)
	}
}

// Caps no server can run under are refused naming the flag, before the
// data dir is made (they were taken for the defaults, or refused every
// topic).
func TestServeRefusesBadCaps(t *testing.T) {
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--read-limit", "0", "--read-limit 0: want at least 1 byte"},
		{"--read-limit", "-5", "--read-limit -5: want at least 1 byte"},
		{"--max-topics", "0", "--max-topics 0: want at least 1"},
		{"--max-topics", "-1", "--max-topics -1: want at least 1"},
		{"--max-partitions", "-3", "--max-partitions -3: want at least 1"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		_, errOut, err := pulse(t, "", "serve", "--data", dir, "--listen", "127.0.0.1:0", "--kafka-listen", "off", c.flag, c.value)
		if err == nil || !strings.Contains(errOut, c.want) {
			t.Errorf("serve %s %s: %v, stderr %q, want %q", c.flag, c.value, err, errOut, c.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("serve %s %s made the data dir (%v)", c.flag, c.value, err)
		}
	}
}

// pulse serve always serves the websocket API: --listen "" or off is
// refused naming the flag before the data dir is opened, where "" served on
// the default address behind a random token and off failed as an address
// with no port. The data dir lies under a regular file, so that nothing is
// served should the refusal be missing.
func TestServeRefusesListenOff(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"", "off"} {
		_, errOut, err := pulse(t, "", "serve", "--data", filepath.Join(file, "data"), "--listen", v, "--kafka-listen", "off")
		want := fmt.Sprintf("--listen %q: pulse serve always serves the websocket API", v)
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("serve --listen %q: %v, stderr %q, want %q", v, err, errOut, want)
		}
	}
}

// A --topic no topic can have is refused naming the flag before the data
// dir is opened, as :topic refuses it, instead of the UI opening on a
// partitions screen of that name. The data dir lies under a regular file,
// so that no UI opens should the refusal be missing.
func TestUIRefusesBadStartTopic(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := pulse(t, "", "--data", filepath.Join(file, "data"), "--topic", "../x", "--listen", "off", "--kafka-listen", "off")
	if want := `--topic "../x": invalid topic name: "../x" has character '/'`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("pulse --topic ../x: %v, stderr %q, want %q", err, errOut, want)
	}
}

// The data dir is --data, else $PULSE_DATA, else $XDG_DATA_HOME/pulse,
// else ~/.local/share/pulse, for every command that takes --data.
func TestDataDirFromEnvironment(t *testing.T) {
	tmp := t.TempDir()
	explicit, env, xdg, home := filepath.Join(tmp, "explicit"), filepath.Join(tmp, "env"), filepath.Join(tmp, "xdg"), filepath.Join(tmp, "home")
	for _, d := range []string{explicit, env, filepath.Join(xdg, "pulse"), filepath.Join(home, ".local", "share", "pulse")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args          []string
		pulseData, xd string
		want          string
	}{
		{[]string{"--data", explicit}, env, xdg, explicit},
		{nil, env, xdg, env},
		{nil, "", xdg, filepath.Join(xdg, "pulse")},
		{nil, "", "", filepath.Join(home, ".local", "share", "pulse")},
	} {
		cmd := exec.Command(pulseBinary(t), append([]string{"inspect"}, c.args...)...)
		cmd.Env = append(cmd.Environ(), "PULSE_DATA="+c.pulseData, "XDG_DATA_HOME="+c.xd, "HOME="+home)
		// Each is an empty directory, which inspect refuses naming it.
		out, _ := cmd.CombinedOutput()
		if want := "not a Pulse data directory: " + c.want + " is neither"; !strings.Contains(string(out), want) {
			t.Errorf("inspect %v with PULSE_DATA=%q XDG_DATA_HOME=%q: %q, want %q", c.args, c.pulseData, c.xd, out, want)
		}
	}
}

// Closing the terminal pulse serve runs in (SIGHUP) stops it as SIGTERM
// does: status 0, the engine closed (its snapshot written), instead of the
// process dying with the snapshot and hwm unwritten.
func TestServeStopsCleanlyOnSIGHUP(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	mustPulse(t, "a\nb\n", "produce", "hup", "--server", s.addr)
	if err := s.stop(t, syscall.SIGHUP); err != nil {
		t.Fatalf("pulse serve after SIGHUP: %v; stderr %s", err, s.stderr)
	}
	if _, err := os.Stat(filepath.Join(layout.PartitionDir(dir, "hup", 0), layout.SnapshotFile)); err != nil {
		t.Errorf("the engine was not closed: %v", err)
	}
}
