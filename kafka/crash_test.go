package kafka

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var kafkaBannerRE = regexp.MustCompile(`^pulse: serving .* on ws://\S+/v1/ws, Kafka on (\S+)\n$`)

// serveProcess runs `pulse serve` (built from ../cmd/pulse) on dir with the
// Kafka listener on an ephemeral port and returns the process and its Kafka
// address.
func serveProcess(t *testing.T, bin, dir string) (*exec.Cmd, string) {
	t.Helper()
	return serveProcessOn(t, bin, dir, "127.0.0.1:0")
}

// serveProcessOn is serveProcess with the Kafka listener on kafkaAddr.
func serveProcessOn(t *testing.T, bin, dir, kafkaAddr string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", dir, "--listen", "127.0.0.1:0", "--kafka-listen", kafkaAddr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	banner, err := bufio.NewReader(out).ReadString('\n')
	m := kafkaBannerRE.FindStringSubmatch(banner)
	if err != nil || m == nil {
		t.Fatalf("pulse serve banner %q: %v", banner, err)
	}
	go io.Copy(io.Discard, out)
	return cmd, m[1]
}

func buildPulse(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pulse")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/pulse").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSIGKILLDuringProduce: `pulse serve` is killed with SIGKILL while
// idempotent franz-go producers write with acks=-1; after a restart every
// acknowledged record is there, at the offset it was acknowledged with.
func TestSIGKILLDuringProduce(t *testing.T) {
	bin := buildPulse(t)
	dir := t.TempDir()
	cmd, addr := serveProcess(t, bin, dir)

	var mu sync.Mutex
	acked := map[string]string{} // "partition/offset" -> value
	ackedN := 0
	enough := make(chan struct{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("crash"),
		kgo.AllowAutoTopicCreation(), kgo.RecordRetries(3), kgo.RequestRetries(1), kgo.ProduceRequestTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				v := fmt.Sprintf("w%d-%d", w, i)
				cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
					if err != nil {
						return
					}
					mu.Lock()
					acked[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = string(r.Value)
					ackedN++
					if ackedN == 3000 {
						close(enough)
					}
					mu.Unlock()
				})
				if i%50 == 49 {
					time.Sleep(time.Millisecond) // let acks through
				}
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
		t.Fatal("3000 records were never acknowledged")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	cancel()
	wg.Wait()
	cl.Close()
	mu.Lock()
	defer mu.Unlock()

	_, addr2 := serveProcess(t, bin, dir)
	rd := kgoClient(t, addr2, kgo.ConsumeTopics("crash"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	stored := map[string]string{}
	want := ackedN
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	defer rcancel()
	for {
		missing := 0
		for pos := range acked {
			if _, ok := stored[pos]; !ok {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		fs := rd.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("%d of %d acknowledged records missing after SIGKILL and restart", missing, want)
		}
		fs.EachRecord(func(r *kgo.Record) { stored[fmt.Sprintf("%d/%d", r.Partition, r.Offset)] = string(r.Value) })
	}
	for pos, val := range acked {
		if stored[pos] != val {
			t.Fatalf("offset %s: acknowledged %q, stored %q", pos, val, stored[pos])
		}
	}
	t.Logf("%d acknowledged records before SIGKILL, %d records stored after restart", want, len(stored))
}
