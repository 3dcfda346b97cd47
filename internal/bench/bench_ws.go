package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// Sizes of the websocket benchmark runs.
const (
	wsBenchConns        = 4    // producing connections of the batched runs, as the engine's own append run
	wsBenchWindow       = 16   // requests in flight per connection (batches)
	wsBenchSingleWindow = 256  // requests in flight of the single-record producer
	wsBenchE2ERate      = 2000 // records/s of the end-to-end latency runs
	wsBenchTopics       = 100  // topics of the many-topics produce run
	wsBenchRTTs         = 1000 // round trips of ws_rtt_*, at wsBenchE2ERate
)

// wsBenchFanouts are the subscriber counts of the fan-out runs.
var wsBenchFanouts = []int{1, 8, 64}

// wsBencher holds what the steps of one websocket benchmark share.
type wsBencher struct {
	ctx    context.Context
	dial   dialer
	admin  *wsclient.Client
	suffix string
	topics []string
	res    benchResult
	notes  benchNotes
	pid    int   // the server's pid
	pidErr error // why pid is unknown
	out    io.Writer
}

func (b *wsBencher) progress() io.Writer { return b.out }

// runWSBench measures the websocket API of the Pulse running at o.addr over
// loopback, with the records of the engine's append runs: batched produce
// throughput (JSON and binary), consume from earliest, single-record
// produce from one producer, produce over 1 vs 100 topics, fan-out to
// 1/8/64 subscribers, and produce-to-delivery latency at 2,000 records/s in
// both sync modes. CPU per record comes from /proc/PID/stat of the server
// and getrusage of this process, device writes from /proc/PID/io. It
// creates its own topics (named ws-bench-*) and deletes them afterwards.
func runWSBench(ctx context.Context, o wsBenchOptions, progress io.Writer) (benchResult, benchNotes, error) {
	admin, err := o.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer admin.Close()
	b := &wsBencher{ctx: ctx, dial: o.dial, admin: admin, suffix: strconv.FormatInt(time.Now().UnixNano(), 36),
		res: benchResult{}, notes: benchNotes{}, pid: o.serverPID}
	if b.pid == 0 {
		b.pid, b.pidErr = listenerPID(o.addr)
	}
	defer b.deleteTopics(context.Background())
	b.out = progress
	err = b.run(o)
	return b.res, b.notes, err
}

// deleteTopics deletes the topics the benchmark created so far.
func (b *wsBencher) deleteTopics(ctx context.Context) {
	for _, t := range b.topics {
		b.admin.DeleteTopic(ctx, t)
	}
	b.topics = nil
}

// newTopics creates n topics for the next run. Each run starts on a
// settled disk, as the engine's own steps do: the previous run's topics
// deleted, dirty pages written back, so that no run's fsyncs queue behind
// the last one's writeback.
func (b *wsBencher) newTopics(name string, n int, syncMode string) ([]string, error) {
	b.deleteTopics(b.ctx)
	writebackAll()
	var names []string
	for i := range n {
		t := "ws-bench-" + name + "-" + b.suffix
		if n > 1 {
			t += "-" + strconv.Itoa(i)
		}
		b.topics = append(b.topics, t)
		if _, err := b.admin.CreateTopic(b.ctx, t, wire.TopicConfig{Codec: "none", SyncMode: syncMode}); err != nil {
			return nil, err
		}
		names = append(names, t)
	}
	return names, nil
}

func (b *wsBencher) newTopic(name, syncMode string) (string, error) {
	ts, err := b.newTopics(name, 1, syncMode)
	if err != nil {
		return "", err
	}
	return ts[0], nil
}

// cpuMark is the CPU time used so far by the server and by this process.
type cpuMark struct {
	server, client       time.Duration
	serverErr, clientErr error
}

func (b *wsBencher) cpu() cpuMark {
	var m cpuMark
	if m.serverErr = b.pidErr; m.serverErr == nil {
		m.server, m.serverErr = processCPU(b.pid)
	}
	m.client, m.clientErr = processCPU(0)
	return m
}

// perRecord records the CPU microseconds per record since start of the
// server (name_server_cpu_us_per_rec), of this process
// (name_client_cpu_us_per_rec) and of both, over n records.
func (b *wsBencher) perRecord(name string, start cpuMark, n int) {
	end := b.cpu()
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n) }
	server, client := name+"_server_cpu_us_per_rec", name+"_client_cpu_us_per_rec"
	if err := errors.Join(start.serverErr, end.serverErr); err != nil {
		b.notes[server] = err.Error()
	} else {
		b.res[server] = us(end.server - start.server)
	}
	if err := errors.Join(start.clientErr, end.clientErr); err != nil {
		b.notes[client] = err.Error()
	} else {
		b.res[client] = us(end.client - start.client)
	}
	if sv, ok := b.res[server]; ok {
		if cv, ok := b.res[client]; ok {
			b.res[name+"_cpu_us_per_rec"] = sv + cv
		}
	}
}

// wsBenchSteps are the websocket benchmark's steps, in the order they run;
// `pulse bench --ws-steps` picks some of them.
var wsBenchSteps = []string{"batch", "consume", "binary", "single", "topics", "fanout", "e2e"}

// parseWSSteps turns --ws-steps into the set of steps to run (nil: all).
func parseWSSteps(list string) (map[string]bool, error) {
	if list == "" {
		return nil, nil
	}
	set := map[string]bool{}
	for _, st := range strings.Split(list, ",") {
		st = strings.TrimSpace(st)
		if !slices.Contains(wsBenchSteps, st) {
			return nil, fmt.Errorf("--ws-steps: unknown step %q (steps: %s)", st, strings.Join(wsBenchSteps, ","))
		}
		set[st] = true
	}
	return set, nil
}

func (b *wsBencher) run(o wsBenchOptions) error {
	// The engine's append_interval run's records: ~1 KiB JSON values.
	bin := benchRecords(o.total)
	recs := make([]wire.RecordIn, len(bin))
	for i, r := range bin {
		k := string(r.Key)
		recs[i] = wire.RecordIn{Key: &k, Value: r.Value}
	}
	s := &wsSteps{wsBencher: b, bin: bin, recs: recs, records: max(1, min(len(recs), o.records))}
	s.few = max(1, s.records/10)
	steps := map[string]func() error{
		"batch": s.batch, "consume": s.consume, "binary": s.binary, "single": s.single,
		"topics": s.manyTopics, "fanout": s.fanout, "e2e": s.e2e,
	}
	for _, name := range wsBenchSteps {
		if o.steps != nil && !o.steps[name] {
			continue
		}
		if name == "e2e" {
			s.recs, s.bin, bin, recs = nil, nil, nil, nil
			debug.FreeOSMemory() // collects them, and returns their pages
		}
		var err error
		// The label tells this step's samples apart in a CPU profile
		// of the bench (go tool pprof -tagfocus bench=NAME).
		pprof.Do(b.ctx, pprof.Labels("bench", name), func(context.Context) {
			err = steps[name]()
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// wsSteps are the steps of one websocket benchmark and the records they
// produce.
type wsSteps struct {
	*wsBencher
	bin     []engine.Record
	recs    []wire.RecordIn
	records int    // records of the single-record and many-topics runs
	few     int    // records of the fan-out and end-to-end runs
	written string // the topic the batch step wrote, for the consume step
}

func (s *wsSteps) batch() error {
	fmt.Fprintf(s.progress(), "bench ws: produce, batches of 100, %d connections\n", wsBenchConns)
	topic, err := s.produce100("batch", "ws_produce_batch100", s.recs, nil)
	if err != nil {
		return err
	}
	s.written = topic
	return nil
}

// produce100 produces recs (JSON requests) or else bin (binary frames), 100
// records a request over wsBenchConns connections, to a new topic named
// after step, and records the run's figures as name_rps and name_mbps. It
// returns the topic.
func (s *wsSteps) produce100(step, name string, recs []wire.RecordIn, bin []engine.Record) (string, error) {
	topic, err := s.newTopic(step, "interval")
	if err != nil {
		return "", err
	}
	n := max(len(recs), len(bin))
	mark := s.cpu()
	elapsed, err := wsProduceRun(s.ctx, s.dial, []string{topic}, wsBenchConns, recs, bin, 100, wsBenchWindow)
	if err != nil {
		return "", err
	}
	s.perRecord(name, mark, n)
	stored, err := storedBytes(s.ctx, s.admin, topic)
	if err != nil {
		return "", err
	}
	s.res[name+"_rps"] = float64(n) / elapsed.Seconds()
	s.res[name+"_mbps"] = mbps(stored, elapsed)
	return topic, nil
}

// consume reads the batch step's topic back from earliest over one
// connection, with JSON pushes, then again with binary pushes. Without the
// batch step it first writes the same records the same way (JSON batches
// of 100, unmeasured), so that the server reads values it checked as JSON
// when they were produced, as in a full run.
func (s *wsSteps) consume() error {
	if s.written == "" {
		topic, err := s.newTopic("consume", "interval")
		if err != nil {
			return err
		}
		if _, err := wsProduceRun(s.ctx, s.dial, []string{topic}, wsBenchConns, s.recs, nil, 100, wsBenchWindow); err != nil {
			return err
		}
		s.written = topic
	}
	for _, binary := range []bool{false, true} {
		name, what := "ws_consume", "JSON"
		if binary {
			name, what = "ws_consume_binary", "binary"
		}
		fmt.Fprintf(s.progress(), "bench ws: consume from earliest, %s pushes, %d records, 1 connection\n", what, len(s.recs))
		writebackAll()
		mark := s.cpu()
		var elapsed time.Duration
		var err error
		// The client's read loop inherits the label (tagfocus push=binary).
		pprof.Do(s.ctx, pprof.Labels("bench", "consume", "push", strings.ToLower(what)), func(ctx context.Context) {
			elapsed, err = wsConsumeRun(ctx, s.dial, s.written, len(s.recs), binary)
		})
		if err != nil {
			return err
		}
		s.perRecord(name, mark, len(s.recs))
		s.res[name+"_rps"] = float64(len(s.recs)) / elapsed.Seconds()
	}
	return nil
}

// binary produces the batch step's records in binary produce frames: no
// JSON on either side.
func (s *wsSteps) binary() error {
	fmt.Fprintf(s.progress(), "bench ws: produce, binary frames of 100, %d connections\n", wsBenchConns)
	_, err := s.produce100("binary", "ws_produce_binary100", nil, s.bin)
	return err
}

func (s *wsSteps) single() error {
	fmt.Fprintf(s.progress(), "bench ws: produce, %d single records, 1 connection, %d in flight\n", s.records, wsBenchSingleWindow)
	topic, err := s.newTopic("single", "interval")
	if err != nil {
		return err
	}
	mark := s.cpu()
	elapsed, err := wsProduceRun(s.ctx, s.dial, []string{topic}, 1, s.recs[:s.records], nil, 1, wsBenchSingleWindow)
	if err != nil {
		return err
	}
	s.perRecord("ws_produce_single", mark, s.records)
	s.res["ws_produce_single_rps"] = float64(s.records) / elapsed.Seconds()
	return nil
}

// manyTopics produces the same records in batches of 100 to one topic,
// then spread over wsBenchTopics topics.
func (s *wsSteps) manyTopics() error {
	for _, n := range []int{1, wsBenchTopics} {
		fmt.Fprintf(s.progress(), "bench ws: produce, %d records in batches of 100 over %d topic(s), %d connections\n", s.records, n, wsBenchConns)
		ts, err := s.newTopics(fmt.Sprintf("topics%d", n), n, "interval")
		if err != nil {
			return err
		}
		mark := s.cpu()
		elapsed, err := wsProduceRun(s.ctx, s.dial, ts, wsBenchConns, s.recs[:s.records], nil, 100, wsBenchWindow)
		if err != nil {
			return err
		}
		s.perRecord(fmt.Sprintf("ws_produce_topics%d", n), mark, s.records)
		s.res[fmt.Sprintf("ws_produce_topics%d_rps", n)] = float64(s.records) / elapsed.Seconds()
	}
	return nil
}

// fanout produces to one topic from one producer while 1, 8 and 64
// subscribers on connections of their own read it.
func (s *wsSteps) fanout() error {
	for _, n := range wsBenchFanouts {
		fmt.Fprintf(s.progress(), "bench ws: fan-out, 1 producer, %d subscriber(s), %d records\n", n, s.few)
		topic, err := s.newTopic(fmt.Sprintf("fanout%d", n), "interval")
		if err != nil {
			return err
		}
		var mark cpuMark
		elapsed, produced, err := wsFanoutRun(s.ctx, s.dial, topic, n, s.recs[:s.few], func() { mark = s.cpu() })
		if err != nil {
			return err
		}
		end := s.cpu()
		s.res[fmt.Sprintf("ws_fanout%d_per_sub_rps", n)] = float64(s.few) / elapsed.Seconds()
		s.res[fmt.Sprintf("ws_fanout%d_delivered_rps", n)] = float64(s.few*n) / elapsed.Seconds()
		s.res[fmt.Sprintf("ws_fanout%d_produce_rps", n)] = float64(s.few) / produced.Seconds()
		name := fmt.Sprintf("ws_fanout%d_server_cpu_us_per_delivery", n)
		if err := errors.Join(mark.serverErr, end.serverErr); err != nil {
			s.notes[name] = err.Error()
		} else {
			s.res[name] = float64((end.server - mark.server).Nanoseconds()) / 1e3 / float64(s.few*n)
		}
	}
	return nil
}

// e2e measures a round trip through the server that stores nothing
// (ws_rtt_*, the floor under an end-to-end latency besides the fsync), then
// produce-to-delivery latency at wsBenchE2ERate in both sync modes, and the
// bytes the server caused to be written to the device per byte of the
// values produced.
func (s *wsSteps) e2e() error {
	fmt.Fprintf(s.progress(), "bench ws: round trip, %d describe requests at %d/s\n", wsBenchRTTs, wsBenchE2ERate)
	topic, err := s.newTopic("rtt", "interval")
	if err != nil {
		return err
	}
	rtt, err := wsRTT(s.ctx, s.dial, topic, wsBenchRTTs, time.Second/wsBenchE2ERate)
	if err != nil {
		return err
	}
	s.res["ws_rtt_p50_us"] = percentile(rtt, 0.50)
	s.res["ws_rtt_p99_us"] = percentile(rtt, 0.99)
	for _, mode := range []string{"interval", "every-write"} {
		fmt.Fprintf(s.progress(), "bench ws: end-to-end latency, %s, %d records/s, %d records\n", mode, wsBenchE2ERate, s.few)
		topic, err := s.newTopic("e2e-"+mode, mode)
		if err != nil {
			return err
		}
		var write0 int64
		ioErr := s.pidErr
		if ioErr == nil {
			_, write0, ioErr = processIO(s.pid)
		}
		lat, payload, err := wsE2ERun(s.ctx, s.dial, topic, s.few)
		if err != nil {
			return err
		}
		name := "ws_e2e_" + strings.ReplaceAll(mode, "-", "_")
		if ioErr == nil {
			var write1 int64
			if _, write1, ioErr = processIO(s.pid); ioErr == nil {
				s.res[name+"_disk_bytes_per_payload_byte"] = float64(write1-write0) / float64(payload)
			}
		}
		if ioErr != nil {
			s.notes[name+"_disk_bytes_per_payload_byte"] = ioErr.Error()
		}
		s.res[name+"_p50_us"] = percentile(lat, 0.50)
		s.res[name+"_p99_us"] = percentile(lat, 0.99)
	}
	return nil
}

// storedBytes is the size of topic's partitions on disk.
func storedBytes(ctx context.Context, admin *wsclient.Client, topic string) (int64, error) {
	t, err := admin.Describe(ctx, topic)
	if err != nil {
		return 0, err
	}
	var stored int64
	for _, p := range t.Partitions {
		stored += p.Bytes
	}
	return stored, nil
}

// wsProduceRun produces recs (JSON requests) or else bin (binary frames)
// over conns connections, per request records at a time (1: the
// single-record request form), window requests in flight per connection,
// the requests spread over topics in turn, and returns the time until the
// last ack.
func wsProduceRun(ctx context.Context, dial dialer, topics []string, conns int, recs []wire.RecordIn, bin []engine.Record, per, window int) (time.Duration, error) {
	clients := make([]*wsclient.Client, conns)
	for i := range clients {
		c, err := dial(ctx)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		clients[i] = c
	}
	total := max(len(recs), len(bin))
	chunk := (total + len(clients) - 1) / len(clients)
	errs := make(chan error, len(clients))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range clients {
		lo, hi := min(i*chunk, total), min((i+1)*chunk, total)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inflight []*wsclient.Pending
			for lo < hi || len(inflight) > 0 {
				if lo < hi && len(inflight) < window {
					var p *wsclient.Pending
					var err error
					n := min(per, hi-lo)
					topic := topics[(lo/per)%len(topics)]
					switch {
					case bin != nil:
						p, err = c.ProduceBytesAsync(topic, 0, bin[lo:lo+n])
					case per == 1:
						p, err = c.ProduceRecordAsync(topic, 0, recs[lo])
					default:
						p, err = c.ProduceAsync(topic, 0, recs[lo:lo+n])
					}
					lo += n
					if err != nil {
						errs <- err
						return
					}
					inflight = append(inflight, p)
					continue
				}
				if _, err := inflight[0].Wait(ctx); err != nil {
					errs <- err
					return
				}
				inflight = inflight[1:]
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	return elapsed, <-errs
}

// wsConsumeRun subscribes to topic from earliest on a new connection (with
// binary pushes when binary) and returns the time until n records have
// arrived.
func wsConsumeRun(ctx context.Context, dial dialer, topic string, n int, binary bool) (time.Duration, error) {
	c, err := dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	start := time.Now()
	sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: -1, From: "earliest", Buffer: 64, Binary: binary})
	if err != nil {
		return 0, err
	}
	if err := drain(ctx, sub, n); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// drain receives pushes of sub until n records have arrived.
func drain(ctx context.Context, sub *wsclient.Subscription, n int) error {
	for got := 0; got < n; {
		select {
		case p, ok := <-sub.C():
			if !ok {
				return fmt.Errorf("subscription ended after %d of %d records: %v", got, n, sub.Err())
			}
			if p.Err != nil {
				return fmt.Errorf("subscription: partition %d: %v", p.Partition, p.Err)
			}
			got += len(p.Records)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// wsFanoutRun subscribes subs connections to topic, then produces recs to
// it from one connection in batches of 100 and returns the time from the
// first produce until every subscriber has received every record, and until
// the producer had every ack. started is called just before the first
// produce.
func wsFanoutRun(ctx context.Context, dial dialer, topic string, subs int, recs []wire.RecordIn, started func()) (elapsed, produced time.Duration, err error) {
	var ss []*wsclient.Subscription
	for range subs {
		c, err := dial(ctx)
		if err != nil {
			return 0, 0, err
		}
		defer c.Close()
		s, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: -1, From: "earliest", Buffer: 64})
		if err != nil {
			return 0, 0, err
		}
		ss = append(ss, s)
	}
	errs := make(chan error, subs)
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := drain(ctx, s, len(recs)); err != nil {
				errs <- err
			}
		}()
	}
	started()
	start := time.Now()
	if produced, err = wsProduceRun(ctx, dial, []string{topic}, 1, recs, nil, 100, wsBenchWindow); err != nil {
		return 0, 0, err
	}
	wg.Wait()
	elapsed = time.Since(start)
	close(errs)
	return elapsed, produced, <-errs
}

// wsE2ERun produces n single records at wsBenchE2ERate per second, each
// carrying its send time, to a topic tailed on another connection, and
// returns the produce-to-delivery latencies in microseconds and the bytes
// of the values produced.
func wsE2ERun(ctx context.Context, dial dialer, topic string, n int) ([]float64, int64, error) {
	prod, err := dial(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer prod.Close()
	tailc, err := dial(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tailc.Close()
	sub, err := tailc.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: -1, From: "latest", Buffer: 1024})
	if err != nil {
		return nil, 0, err
	}
	lat := make([]float64, 0, n)
	got := make(chan error, 1)
	go func() {
		for len(lat) < n {
			p, ok := <-sub.C()
			if !ok {
				got <- fmt.Errorf("tail ended: %v", sub.Err())
				return
			}
			now := time.Now().UnixNano()
			for _, r := range p.Records {
				sent, err := sentTime(r.Value)
				if err != nil {
					got <- err
					return
				}
				lat = append(lat, float64(now-sent)/1e3)
			}
		}
		got <- nil
	}()

	pad := bytes.Repeat([]byte("x"), 900)
	interval := time.Second / wsBenchE2ERate
	start := time.Now()
	var pend []*wsclient.Pending
	var payload int64
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		v := fmt.Appendf(nil, `{"sent":%d,"pad":"%s"}`, time.Now().UnixNano(), pad)
		payload += int64(len(v))
		p, err := prod.ProduceRecordAsync(topic, 0, wire.RecordIn{Value: v})
		if err != nil {
			return nil, 0, err
		}
		pend = append(pend, p)
		if len(pend) >= 512 {
			for _, p := range pend {
				if _, err := p.Wait(ctx); err != nil {
					return nil, 0, err
				}
			}
			pend = pend[:0]
		}
	}
	for _, p := range pend {
		if _, err := p.Wait(ctx); err != nil {
			return nil, 0, err
		}
	}
	select {
	case err := <-got:
		return lat, payload, err
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}

// wsRTT times n describe requests of topic on a connection of its own, one
// every gap as the end-to-end runs send their records (so each crosses to
// a server that waits for it, as a record does), and returns each round
// trip in microseconds.
func wsRTT(ctx context.Context, dial dialer, topic string, n int, gap time.Duration) ([]float64, error) {
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	lat := make([]float64, 0, n)
	next := time.Now()
	for range n {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(gap)
		t := time.Now()
		if _, err := c.Describe(ctx, topic); err != nil {
			return nil, fmt.Errorf("describe %s: %w", topic, err)
		}
		lat = append(lat, float64(time.Since(t).Nanoseconds())/1e3)
	}
	return lat, nil
}

// sentTime reads the "sent" field at the start of an end-to-end record.
func sentTime(v []byte) (int64, error) {
	const prefix = `{"sent":`
	if !bytes.HasPrefix(v, []byte(prefix)) {
		return 0, errors.New("end-to-end record without a send time")
	}
	rest := v[len(prefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, errors.New("end-to-end record without a send time")
	}
	return strconv.ParseInt(string(rest[:end]), 10, 64)
}

// percentile returns the q-quantile of xs (sorted in place).
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}
