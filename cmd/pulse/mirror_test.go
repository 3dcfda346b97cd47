package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/syncbuf"
	"github.com/pulselog/pulse/kafka/cluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// mirrorRecords is how many records TestMirrorSurvivesSIGKILL mirrors.
const mirrorRecords = 100_000

// TestMirrorSurvivesSIGKILL mirrors 100,000 records of a four-partition
// local topic to a kfake cluster with the real binary, SIGKILLs the mirror
// while it copies, restarts it, and checks with a franz-go consumer that
// every record arrived on its partition number, in order, byte for byte,
// none missing and none twice (docs/cluster.md: a restarted mirror resumes
// past the last record the cluster partition holds from it).
func TestMirrorSurvivesSIGKILL(t *testing.T) {
	bin := pulseBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	e := openWithTopic(t, data, "orders", 4)
	type pos struct {
		p   int
		off int64
	}
	want := map[pos]int{} // local position → record number
	for i := 0; i < mirrorRecords; i += 1000 {
		recs := make([]engine.Record, 1000)
		for j := range recs {
			n := i + j
			recs[j] = engine.Record{Key: []byte(fmt.Sprintf("k-%d", n%997)), Value: []byte(fmt.Sprintf("v-%d", n)),
				Headers: []engine.Header{{Key: "n", Value: []byte(strconv.Itoa(n))}}}
		}
		acks, err := e.Produce(context.Background(), "orders", -1, recs)
		if err != nil {
			t.Fatal(err)
		}
		for j, a := range acks {
			want[pos{a.Partition, a.Offset}] = i + j
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	addr, kc, adm := startKfake(t)
	total := func() int64 {
		kc.PurgeTopicsFromClient("orders-copy") // kgo caches "unknown topic" for a while
		ctx, cancel := context.WithTimeout(context.Background(), tmuxWait)
		defer cancel()
		ends, err := adm.ListEndOffsets(ctx, "orders-copy")
		if err != nil {
			return 0
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				n += o.Offset
			}
		})
		return n
	}
	start := func() (*exec.Cmd, *syncbuf.Buffer) {
		var out syncbuf.Buffer
		cmd := exec.Command(bin, "mirror", "orders", "--data", data, "--to", addr, "--to-topic", "orders-copy", "--batch", "100")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &out
	}

	// First run: killed as soon as the cluster holds some of the records.
	m1, out1 := start()
	deadline := time.Now().Add(tmuxWait)
	for total() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the mirror copied nothing; it says:\n%s", out1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := m1.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m1.Wait()
	atKill := total()
	if atKill >= mirrorRecords {
		t.Fatalf("the mirror had copied all %d records before the kill: the resume was not exercised", atKill)
	}
	t.Logf("SIGKILLed the mirror with %d of %d records on the cluster", atKill, mirrorRecords)

	// Second run: resumes and copies the rest.
	m2, out2 := start()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.ConsumeTopics("orders-copy"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*tmuxWait)
	defer cancel()
	seen := map[pos]bool{}
	last := map[int]int64{0: -1, 1: -1, 2: -1, 3: -1}
	for len(seen) < mirrorRecords {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%d of %d records on the cluster; the mirror says:\n%s", len(seen), mirrorRecords, out2)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			var hp, ho string
			for _, h := range r.Headers {
				switch h.Key {
				case cluster.HeaderMirrorPartition:
					hp = string(h.Value)
				case cluster.HeaderMirrorOffset:
					ho = string(h.Value)
				}
			}
			off, err := strconv.ParseInt(ho, 10, 64)
			if err != nil || hp != strconv.Itoa(int(r.Partition)) {
				t.Fatalf("record %d/%d: mirror headers partition %q offset %q", r.Partition, r.Offset, hp, ho)
			}
			p := int(r.Partition)
			switch {
			case off <= last[p]:
				t.Fatalf("partition %d: local offset %d copied twice (after %d)", p, off, last[p])
			case off != last[p]+1:
				t.Fatalf("partition %d: local offset %d follows %d: records missing or out of order", p, off, last[p])
			}
			last[p] = off
			n, ok := want[pos{p, off}]
			if !ok {
				t.Fatalf("partition %d offset %d: no such local record", p, off)
			}
			if string(r.Key) != fmt.Sprintf("k-%d", n%997) || string(r.Value) != fmt.Sprintf("v-%d", n) ||
				len(r.Headers) != 3 || r.Headers[0].Key != "n" || string(r.Headers[0].Value) != strconv.Itoa(n) {
				t.Fatalf("partition %d offset %d: key %q value %q headers %v, want record %d", p, off, r.Key, r.Value, r.Headers, n)
			}
			if engine.KeyPartition(r.Key, 4) != p {
				t.Fatalf("key %q on partition %d, murmur2 says %d", r.Key, p, engine.KeyPartition(r.Key, 4))
			}
			seen[pos{p, off}] = true
		})
	}
	t.Logf("all %d records mirrored once, in order per partition, after the SIGKILL", mirrorRecords)

	// The mirror reports lag 0 once caught up, and stops cleanly on SIGINT.
	deadline = time.Now().Add(tmuxWait)
	for !strings.Contains(out2.String(), "lag 0 |") {
		if time.Now().After(deadline) {
			t.Fatalf("the mirror never reported lag 0:\n%s", out2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m2.Process.Signal(syscall.SIGINT)
	if err := m2.Wait(); err != nil {
		t.Fatalf("mirror exit after SIGINT: %v\n%s", err, out2)
	}
	if n := total(); n != mirrorRecords {
		t.Fatalf("cluster holds %d records, want %d", n, mirrorRecords)
	}
}

// pulse mirror names its own flags in its errors: a bad --batch is refused
// before anything is opened, and an unreachable cluster is reported
// against --to, the flag that names it (not --kafka, which mirror does
// not have).
func TestMirrorFlagErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch", "0"}, "--batch 0: want 1 or more records"},
		{[]string{"--batch", "-3"}, "--batch -3: want 1 or more records"},
		{nil, "--to: kafka cluster unreachable: " + refused + ": "},
	} {
		args := append([]string{"mirror", "orders", "--data", data, "--to", refused}, tc.args...)
		_, _, err := runPulse(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pulse %s: %v, want an error containing %q", strings.Join(args, " "), err, tc.want)
		}
	}
}

// A mirror of a local topic that does not exist says so and nothing else:
// its "mirroring" line comes only once both topics are found.
func TestMirrorOfAMissingTopicPrintsNoStartLine(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	openWithTopic(t, data, "orders", 1).Close()
	addr, _, _ := startKfake(t)
	out, _, err := runPulse(t, "mirror", "nosuch", "--data", data, "--to", addr)
	if err == nil || !strings.Contains(err.Error(), `local topic "nosuch"`) {
		t.Fatalf("mirror of a missing topic: %v", err)
	}
	if strings.Contains(out, "mirroring") {
		t.Errorf("a mirror that never started printed %q", out)
	}
}
