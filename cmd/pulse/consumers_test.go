package main

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pulse consumers list, describe and reset against a running pulse serve,
// with exact output.
func TestConsumersCommands(t *testing.T) {
	s, run := billingFixture(t)

	if got, want := run("consumers", "list"), "CONSUMER  TOPIC   PARTITIONS  LAG\nbilling   orders  1           1\n"; got != want {
		t.Errorf("consumers list:\n%s\nwant\n%s", got, want)
	}
	if got, want := run("consumers", "describe", "billing"), "TOPIC   PARTITION  CURSOR  LAG\norders  0          2       1\n"; got != want {
		t.Errorf("consumers describe:\n%s\nwant\n%s", got, want)
	}
	// A dry run changes nothing.
	if got, want := run("consumers", "reset", "billing", "--topic", "orders", "--to-earliest", "--dry-run"),
		"would move billing orders partition 0: 2 → 0\nwould move billing orders partition 1: no cursor → 0\n"; got != want {
		t.Errorf("reset --dry-run:\n%s", got)
	}
	if got := run("consumers", "describe", "billing"); !strings.Contains(got, "orders  0          2       1") {
		t.Errorf("a dry run moved the cursor:\n%s", got)
	}
	if got, want := run("consumers", "reset", "billing", "--topic", "orders", "--to-latest"),
		"moved billing orders partition 0: 2 → 3\nmoved billing orders partition 1: no cursor → 2\n"; got != want {
		t.Errorf("reset --to-latest:\n%s", got)
	}
	if got, want := run("consumers", "reset", "billing", "--topic", "orders", "--partition", "1", "--to-offset", "99"),
		"moved billing orders partition 1: 2 → 2\n"; got != want {
		t.Errorf("reset --to-offset past the end (clamped):\n%s", got)
	}
	if got, want := run("consumers", "reset", "billing", "--topic", "orders", "--partition", "0", "--to-time", "0"),
		"moved billing orders partition 0: 3 → 0\n"; got != want {
		t.Errorf("reset --to-time 0:\n%s", got)
	}
	// The tail resumes where the reset put the cursor.
	if got := run("tail", "orders", "-p", "0", "--consumer", "billing", "-c", "1", "-f", `%o %v\n`); got != "0 a\n" {
		t.Errorf("tail after the reset printed %q", got)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"consumers", "reset", "billing", "--topic", "orders"}, "at least one of the flags"},
		{[]string{"consumers", "reset", "billing", "--topic", "orders", "--to-earliest", "--to-latest"}, "were all set"},
		{[]string{"consumers", "reset", "billing", "--topic", "orders", "--to-offset", "-3"}, "want an offset ≥ 0"},
		{[]string{"consumers", "describe", "nobody"}, `consumer "nobody" has no cursor`},
	} {
		_, errOut, err := pulse(t, "", append(bad.args, "--server", s.addr)...)
		if err == nil || !strings.Contains(errOut, bad.want) {
			t.Errorf("pulse %v: %v, stderr %q, want %q", bad.args, err, errOut, bad.want)
		}
	}
	if _, errOut, err := pulse(t, "", "consumers", "lst"); err == nil || !strings.Contains(errOut, `did you mean "pulse consumers list"?`) {
		t.Errorf("pulse consumers lst: %v %q", err, errOut)
	}
}

// pulse consumers delete removes a consumer's cursors (on --topic, or
// everywhere) with exact output, --dry-run changes nothing, a second
// delete says there is nothing; a Kafka group with a live member shows it
// in describe and is refused, then deleted once the member left.
func TestConsumersDelete(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	kl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kafkaAddr := kl.Addr().String()
	kl.Close()
	s := startServe(t, dir, "--kafka-listen", kafkaAddr)
	srv := []string{"--server", s.addr}
	run := func(args ...string) string {
		t.Helper()
		return mustPulse(t, "", append(args, srv...)...)
	}
	run("topics", "create", "orders", "--partitions", "2")
	run("topics", "create", "users")
	mustPulse(t, "a\nb\nc\n", append([]string{"produce", "orders", "-p", "0"}, srv...)...)
	mustPulse(t, "d\n", append([]string{"produce", "users"}, srv...)...)
	run("consumers", "reset", "billing", "--topic", "orders", "--to-offset", "1")
	run("consumers", "reset", "billing", "--topic", "users", "--to-earliest")
	run("consumers", "reset", "audit", "--topic", "orders", "--partition", "0", "--to-latest")

	if got, want := run("consumers", "delete", "billing", "--dry-run"),
		"would delete billing cursor on orders partition 0: offset 1, lag 2\n"+
			"would delete billing cursor on orders partition 1: offset 0, lag 0\n"+
			"would delete billing cursor on users partition 0: offset 0, lag 1\n"; got != want {
		t.Errorf("delete --dry-run:\n%s\nwant\n%s", got, want)
	}
	if got, want := run("consumers", "delete", "billing", "--topic", "orders"),
		"deleted billing cursor on orders partition 0: offset 1, lag 2\n"+
			"deleted billing cursor on orders partition 1: offset 0, lag 0\n"; got != want {
		t.Errorf("delete --topic orders:\n%s\nwant\n%s", got, want)
	}
	if got, want := run("consumers", "list"), "CONSUMER  TOPIC   PARTITIONS  LAG\naudit     orders  1           0\nbilling   users   1           1\n"; got != want {
		t.Errorf("consumers list after the delete:\n%s\nwant\n%s", got, want)
	}
	if _, errOut, err := pulse(t, "", append([]string{"consumers", "delete", "billing", "--topic", "orders"}, srv...)...); err == nil || !strings.Contains(errOut, "consumer_not_found") {
		t.Errorf("second delete: %v %q", err, errOut)
	}

	// A Kafka group with a live member.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ClientID("cli-test"), kgo.ConsumerGroup("kgroup"),
		kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for n := 0; n < 3; n += cl.PollFetches(ctx).NumRecords() {
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	desc := run("consumers", "describe", "kgroup")
	if !strings.HasPrefix(desc, "TOPIC   PARTITION  CURSOR  LAG\norders  0          3       0\n") ||
		!strings.Contains(desc, "\n1 live member\nMEMBER") || !strings.Contains(desc, "  cli-test  ") {
		t.Errorf("describe of a live Kafka group:\n%s", desc)
	}
	if _, errOut, err := pulse(t, "", append([]string{"consumers", "delete", "kgroup"}, srv...)...); err == nil || !strings.Contains(errOut, "consumer_active") {
		t.Errorf("delete of a live Kafka group: %v %q", err, errOut)
	}
	cl.Close() // leaves the group
	if got, want := run("consumers", "delete", "kgroup"), "deleted kgroup cursor on orders partition 0: offset 3, lag 0\n"; !strings.HasPrefix(got, want) {
		t.Errorf("delete after the member left:\n%s\nwant\n%s", got, want)
	}
}

// tail -e with --consumer resumes from the consumer's cursors and exits
// once each partition is printed up to its end, also when the cursors are
// already there (nothing left to print).
func TestTailConsumerExitAtEnd(t *testing.T) {
	_, run := billingFixture(t)

	// p0 resumes at billing's cursor 2; p1 has no cursor: from the beginning.
	if got, want := run("tail", "orders", "-o", "beginning", "-e", "--consumer", "billing", "-f", `%p %o %v\n`), "0 2 c\n1 0 d\n1 1 e\n"; !sameLines(got, want) {
		t.Errorf("tail -e --consumer printed %q, want the lines of %q", got, want)
	}
	// Every cursor is at the end now: nothing to print, and the tail exits.
	for _, args := range [][]string{
		{"tail", "orders", "-o", "beginning", "-e", "--consumer", "billing"},
		{"tail", "orders", "-p", "0", "-o", "beginning", "-e", "--consumer", "billing"},
		{"tail", "orders", "-o", "-5", "-e", "--consumer", "billing"},
	} {
		if got := run(args...); got != "" {
			t.Errorf("%v with every cursor at the end printed %q", args, got)
		}
	}
}

// sameLines says whether a and b hold the same lines in any order (the
// partitions of a tail interleave).
func sameLines(a, b string) bool {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

// billingFixture serves a fresh data dir with topic orders: a, b, c on p0
// and d, e on p1, of which consumer billing has read a and b (a tail with
// --consumer). run runs a client command against it.
func billingFixture(t *testing.T) (*served, func(args ...string) string) {
	t.Helper()
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	srv := []string{"--server", s.addr}
	run := func(args ...string) string {
		t.Helper()
		return mustPulse(t, "", append(args, srv...)...)
	}
	run("topics", "create", "orders", "--partitions", "2")
	mustPulse(t, "a\nb\nc\n", append([]string{"produce", "orders", "-p", "0"}, srv...)...)
	mustPulse(t, "d\ne\n", append([]string{"produce", "orders", "-p", "1"}, srv...)...)
	run("tail", "orders", "-p", "0", "-o", "beginning", "-c", "2", "--consumer", "billing")
	return s, run
}

// A --partition below -1 is refused naming the flag (it read as every
// partition), and moves nothing.
func TestConsumersResetRefusesNegativePartition(t *testing.T) {
	s, run := billingFixture(t)
	_, errOut, err := pulse(t, "", "consumers", "reset", "billing", "--topic", "orders", "--to-earliest", "--partition", "-2", "--server", s.addr)
	if want := "--partition -2: want a partition (0 or more), or -1 for every partition"; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("reset --partition -2: %v, stderr %q, want %q", err, errOut, want)
	}
	if got, want := run("consumers", "describe", "billing"), "TOPIC   PARTITION  CURSOR  LAG\norders  0          2       1\n"; got != want {
		t.Errorf("after the refused reset:\n%s\nwant\n%s", got, want)
	}
}
