package cluster

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/pulselog/pulse/tui"
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
