// Package killtest is the harness of Pulse's crash tests: it runs a copy
// of the current test binary as a child process, kills it with SIGKILL after
// a delay, and hands back every line the child printed before it died.
package killtest

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cycles is def, or long when PULSE_LONG is set.
func Cycles(def, long int) int {
	if os.Getenv("PULSE_LONG") != "" {
		return long
	}
	return def
}

// Seed is PULSE_SEED when set (to replay a run), else the clock. It is
// logged so that a failure can be replayed.
func Seed(t testing.TB) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PULSE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PULSE_SEED %q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (PULSE_SEED replays)", seed)
	return seed
}

// child is a started copy of the test binary: its stdout, line by line,
// and what it wrote to stderr.
type child struct {
	cmd    *exec.Cmd
	out    *bufio.Scanner
	stderr *strings.Builder
}

// start starts this test binary with no test selected and env added to the
// environment (the child's TestMain recognises its variable and runs the
// workload).
func start(t testing.TB, env []string) child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return child{cmd, sc, stderr}
}

// Run starts the child (start), lets it run for d, kills it with SIGKILL
// and returns the lines it wrote to stdout. A child that exits by itself
// fails the test: it never reached the moment the test meant to crash it
// in.
func Run(t testing.TB, env []string, d time.Duration) []string {
	t.Helper()
	c := start(t, env)
	lines := make(chan []string)
	go func() {
		var ls []string
		for c.out.Scan() {
			ls = append(ls, c.out.Text())
		}
		lines <- ls
	}()
	time.Sleep(d)
	c.cmd.Process.Signal(syscall.SIGKILL)
	ls := <-lines
	err := c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child exited by itself (%v) instead of being killed: %s", err, c.stderr.String())
	}
	return ls
}

// RunUntil is Run, except that the child is killed with SIGKILL as soon as
// it prints a line starting with mark (the moment the test means to crash
// it in, whatever the machine's speed), and returns the lines up to that
// one. A child that exits before printing it fails the test.
func RunUntil(t testing.TB, env []string, mark string) []string {
	t.Helper()
	c := start(t, env)
	var ls []string
	found := false
	for !found && c.out.Scan() {
		ls = append(ls, c.out.Text())
		found = strings.HasPrefix(c.out.Text(), mark)
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()
	if !found {
		t.Fatalf("child ended without printing %q: %s", mark, c.stderr.String())
	}
	return ls
}
