package cluster

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/tui"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/twmb/franz-go/pkg/kgo"
)

// outageBroker is a broker that a test can SIGKILL and start again on the
// same address with the same data: Pulse's own Kafka listener in a
// separate `pulse serve` process (a kfake cluster keeps nothing over a
// restart).
func outageBroker(t *testing.T) (bin, dir string, p *pulseServe) {
	t.Helper()
	if os.Getenv(bootstrapEnv) != "" {
		t.Skip("kills and restarts a broker of its own")
	}
	if testing.Short() {
		t.Skip("builds the pulse binary and runs it as the broker; not in -short")
	}
	bin, dir = buildPulse(t), t.TempDir()
	return bin, dir, runPulseServe(t, bin, dir, "127.0.0.1:0")
}

// unreachableRe matches what Pulse says of the cluster at addr while
// nothing listens there: what the Kafka client says of its dial.
func unreachableRe(addr string) string {
	a := regexp.QuoteMeta(addr)
	return `kafka cluster unreachable: ` + a + `: unable to dial: dial tcp ` + a + `: connect: connection refused`
}

// A live tail while its broker is SIGKILLed and started again: the tail,
// and the header, say the cluster cannot be reached, with the broker's
// address and the Kafka client's error, while it cannot; once it is back
// the tail is LIVE again and shows what was produced meanwhile, every
// record once.
func TestUITailWhileClusterAway(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	bin, dir, broker := outageBroker(t)
	addr := broker.addr
	kc, adm := kclient(t, addr)
	createTopic(t, adm, "orders", 1)
	produce := func(tag string, n int) {
		t.Helper()
		var rs []*kgo.Record
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(fmt.Sprintf("%s-%d", tag, i))})
		}
		if err := kc.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce("before", 5)

	src := openSource(t, addr)
	m, err := tui.New(tui.Options{Source: src, StartTopic: "orders", Refresh: 100 * time.Millisecond, Clipboard: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(130, 34))
	waitScreen(t, tm, regexp.MustCompile(`p0\s+0\s+5\s+5`))
	typeKeys(tm, "t")
	waitScreen(t, tm, regexp.MustCompile(`● LIVE`), regexp.MustCompile(`before-4`))

	broker.kill()
	waitScreen(t, tm,
		regexp.MustCompile(`✗ UNREACHABLE · orders p0`),
		regexp.MustCompile(unreachableRe(addr)),
		regexp.MustCompile(`data kafka `+regexp.QuoteMeta(addr)+`\s+✗ kafka cluster unreachable`))

	runPulseServe(t, bin, dir, addr)
	produce("after", 5)
	// (waitScreen reads the output on from where the last one matched.)
	waitScreen(t, tm, regexp.MustCompile(`● LIVE`), regexp.MustCompile(`after-4`))

	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := ansi.ReplaceAllString(tm.FinalModel(t, teatest.WithFinalTimeout(hangGuard)).View(), "")
	for _, tag := range []string{"before", "after"} {
		for i := range 5 {
			if n := strings.Count(final, fmt.Sprintf("%s-%d ", tag, i)); n != 1 {
				t.Errorf("%s-%d shown %d times, want once:\n%s", tag, i, n, final)
			}
		}
	}
	if strings.Contains(final, "UNREACHABLE") || strings.Contains(final, "unreachable") {
		t.Errorf("the cluster is back and the screen still says it is unreachable:\n%s", final)
	}
}

// A produce while the cluster is away fails at once, naming the broker
// and the Kafka client's error, through the websocket API and the UI's
// produce form alike; the form's status line names the topic once. Once
// the cluster is back a produce without a partition uses the partitioner:
// keyless records round-robin, keyed ones go to murmur2 of the key.
func TestProduceWhileClusterAway(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	bin, dir, broker := outageBroker(t)
	addr := broker.addr
	_, adm := kclient(t, addr)
	createTopic(t, adm, "orders", 3)
	src := openSource(t, addr)
	ws, _ := serve(t, src)
	c := dialWS(t, ws)
	if _, err := c.Produce(testCtx(t), "orders", -1, []wire.RecordIn{{Value: []byte(`"up"`)}}); err != nil {
		t.Fatal(err)
	}

	m, err := tui.New(tui.Options{Source: src, StartTopic: "orders", Refresh: 100 * time.Millisecond, Clipboard: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(130, 34))
	waitScreen(t, tm, regexp.MustCompile(`p2\s+0\s+`))

	broker.kill()
	_, err = c.Produce(testCtx(t), "orders", -1, []wire.RecordIn{{Value: []byte(`"down"`)}})
	var pe *wire.Error
	if !errors.As(err, &pe) || pe.Code != wire.CodeInternal || !regexp.MustCompile(unreachableRe(addr)).MatchString(err.Error()) {
		t.Errorf("websocket produce while the cluster is away: %v, want %s saying %s", err, wire.CodeInternal, unreachableRe(addr))
	}

	typeKeys(tm, "p")
	waitScreen(t, tm, regexp.MustCompile(`Produce to orders`))
	tm.Send(tea.KeyMsg{Type: tea.KeyTab}) // value
	typeKeys(tm, "down")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlG})
	waitScreen(t, tm,
		regexp.MustCompile(`✗ `+unreachableRe(addr)),
		// The status line, wrapped at the edge: the topic once.
		regexp.MustCompile(`produce to orders: kafka cluster unreachable: `+regexp.QuoteMeta(addr)+`: unable to dial`))

	runPulseServe(t, bin, dir, addr)
	// Keyless: one record on each partition in turn; keyed: murmur2.
	recs := []wire.RecordIn{{Value: []byte(`1`)}, {Value: []byte(`2`)}, {Value: []byte(`3`)}}
	var keyed []wire.RecordIn
	for i := range 6 {
		k := fmt.Sprint("user-", i)
		keyed = append(keyed, wire.RecordIn{Key: &k, Value: []byte(`0`)})
	}
	acks, err := c.Produce(testCtx(t), "orders", -1, append(recs, keyed...))
	if err != nil {
		t.Fatalf("produce once the cluster is back: %v", err)
	}
	seen := map[int]bool{}
	for _, a := range acks[:3] {
		seen[a.Partition] = true
	}
	if len(seen) != 3 {
		t.Errorf("three keyless records went to partitions %v, want one each on 0, 1 and 2", acks[:3])
	}
	for i, a := range acks[3:] {
		if want := engine.KeyPartition([]byte(*keyed[i].Key), 3); a.Partition != want {
			t.Errorf("key %s on partition %d, murmur2 says %d", *keyed[i].Key, a.Partition, want)
		}
	}

	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangGuard))
}
