package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/loopfs"
	"github.com/pulselog/pulse/kafka"
)

// bgMirror is a Mirror running in the background on a local engine: its
// last status, and its end.
type bgMirror struct {
	mu   sync.Mutex
	last MirrorStatus
	done chan error
}

func startMirror(t *testing.T, ctx context.Context, e *engine.Engine, dst *Source, o MirrorOptions) *bgMirror {
	t.Helper()
	m := &bgMirror{done: make(chan error, 1)}
	o.Progress = func(st MirrorStatus) {
		m.mu.Lock()
		m.last = st
		m.mu.Unlock()
	}
	go func() { m.done <- Mirror(ctx, e, dst, o) }()
	return m
}

// status is the mirror's last reported position.
func (m *bgMirror) status() MirrorStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MirrorStatus{Partitions: append([]MirrorPartition(nil), m.last.Partitions...), Waiting: m.last.Waiting}
}

// waitNext waits until every partition of want has been copied up to its
// offset (the mirror's Next), failing the test if the mirror ends first.
func (m *bgMirror) waitNext(t *testing.T, ctx context.Context, want []int64) {
	t.Helper()
	for {
		st := m.status()
		ok := len(st.Partitions) >= len(want)
		for p := range want {
			ok = ok && st.Partitions[p].Next == want[p]
		}
		if ok {
			return
		}
		select {
		case err := <-m.done:
			t.Fatalf("the mirror ended before copying up to %v: %v (at %+v)", want, err, st.Partitions)
		case <-ctx.Done():
			t.Fatalf("the mirror never copied up to %v: at %+v", want, st.Partitions)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func produceLocal(t *testing.T, e *engine.Engine, topic string, p, n int, tag string) {
	t.Helper()
	recs := make([]engine.Record, n)
	for i := range recs {
		recs[i] = engine.Record{Key: []byte(fmt.Sprint(tag, i)), Value: []byte(fmt.Sprintf("%s-%d-%d", tag, p, i))}
	}
	if _, err := e.Produce(context.Background(), topic, p, recs); err != nil {
		t.Fatal(err)
	}
}

func openLocal(t *testing.T, topic string, partitions int) *engine.Engine {
	t.Helper()
	e, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.CreateTopic(topic, engine.TopicConfig{Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	return e
}

// A cluster topic deleted while the mirror runs ends the mirror with
// ErrMirrorTopicGone naming it, on every broker: Pulse's own listener, which
// once re-created a deleted topic with one partition on the mirror's next
// produce (the mirror then wrote partition 0 into the new topic, or waited
// forever on partition 1), and kfake.
func TestMirrorEndsWhenClusterTopicDeleted(t *testing.T) {
	dst, dstTopic, ctx := mirrorUntilClusterTopicGone(t, "gone", false)
	// Nothing re-created the topic.
	if _, err := dst.topicState(ctx, dstTopic); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("cluster topic after the mirror ended: %v, want not found", err)
	}
}

// A cluster topic deleted and created again (empty) under the same name
// while the mirror runs ends the mirror with ErrMirrorTopicGone: its resume
// points and the cluster's offsets belong to the old topic.
func TestMirrorEndsWhenClusterTopicRecreated(t *testing.T) {
	mirrorUntilClusterTopicGone(t, "again", true)
}

// mirrorUntilClusterTopicGone mirrors a two-partition local topic to a
// cluster topic named after name, deletes that topic once the mirror has
// caught up (and creates it again, empty, when recreate), produces more
// locally and fails the test unless the mirror ends with
// ErrMirrorTopicGone. It returns the Source, the cluster topic and the
// test's context.
func mirrorUntilClusterTopicGone(t *testing.T, name string, recreate bool) (*Source, string, context.Context) {
	t.Helper()
	addr := bootstrap(t)
	dstTopic := uniq(t, name)
	e := openLocal(t, "local", 2)
	for p := range 2 {
		produceLocal(t, e, "local", p, 100, "a")
	}
	dst := openSource(t, addr)
	ctx := testCtx(t)
	m := startMirror(t, ctx, e, dst, MirrorOptions{Topic: "local", ToTopic: dstTopic})
	m.waitNext(t, ctx, []int64{100, 100})

	_, adm := kclient(t, addr)
	resp, err := adm.DeleteTopic(ctx, dstTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if recreate {
		createTopic(t, adm, dstTopic, 2)
	}
	for p := range 2 {
		produceLocal(t, e, "local", p, 10, "b")
	}
	select {
	case err := <-m.done:
		if !errors.Is(err, ErrMirrorTopicGone) {
			t.Fatalf("the mirror ended with %v, want ErrMirrorTopicGone", err)
		}
		t.Logf("the mirror ended: %v", err)
	case <-ctx.Done():
		t.Fatalf("the mirror went on after its cluster topic was deleted (re-created: %v): at %+v", recreate, m.status().Partitions)
	}
	return dst, dstTopic, ctx
}

// A local topic grown while the mirror runs is followed: the cluster topic
// grows to the same count and the new partition's records reach the
// cluster partition of the same number.
func TestMirrorFollowsLocalGrow(t *testing.T) {
	addr := bootstrap(t)
	dstTopic := uniq(t, "grown")
	e := openLocal(t, "local", 2)
	for p := range 2 {
		produceLocal(t, e, "local", p, 50, "a")
	}
	dst := openSource(t, addr)
	ctx := testCtx(t)
	m := startMirror(t, ctx, e, dst, MirrorOptions{Topic: "local", ToTopic: dstTopic, From: "latest"})
	m.waitNext(t, ctx, []int64{50, 50})

	cfg, err := e.Config("local")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Partitions = 3
	if err := e.AlterTopic("local", cfg); err != nil {
		t.Fatal(err)
	}
	for p := range 3 {
		produceLocal(t, e, "local", p, 20, "b")
	}
	m.waitNext(t, ctx, []int64{70, 70, 20})
	if n, err := dst.topicState(ctx, dstTopic); err != nil || n.partitions != 3 {
		t.Fatalf("cluster topic after the local grow: %+v, %v; want 3 partitions", n, err)
	}
	got := consumeAll(t, addr, dstTopic, 60) // from latest: only the records produced after the start
	var onP2 []string
	for _, r := range got {
		if r.Partition == 2 {
			onP2 = append(onP2, string(r.Value))
		}
	}
	if len(onP2) != 20 {
		t.Fatalf("cluster partition 2 holds %d records, want 20: %q", len(onP2), onP2)
	}
	for i, v := range onP2 {
		if want := fmt.Sprintf("b-2-%d", i); v != want {
			t.Fatalf("cluster partition 2 record %d is %q, want %q", i, v, want)
		}
	}
	if st := m.status(); st.Partitions[2].Resumed != 0 || st.Partitions[2].Copied != 20 {
		t.Fatalf("the grown partition: %+v", st.Partitions[2])
	}
	select {
	case err := <-m.done:
		t.Fatalf("the mirror ended: %v", err)
	default:
	}
}

// A cluster that goes away (its one broker SIGKILLed) does not end the
// mirror: the status says it is unreachable while the lag grows, and once
// the broker is back on the same address the mirror copies what was
// produced meanwhile, every record once.
func TestMirrorWaitsWhileClusterAway(t *testing.T) {
	bin, dir, broker := outageBroker(t)
	addr := broker.addr
	e := openLocal(t, "local", 2)
	for p := range 2 {
		produceLocal(t, e, "local", p, 30, "a")
	}
	dst := openSource(t, addr)
	ctx := testCtx(t)
	m := startMirror(t, ctx, e, dst, MirrorOptions{Topic: "local", ToTopic: "copy"})
	m.waitNext(t, ctx, []int64{30, 30})

	broker.kill()
	for p := range 2 {
		produceLocal(t, e, "local", p, 20, "b")
	}
	for {
		st := m.status()
		if st.Waiting != nil && errors.Is(st.Waiting, ErrUnreachable) && st.Lag() == 40 {
			t.Logf("while away: lag %d, %v", st.Lag(), st.Waiting)
			break
		}
		select {
		case err := <-m.done:
			t.Fatalf("the mirror ended while the cluster was away: %v", err)
		case <-ctx.Done():
			t.Fatalf("the mirror never said the cluster is away with lag 40: %+v", st)
		case <-time.After(50 * time.Millisecond):
		}
	}

	runPulseServe(t, bin, dir, addr)
	m.waitNext(t, ctx, []int64{50, 50})
	got := consumeAll(t, addr, "copy", 100)
	seen := map[string]bool{}
	for _, r := range got {
		if seen[string(r.Value)] {
			t.Fatalf("%q copied twice", r.Value)
		}
		seen[string(r.Value)] = true
	}
	if len(seen) != 100 {
		t.Fatalf("the cluster holds %d distinct records, want 100", len(seen))
	}
	for m.status().Waiting != nil {
		select {
		case <-ctx.Done():
			t.Fatalf("after the broker came back the status still says %v", m.status().Waiting)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A mirror stopped (its context ended: SIGINT or SIGTERM for pulse mirror)
// while the cluster is away and a batch waits for its acks returns,
// instead of waiting for the cluster.
func TestMirrorStopsWhileClusterAway(t *testing.T) {
	_, _, broker := outageBroker(t)
	e := openLocal(t, "local", 1)
	produceLocal(t, e, "local", 0, 10, "a")
	dst := openSource(t, broker.addr)
	guard := testCtx(t)
	ctx, cancel := context.WithCancel(guard)
	defer cancel()
	m := startMirror(t, ctx, e, dst, MirrorOptions{Topic: "local", ToTopic: "copy"})
	m.waitNext(t, guard, []int64{10})

	broker.kill()
	produceLocal(t, e, "local", 0, 10, "b")
	for m.status().Waiting == nil {
		select {
		case err := <-m.done:
			t.Fatalf("the mirror ended while the cluster was away: %v", err)
		case <-guard.Done():
			t.Fatal("the mirror never said the cluster is away")
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-m.done:
		if err != nil {
			t.Fatalf("the mirror stopped with %v, want nil", err)
		}
	case <-guard.Done():
		t.Fatal("the mirror did not stop while the cluster was away")
	}
	if off, ok, err := e.Cursor("mirror.copy", "local", 0); err != nil || !ok || off != 10 {
		t.Fatalf("cursor after the stop: %d %v %v, want 10 (nothing acked past it)", off, ok, err)
	}
}

// A mirror whose cluster broker's disk fills up waits, its lag growing (the
// broker answers KAFKA_STORAGE_ERROR, which the Kafka client retries), and
// once space is freed on the broker it copies the rest, every record once,
// in order. The broker is Pulse's own listener on a small real filesystem.
func TestMirrorWaitsWhileClusterDiskFull(t *testing.T) {
	if os.Getenv(bootstrapEnv) != "" {
		t.Skip("fills the disk of a broker of its own")
	}
	if testing.Short() {
		t.Skip("builds the pulse binary and runs it as the broker; not in -short")
	}
	mnt := loopfs.Mount(t, 32)
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 22<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	broker := runPulseServe(t, buildPulse(t), filepath.Join(mnt, "data"), "127.0.0.1:0")
	e := openLocal(t, "local", 1)
	const n, size = 1500, 8 << 10 // 12 MB of values no codec shrinks
	recs := make([]engine.Record, n)
	for i := range recs {
		v := make([]byte, size)
		rand.Read(v)
		recs[i] = engine.Record{Key: []byte(fmt.Sprint(i)), Value: v}
	}
	if _, err := e.Produce(context.Background(), "local", 0, recs); err != nil {
		t.Fatal(err)
	}
	dst := openSource(t, broker.addr)
	ctx := testCtx(t)
	m := startMirror(t, ctx, e, dst, MirrorOptions{Topic: "local", ToTopic: "copy", BatchRecords: 50})
	// Stuck: the same position for three seconds, short of the end.
	var at int64 = -1
	still := 0
	for still < 3 {
		select {
		case err := <-m.done:
			t.Fatalf("the mirror ended on a full broker disk: %v", err)
		case <-ctx.Done():
			t.Fatalf("the mirror never stopped on the full broker disk: %+v", m.status())
		case <-time.After(time.Second):
		}
		st := m.status()
		if next := st.Partitions[0].Next; next == at && next < n {
			still++
		} else {
			at, still = next, 0
		}
	}
	t.Logf("the broker's disk is full at local offset %d of %d", at, n)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	m.waitNext(t, ctx, []int64{n})
	got := consumeAll(t, broker.addr, "copy", n)
	if len(got) != n {
		t.Fatalf("the cluster holds %d records, want %d", len(got), n)
	}
	for i, r := range got {
		if string(r.Key) != fmt.Sprint(i) || !bytes.Equal(r.Value, recs[i].Value) {
			t.Fatalf("cluster record %d has key %q: records lost, reordered or copied twice", i, r.Key)
		}
	}
}

// pulse mirror --server to the Kafka listener of that same Pulse, with no
// --to-topic, would copy the topic into itself for good: it is refused
// before anything is copied, and the probe it takes to tell leaves no
// cursor behind. To another topic of the same Pulse it copies as usual.
func TestMirrorIntoItselfRefused(t *testing.T) {
	e := openLocal(t, "orders", 2)
	for p := range 2 {
		produceLocal(t, e, "orders", p, 10, "a")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ks := kafka.New(e, kafka.DefaultOptions())
	go ks.Serve(l)
	t.Cleanup(func() { ks.Close() })
	ws, _ := serve(t, e)
	c, stream := dialWS(t, ws), dialWS(t, ws)
	dst := openSource(t, l.Addr().String())
	ctx := testCtx(t)
	err = MirrorFromServer(ctx, c, stream, dst, MirrorOptions{Topic: "orders"})
	if !errors.Is(err, ErrMirrorSelf) {
		t.Fatalf("mirroring orders into itself: %v, want ErrMirrorSelf", err)
	}
	t.Logf("refused: %v", err)
	info, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, pi := range info.Partitions {
		if pi.HWM != 10 {
			t.Fatalf("orders/%d HWM %d after the refusal, want 10", pi.Partition, pi.HWM)
		}
	}
	cs, err := e.Consumers("orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 0 {
		t.Fatalf("cursors left on orders: %+v", cs)
	}

	run, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var once sync.Once
	caught := make(chan struct{})
	go func() {
		done <- MirrorFromServer(run, c, stream, dst, MirrorOptions{Topic: "orders", ToTopic: "orders-copy", Progress: func(st MirrorStatus) {
			if st.Lag() == 0 && st.Partitions[0].Next == 10 && st.Partitions[1].Next == 10 {
				once.Do(func() { close(caught) })
			}
		}})
	}()
	select {
	case <-caught:
	case err := <-done:
		t.Fatalf("mirroring orders to orders-copy of the same pulse: %v", err)
	case <-ctx.Done():
		t.Fatal("mirroring orders to orders-copy never caught up")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
