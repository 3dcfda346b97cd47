package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/wsapi"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest and the text input's cursor blink leave these behind
		// after a program quits; they are the UI libraries', not Pulse's.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("github.com/charmbracelet/bubbles/cursor.(*Model).BlinkCmd.func1"),
	)
}

// hangGuard bounds every blocking wait of a test so that a bug is a
// failure, not a stuck binary; nothing is expected to take a fraction of it.
const hangGuard = 60 * time.Second

// bootstrapEnv names an external broker the tests run against instead of
// an in-process kfake cluster (for example Pulse's own Kafka listener in a
// separate `pulse serve` process): PULSE_TEST_KAFKA=127.0.0.1:9092.
const bootstrapEnv = "PULSE_TEST_KAFKA"

// bootstrap returns the bootstrap address of the cluster under test: the
// one in PULSE_TEST_KAFKA, or a fresh three-broker kfake cluster.
func bootstrap(t testing.TB, opts ...kfake.Opt) string {
	t.Helper()
	if addr := os.Getenv(bootstrapEnv); addr != "" && len(opts) == 0 {
		return addr
	}
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3), kfake.DefaultNumPartitions(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// openSource opens a Source on addr, closed at cleanup.
func openSource(t testing.TB, addr string) *Source {
	t.Helper()
	s, err := Open(Config{Brokers: ParseBrokers(addr)})
	if err != nil {
		t.Fatalf("Open(%s): %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// serve runs a websocket server over b on 127.0.0.1:0 and returns its
// address and a stop function (also run at cleanup).
func serve(t testing.TB, b wsapi.Backend) (string, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := wsapi.New(b, wsapi.Options{AutoCreate: true})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; !errors.Is(err, wsapi.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	}
	t.Cleanup(stop)
	return l.Addr().String(), stop
}

func dialWS(t testing.TB, addr string) *wsclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	c, err := wsclient.Dial(ctx, addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// kclient is a plain franz-go client on addr (a Kafka client Pulse did not
// write), closed at cleanup.
func kclient(t testing.TB, addr string, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// createTopic creates topic with n partitions through kadm.
func createTopic(t testing.TB, adm *kadm.Client, topic string, n int) {
	t.Helper()
	resp, err := adm.CreateTopic(testCtx(t), int32(n), -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// consumeAll reads n records of topic with a kgo consumer from the start.
func consumeAll(t testing.TB, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, _ := kclient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s", len(out), n, topic)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// freeAddr returns a 127.0.0.1 address nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// uniq names a topic or group of a test: name itself on a fresh kfake
// cluster, name with a random suffix on an external one (PULSE_TEST_KAFKA)
// that earlier runs may have left topics on.
func uniq(t testing.TB, name string) string {
	if os.Getenv(bootstrapEnv) == "" {
		return name
	}
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%x", name, b)
}

// topicConfigs is the topic's configs as kadm's DescribeConfigs reads
// them: name to value, for the values the cluster reports.
func topicConfigs(t testing.TB, adm *kadm.Client, topic string) map[string]string {
	t.Helper()
	rc, err := adm.DescribeTopicConfigs(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rc.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, c := range r.Configs {
		if c.Value != nil {
			m[c.Key] = *c.Value
		}
	}
	return m
}

// timestampType is the topic's message.timestamp.type as kadm reads it.
func timestampType(t testing.TB, adm *kadm.Client, topic string) string {
	t.Helper()
	if v, ok := topicConfigs(t, adm, topic)["message.timestamp.type"]; ok {
		return v
	}
	return "CreateTime"
}

// clusterWS serves the websocket API on a cluster source of addr and
// returns a client connected to it.
func clusterWS(t testing.TB, addr string) *wsclient.Client {
	t.Helper()
	ws, _ := serve(t, openSource(t, addr))
	return dialWS(t, ws)
}
