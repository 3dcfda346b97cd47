package kafka

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/meta"
)

// gapClient is a consumer of hurt/0 for TestClientsPassACorruptRangeAtTheEnd:
// start starts it against addr; it sends each record it hands to the
// application on lines ("OFFSET VALUE") until it has handed on c5, then
// closes lines, and wait returns how it ended.
type gapClient struct {
	name      string
	fromStart bool // it reads from the beginning, else from offset 3
	start     func(ctx context.Context, t *testing.T, addr string) (lines <-chan string, wait func() error)
}

// TestClientsPassACorruptRangeAtTheEnd: five clients nobody here wrote
// read a partition holding a0..a2 and then a range reaching the HWM (the
// corrupt range 3..4 of startWithCorruptTail, HWM 5, or a lost range 3..9,
// HWM 10), from the beginning or from the range's first offset: each one
// moves past the range to the HWM (Pulse sees its fetch there) before
// anything more is produced, and then hands on the record produced, c5,
// having handed on every record before the range once and nothing else
// (not the record the answer at the range leads with).
func TestClientsPassACorruptRangeAtTheEnd(t *testing.T) {
	py := func(lib string) func(ctx context.Context, t *testing.T, addr string) (<-chan string, func() error) {
		return func(ctx context.Context, t *testing.T, addr string) (<-chan string, func() error) {
			py := need(t, "/usr/bin/python3", "-I", "-c", "import confluent_kafka, kafka")
			return startLines(ctx, t, exec.CommandContext(ctx, py, "testdata/gapclients.py", lib, addr, "hurt", "3", "c5"))
		}
	}
	clients := []gapClient{
		{"kcat", false, func(ctx context.Context, t *testing.T, addr string) (<-chan string, func() error) {
			kcat := need(t, "kcat", "-V")
			return startLines(ctx, t, exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "hurt", "-p", "0", "-o", "3", "-c", "1",
				"-q", "-X", "fetch.wait.max.ms=100", "-f", "%o %s\n"))
		}},
		{"confluent-kafka", false, py("confluent")},
		{"kafka-python", false, py("kafkapython")},
		{"kafkajs", true, func(ctx context.Context, t *testing.T, addr string) (<-chan string, func() error) {
			node, dir := nodeWithKafkajs(t)
			cmd := exec.CommandContext(ctx, node, "gap.js", addr, "hurt", "gap-kafkajs", "c5")
			cmd.Dir = dir
			return startLines(ctx, t, cmd)
		}},
		{"franz-go", false, func(ctx context.Context, t *testing.T, addr string) (<-chan string, func() error) {
			cl := kgoClient(t, addr, kgo.FetchMaxWait(100*time.Millisecond),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"hurt": {0: kgo.NewOffset().At(3)}}))
			lines, done := make(chan string), make(chan error, 1)
			go func() {
				defer close(lines)
				for {
					fs := cl.PollFetches(ctx)
					if err := fs.Err(); err != nil {
						done <- err
						return
					}
					last := false
					fs.EachRecord(func(r *kgo.Record) {
						lines <- fmt.Sprintf("%d %s", r.Offset, r.Value)
						last = last || string(r.Value) == "c5"
					})
					if last {
						done <- nil
						return
					}
				}
			}()
			return lines, func() error { return <-done }
		}},
	}
	fixtures := []struct {
		name string
		dir  func(t *testing.T) string
		hwm  int64
	}{
		{"corrupt", corruptTailDir, 5},
		{"lost", lostTailDir, 10},
	}
	for _, f := range fixtures {
		for _, c := range clients {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				eng, err := engine.Open(engine.DefaultOptions(f.dir(t)))
				if err != nil {
					t.Fatal(err)
				}
				past := make(chan struct{})
				var once sync.Once
				opts := DefaultOptions()
				opts.Records = &readSignal{Engine: eng, onRead: func(from int64) {
					if from == f.hwm {
						once.Do(func() { close(past) })
					}
				}}
				p := startPulseOnEngine(t, eng, opts)
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				lines, wait := c.start(ctx, t, p.addr)
				var got []string
				for waiting := true; waiting; {
					select {
					case <-past:
						waiting = false
					case l, ok := <-lines:
						if !ok {
							t.Fatalf("%s ended before it asked past the range (%v), having handed on %q", c.name, wait(), got)
						}
						got = append(got, l)
					case <-ctx.Done():
						t.Fatalf("%s never asked past the range, at %d, having handed on %q", c.name, f.hwm, got)
					}
				}
				if _, err := p.eng.Produce(ctx, "hurt", 0, []engine.Record{{Value: []byte("c5")}}); err != nil {
					t.Fatal(err)
				}
				for l := range lines {
					got = append(got, l)
				}
				if err := wait(); err != nil {
					t.Fatalf("%s: %v, having handed on %q", c.name, err, got)
				}
				want := fmt.Sprintf("%d c5", f.hwm)
				if c.fromStart {
					want = "0 a0\n1 a1\n2 a2\n" + want
				}
				if g := strings.Join(got, "\n"); g != want {
					t.Fatalf("%s handed on %q, want %q", c.name, g, want)
				}
			})
		}
	}
}

// lostTailDir returns a data dir holding a partition hurt/0 of a0..a2
// (offsets 0..2) whose HWM meta.db recorded as 10: recovery finds offsets
// 3..9 lost, a range reaching the HWM. Pulse is stopped.
func lostTailDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := startPulse(t, dir, DefaultOptions())
	if err := p.eng.CreateTopic("hurt", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.eng.Produce(ctx, "hurt", 0, []engine.Record{{Value: []byte("a0")}, {Value: []byte("a1")}, {Value: []byte("a2")}}); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	s, err := meta.Open(dir, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetHWM("hurt", 0, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startLines starts cmd and sends each line it prints on the channel it
// returns, closed when cmd's output ends; wait waits for cmd to end and
// returns its error with what it wrote to stderr.
func startLines(ctx context.Context, t *testing.T, cmd *exec.Cmd) (<-chan string, func() error) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return lines, func() error {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("%s: %w\n%s", cmd.Args[0], err, stderr.String())
		}
		return nil
	}
}
