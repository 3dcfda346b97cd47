package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// A mistyped subcommand fails with a suggestion, at every level.
func TestUnknownSubcommandsFail(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"topics", "lst"}, `unknown command "lst" for "pulse topics"; did you mean "pulse topics list"?`},
		{[]string{"meta", "chek"}, `did you mean "pulse meta check"?`},
		{[]string{"tial", "orders"}, `unknown command "tial" for "pulse"; did you mean "pulse tail"?`},
	} {
		out, errOut, err := pulse(t, "", c.args...)
		var ee *exec.ExitError
		if err == nil || !errorsAs(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("pulse %v: exit %v, want non-zero; stdout %q", c.args, err, out)
		}
		if !strings.Contains(errOut, c.want) {
			t.Errorf("pulse %v: stderr %q, want %q", c.args, errOut, c.want)
		}
	}
	// Without a subcommand a group prints its help and succeeds.
	if out := mustPulse(t, "", "topics"); !strings.Contains(out, "Available Commands") {
		t.Errorf("pulse topics printed %q", out)
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*ee = e
	}
	return ok
}

// produce counts in words a user reads ("1 record"), says nothing about
// records when no pulse runs, and the tail's --json is one line a record.
func TestProduceAndTailWording(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	_, errOut, err := pulse(t, "one\n", "produce", "words", "--server", s.addr)
	if err != nil || errOut != "pulse: produced 1 record to words\n" {
		t.Errorf("produce one line: %v, stderr %q", err, errOut)
	}
	_, errOut, _ = pulse(t, "a\nb\n", "produce", "words", "--server", s.addr)
	if errOut != "pulse: produced 2 records to words\n" {
		t.Errorf("produce two lines: stderr %q", errOut)
	}

	// A JSON value stored with its newlines still prints on one line.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := wsclient.Dial(ctx, s.addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := "pretty"
	if _, err := c.Produce(ctx, "words", 0, []wire.RecordIn{{Key: &k, Value: json.RawMessage("{\n  \"a\": 1,\n  \"b\": [\n 2\n ]\n}")}}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	out := mustPulse(t, "", "tail", "words", "--json", "--from", "earliest", "-c", "4", "--server", s.addr)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("tail --json printed %d lines for 4 records:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("line %d is not one JSON record: %v: %q", i, err, l)
		}
	}
	if !strings.Contains(lines[3], `"value":{"a":1,"b":[2]}`) {
		t.Errorf("the pretty value's line: %q", lines[3])
	}

	// With no pulse running there is one message, and it is about that.
	s.stop(t, syscall.SIGTERM)
	_, errOut, err = pulse(t, "x\n", "produce", "words", "--server", s.addr)
	if err == nil || strings.Contains(errOut, "produced") || !strings.Contains(errOut, "no pulse running at "+s.addr) {
		t.Errorf("produce with no pulse: %v, stderr %q", err, errOut)
	}
}

// When the server dies under a tail, the tail says so in words, not with
// the websocket close code.
func TestTailSaysWhenServerDies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	mustPulse(t, "first\n", "produce", "dying", "--server", s.addr)
	cmd := exec.Command(pulseBinary(t), "tail", "dying", "--from", "earliest", "--server", s.addr)
	var out, errb strings.Builder
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "first") {
		n, err := stdout.Read(buf)
		if err != nil {
			t.Fatalf("tail ended before its first record: %v, stderr %s", err, errb.String())
		}
		out.Write(buf[:n])
	}
	s.stop(t, syscall.SIGKILL)
	go func() {
		for {
			if _, err := stdout.Read(buf); err != nil {
				return
			}
		}
	}()
	err = cmd.Wait()
	msg := errb.String()
	if err == nil {
		t.Fatalf("tail exited 0 after the server died; stderr %q", msg)
	}
	if strings.Contains(msg, "1006") || strings.Contains(msg, "unexpected EOF") || !strings.Contains(msg, "pulse at "+s.addr+" went away") {
		t.Fatalf("tail's message when the server died: %q", msg)
	}
}

// Topic sizes and durations take human units, read by the UI's parser.
func TestTopicsCreateHumanUnits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	mustPulse(t, "", "topics", "create", "human", "--retention", "7d", "--retention-bytes", "1GiB", "--segment", "16MiB", "--server", s.addr)
	var ti wire.TopicInfo
	if err := json.Unmarshal([]byte(mustPulse(t, "", "topics", "describe", "human", "--json", "--server", s.addr)), &ti); err != nil {
		t.Fatal(err)
	}
	if c := ti.Config; c.RetentionMs != 7*24*3600*1000 || c.RetentionBytes != 1<<30 || c.SegmentBytes != 16<<20 {
		t.Fatalf("created with retention %d ms, %d bytes, segment %d", c.RetentionMs, c.RetentionBytes, c.SegmentBytes)
	}
	if out := mustPulse(t, "", "topics", "list", "--server", s.addr); !strings.Contains(out, "7d, 1.0 GiB") || !strings.Contains(out, "OFFSETS") {
		t.Errorf("topics list:\n%s", out)
	}
	// The older raw flags still work.
	mustPulse(t, "", "topics", "create", "raw", "--retention-ms", "3600000", "--segment-bytes", "1048576", "--server", s.addr)
	if out := mustPulse(t, "", "topics", "describe", "raw", "--server", s.addr); !strings.Contains(out, "retention   1h\n") {
		t.Errorf("describe raw:\n%s", out)
	}
	// A bad unit names the flag and creates nothing.
	_, errOut, err := pulse(t, "", "topics", "create", "bad", "--retention", "7x", "--server", s.addr)
	if err == nil || !strings.Contains(errOut, `invalid argument "7x" for "--retention" flag`) {
		t.Errorf("--retention 7x: %v, stderr %q", err, errOut)
	}
	if _, _, err := pulse(t, "", "topics", "describe", "bad", "--server", s.addr); err == nil {
		t.Error("topic bad exists after a refused create")
	}
}

// A topic's retention, cleanup, segment size, sync mode and partition
// count change after creation, durably; what is invalid is refused and
// changes nothing.
func TestTopicsAlter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	mustPulse(t, "", "topics", "create", "orders", "--partitions", "2", "--retention", "1h", "--server", s.addr)
	out := mustPulse(t, "", "topics", "alter", "orders", "--retention", "7d", "--retention-bytes", "1GiB", "--cleanup", "compact", "--server", s.addr)
	if out != "altered topic orders: 2 partitions, segment 64.0 MiB, sync every-write, cleanup compact, retention 7d, 1.0 GiB\n" {
		t.Errorf("alter printed %q", out)
	}
	out = mustPulse(t, "", "topics", "alter", "orders", "--partitions", "3", "--segment", "16MiB", "--server", s.addr)
	if out != "altered topic orders: 3 partitions, segment 16.0 MiB, sync every-write, cleanup compact, retention 7d, 1.0 GiB\n" {
		t.Errorf("alter printed %q", out)
	}
	mustPulse(t, "on p2\n", "produce", "orders", "--partition", "2", "--server", s.addr)
	if out := mustPulse(t, "", "tail", "orders", "-e", "-o", "beginning", "-f", "%p %o %s\n", "--server", s.addr); out != "2 0 on p2\n" {
		t.Errorf("tail after the grow printed %q", out)
	}
	out = mustPulse(t, "", "topics", "alter", "orders", "--sync", "interval", "--server", s.addr)
	if out != "altered topic orders: 3 partitions, segment 16.0 MiB, sync interval, cleanup compact, retention 7d, 1.0 GiB\n" {
		t.Errorf("alter printed %q", out)
	}
	for _, bad := range [][]string{
		{"--partitions", "2"},
		{"--segment", "16KiB"},
		{"--sync-mode", "sometimes"},
		{"--cleanup", "shred"},
		{"--retention", "7x"},
	} {
		_, errOut, err := pulse(t, "", append([]string{"topics", "alter", "orders", "--server", s.addr}, bad...)...)
		if err == nil || errOut == "" {
			t.Errorf("alter %v: %v, stderr %q; want a refusal", bad, err, errOut)
		}
	}
	if _, errOut, err := pulse(t, "", "topics", "alter", "orders", "--server", s.addr); err == nil || !strings.Contains(errOut, "nothing to change") {
		t.Errorf("alter without flags: %v %q", err, errOut)
	}
	// Removing a limit: --retention 0.
	mustPulse(t, "", "topics", "alter", "orders", "--retention", "0", "--server", s.addr)

	// Durable: a restarted server still has the change.
	s.stop(t, syscall.SIGTERM)
	s = startServe(t, dir)
	var ti wire.TopicInfo
	if err := json.Unmarshal([]byte(mustPulse(t, "", "topics", "describe", "orders", "--json", "--server", s.addr)), &ti); err != nil {
		t.Fatal(err)
	}
	if c := ti.Config; c.RetentionMs != 0 || c.RetentionBytes != 1<<30 || c.Cleanup != "compact" || c.Partitions != 3 || len(ti.Partitions) != 3 || c.SegmentBytes != 16<<20 || c.SyncMode != "interval" {
		t.Fatalf("after alter and restart: %+v", c)
	}
}

// inspect says when a running pulse holds the dir (its reports then show a
// crash at that instant), and dump refuses meta.db as not a segment.
func TestInspectAndDumpWording(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	mustPulse(t, "a\nb\n", "produce", "w", "--server", s.addr)
	if out := mustPulse(t, "", "inspect", dir); !strings.HasPrefix(out, "note: a running pulse holds this data dir") {
		t.Errorf("inspect next to a running pulse:\n%s", out)
	}
	s.stop(t, syscall.SIGTERM)
	if out := mustPulse(t, "", "inspect", dir); strings.Contains(out, "running pulse") || !strings.Contains(out, "[ok]") {
		t.Errorf("inspect of a stopped, clean dir:\n%s", out)
	}
	out, errOut, err := pulse(t, "", "dump", filepath.Join(dir, "meta.db"))
	if err == nil || strings.Contains(out, "DAMAGED") || !strings.Contains(errOut, "is not a Pulse segment") {
		t.Errorf("dump meta.db: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
}

// Growing a topic past pulse serve --max-partitions is refused with
// too_many_topics and changes nothing.
func TestTopicsAlterRespectsPartitionCap(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"), "--max-partitions", "4")
	mustPulse(t, "", "topics", "create", "orders", "--partitions", "3", "--server", s.addr)
	_, errOut, err := pulse(t, "", "topics", "alter", "orders", "--partitions", "5", "--server", s.addr)
	if err == nil || !strings.Contains(errOut, "too_many_topics") || !strings.Contains(errOut, "the cap is 4 partitions of all topics (--max-partitions)") {
		t.Fatalf("grow past the cap: %v, stderr %q", err, errOut)
	}
	if out := mustPulse(t, "", "topics", "alter", "orders", "--partitions", "4", "--server", s.addr); !strings.Contains(out, "4 partitions") {
		t.Fatalf("grow up to the cap printed %q", out)
	}
}

// pulse topics alter changes only the flags given, so its help shows no
// default for them (a default there reads as what alter would set).
func TestTopicsAlterHelpShowsNoDefaults(t *testing.T) {
	out := mustPulse(t, "", "topics", "alter", "--help")
	for _, name := range []string{"--cleanup", "--segment", "--sync-mode", "--retention", "--retention-bytes", "--partitions", "--tombstone-retention"} {
		i := strings.Index(out, "      "+name+" ")
		if i < 0 {
			t.Errorf("alter --help lacks %s:\n%s", name, out)
			continue
		}
		line, _, _ := strings.Cut(out[i:], "\n")
		if strings.Contains(line, "(default") {
			t.Errorf("alter --help shows a default: %q", line)
		}
	}
	// create still shows what it sets.
	if out := mustPulse(t, "", "topics", "create", "--help"); !strings.Contains(out, `(default "delete")`) {
		t.Errorf("create --help lost its defaults:\n%s", out)
	}
}

// pulse topics create --partitions 0 is refused (it used to create a topic
// of one partition, as if the flag were left out), and creates nothing.
func TestTopicsCreateZeroPartitions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	for _, n := range []string{"0", "-1"} {
		_, errOut, err := pulse(t, "", "topics", "create", "zero", "--partitions", n, "--server", s.addr)
		if err == nil || !strings.Contains(errOut, "partitions") {
			t.Errorf("create --partitions %s: %v, stderr %q; want an error naming partitions", n, err, errOut)
		}
	}
	if out := mustPulse(t, "", "topics", "list", "--server", s.addr); strings.Contains(out, "zero") {
		t.Errorf("a refused create made the topic:\n%s", out)
	}
}

// pulse tail -o -N prints the last N records of each partition; -0 is the
// last none (it used to read as offset 0 and print every record).
func TestTailLastN(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	mustPulse(t, "a\nb\nc\n", "produce", "words", "--server", s.addr)
	for _, c := range []struct{ from, want string }{
		{"-0", ""},
		{"-1", "2 c\n"},
		{"-2", "1 b\n2 c\n"},
		{"-9", "0 a\n1 b\n2 c\n"},
	} {
		if got := mustPulse(t, "", "tail", "words", "-o", c.from, "-e", "-f", `%o %v\n`, "--server", s.addr); got != c.want {
			t.Errorf("tail -o %s -e printed %q, want %q", c.from, got, c.want)
		}
	}
}

// TestProduceExitsOnceVisible: `pulse produce` to an interval-mode topic
// (acked once written, visible a few milliseconds later, once fsynced)
// exits only when its records are visible, so that a `pulse tail -e` or a
// describe run right after it sees them, as after an every-write produce.
func TestProduceExitsOnceVisible(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	mustPulse(t, "", "topics", "create", "lax", "--partitions", "2", "--sync-mode", "interval", "--server", s.addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := wsclient.Dial(ctx, s.addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var want int64
	for round := range 5 {
		lines := fmt.Sprintf("k%d:a\nk%d:b\nother:c\n", round, round+1)
		mustPulse(t, lines, "produce", "lax", "-K:", "--server", s.addr)
		want += 3
		info, err := c.Describe(ctx, "lax")
		if err != nil {
			t.Fatal(err)
		}
		var hwm int64
		for _, p := range info.Partitions {
			hwm += p.HWM
		}
		if hwm != want {
			t.Fatalf("round %d: right after pulse produce exited, %d records visible, want %d", round, hwm, want)
		}
	}
}
