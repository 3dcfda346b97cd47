package cluster

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// externalBrokerTests are the tests of this package that run against any
// Kafka broker named by PULSE_TEST_KAFKA (the others need kfake's options:
// SASL, TLS, an unreachable or silent broker).
var externalBrokerTests = []string{
	"TestWebsocketProduceReadByKafkaClient",
	"TestKafkaClientProduceReadOverWebsocket",
	"TestConsumerCursorSurvivesRestart",
	"TestAdminOverWebsocket",
	"TestBadInputRefusedBeforeTheCluster",
	"TestTombstoneRetentionIsDeleteRetentionMs",
	"TestDeleteConsumerOnCluster",
	"TestSubscribeFromTimestamp",
	"TestUIShowsClusterWatermarksAndLag",
	"TestMirrorInProcess",
	"TestMirrorFromServerInProcess",
	"TestMirrorEndsWhenClusterTopicDeleted",
	"TestMirrorEndsWhenClusterTopicRecreated",
	"TestMirrorFollowsLocalGrow",
	"TestAlterTopic",
	"TestAlterTopicGrowsSegmentSync",
	"TestAlterTopicOverWebsocket",
	"TestSubscriptionsFollowClusterGrow",
	"TestPartitionsChangedCDeleted",
	"TestDescribeAfterAChannelSeesTheGrow",
	"TestDescribeAfterAFirstChannelSeesTheGrow",
	"TestUIMergedTailAndEditOnCluster",
	"TestProduceAfterAlterKeepsEveryRecord",
	"TestUIEditKeepsTopicSelectedOnCluster",
}

// childTimeout bounds the second test process (a hang guard, not a timing
// assertion: the tests take seconds).
const childTimeout = 5 * time.Minute

// kafkaBanner is the part of `pulse serve`'s start line naming the Kafka
// listener's address.
var kafkaBanner = regexp.MustCompile(`Kafka on (127\.0\.0\.1:[0-9]+)`)

// TestAgainstPulseListener runs the cluster source's tests against Pulse's
// own Kafka listener: it builds the pulse binary, starts `pulse serve` on a
// fresh data dir in a separate process and re-runs this test binary with
// PULSE_TEST_KAFKA pointing at it. The child sees PULSE_TEST_KAFKA set and
// does not recurse.
func TestAgainstPulseListener(t *testing.T) {
	if os.Getenv(bootstrapEnv) != "" {
		t.Skip("already running against the external broker " + os.Getenv(bootstrapEnv))
	}
	if testing.Short() {
		t.Skip("builds the pulse binary and runs a second test process; not in -short")
	}
	bin := buildPulse(t)
	addr := startPulseServe(t, bin, t.TempDir())

	// The child's own -test.timeout ends it with every goroutine's stack
	// before this context would kill it silently.
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout+hangGuard)
	defer cancel()
	run := "^(" + strings.Join(externalBrokerTests, "|") + ")$"
	child := exec.CommandContext(ctx, os.Args[0], "-test.run", run, "-test.count=1", "-test.v", "-test.timeout="+childTimeout.String())
	child.Env = append(os.Environ(), bootstrapEnv+"="+addr)
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("the cluster tests against pulse serve's Kafka listener on %s failed: %v\n%s", addr, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "--- ") {
			t.Log(line)
		}
	}
	// Every selected test ran (none was skipped or renamed away).
	for _, name := range externalBrokerTests {
		if !bytes.Contains(out, []byte("--- PASS: "+name+" ")) {
			t.Errorf("%s did not pass against pulse serve:\n%s", name, out)
		}
	}
}

// buildPulse builds cmd/pulse into a temporary directory and returns the
// binary's path.
func buildPulse(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pulse")
	build := exec.Command("go", "build", "-o", bin, "github.com/pulselog/pulse/cmd/pulse")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/pulse: %v\n%s", err, out)
	}
	return bin
}

// startPulseServe runs `pulse serve` on dir with the websocket API and the
// Kafka listener on ephemeral loopback ports and returns the Kafka
// listener's address, read from its start line. The process is killed at
// cleanup.
func startPulseServe(t *testing.T, bin, dir string) string {
	t.Helper()
	return runPulseServe(t, bin, dir, "127.0.0.1:0").addr
}

// pulseServe is a running `pulse serve` process.
type pulseServe struct {
	addr   string // its Kafka listener
	cmd    *exec.Cmd
	exited chan struct{}
}

// kill ends the process with SIGKILL, as a crashed broker ends, and waits
// for it to be gone.
func (p *pulseServe) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// runPulseServe runs `pulse serve` on dir with its Kafka listener on
// kafkaAddr (127.0.0.1:0 for an ephemeral port) and returns once the
// listener's address is printed. The process is ended at cleanup.
func runPulseServe(t *testing.T, bin, dir, kafkaAddr string) *pulseServe {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", dir, "--listen", "127.0.0.1:0", "--kafka-listen", kafkaAddr)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting pulse serve: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	})

	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := kafkaBanner.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
		close(found)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	select {
	case a, ok := <-found:
		if ok {
			return &pulseServe{addr: a, cmd: cmd, exited: exited}
		}
		<-exited
		t.Fatalf("pulse serve exited without a Kafka listener: %v\n%s", cmd.ProcessState, stderr.String())
	case <-ctx.Done():
		t.Fatalf("pulse serve printed no Kafka address within %v\n%s", hangGuard, stderr.String())
	}
	panic("unreachable")
}
