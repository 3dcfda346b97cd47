package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi"
)

func init() { wsBench = runWSBench }

// Sizes of the websocket benchmark runs.
const (
	wsBenchSingleRecords = 20000 // single-record produce requests
	wsBenchConns         = 4     // producing connections, as the engine's own append run
	wsBenchWindow        = 16    // requests in flight per connection (batches)
	wsBenchSingleWindow  = 256   // requests in flight per connection (single records)
	wsBenchE2ERate       = 5000  // records/s of the end-to-end latency run
	wsBenchE2ERecords    = 25000 // five seconds at that rate
)

// runWSBench measures the websocket API of the Pulse running at addr over
// loopback: batched produce throughput with the records of the engine's
// append runs (total bytes of them, as those runs), single-record produce
// throughput and end-to-end produce-to-tail latency in sync mode interval.
// It creates its own topics (named ws-bench-*) and deletes them afterwards.
func runWSBench(ctx context.Context, addr string, total int64, progress io.Writer) (map[string]float64, error) {
	cf := &clientFlags{server: addr, token: os.Getenv("PULSE_TOKEN")}
	admin, err := cf.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	res := map[string]float64{}
	var topics []string
	defer func() {
		for _, t := range topics {
			admin.DeleteTopic(context.Background(), t)
		}
	}()
	newTopic := func(name string) (string, error) {
		// Each run starts on a settled disk, as the engine's own steps
		// do: the previous run's topic deleted, dirty pages written back,
		// so that no run's fsyncs queue behind the last one's writeback.
		for _, t := range topics {
			admin.DeleteTopic(ctx, t)
		}
		writebackAll()
		name = "ws-bench-" + name + "-" + suffix
		topics = append(topics, name)
		_, err := admin.CreateTopic(ctx, name, wsapi.TopicConfig{Codec: "none", SyncMode: "interval"})
		return name, err
	}

	// The engine's append_interval run's records: ~1 KiB JSON values.
	bin := benchRecords(total)
	recs := make([]wsapi.RecordIn, len(bin))
	for i, r := range bin {
		k := string(r.Key)
		recs[i] = wsapi.RecordIn{Key: &k, Value: r.Value}
	}

	fmt.Fprintf(progress, "bench ws: produce, batches of 100, %d connections\n", wsBenchConns)
	topic, err := newTopic("batch")
	if err != nil {
		return res, err
	}
	elapsed, err := wsProduceRun(ctx, cf, topic, recs, nil, 100, wsBenchWindow)
	if err != nil {
		return res, err
	}
	stored, err := storedBytes(ctx, admin, topic)
	if err != nil {
		return res, err
	}
	res["ws_produce_batch100_rps"] = float64(len(recs)) / elapsed.Seconds()
	res["ws_produce_batch100_mbps"] = float64(stored) / (1 << 20) / elapsed.Seconds()

	// The same records in binary produce frames: no JSON on either side.
	fmt.Fprintf(progress, "bench ws: produce, binary frames of 100, %d connections\n", wsBenchConns)
	if topic, err = newTopic("binary"); err != nil {
		return res, err
	}
	if elapsed, err = wsProduceRun(ctx, cf, topic, nil, bin, 100, wsBenchWindow); err != nil {
		return res, err
	}
	if stored, err = storedBytes(ctx, admin, topic); err != nil {
		return res, err
	}
	res["ws_produce_binary100_rps"] = float64(len(bin)) / elapsed.Seconds()
	res["ws_produce_binary100_mbps"] = float64(stored) / (1 << 20) / elapsed.Seconds()

	fmt.Fprintf(progress, "bench ws: produce, single records, %d connections\n", wsBenchConns)
	if topic, err = newTopic("single"); err != nil {
		return res, err
	}
	if elapsed, err = wsProduceRun(ctx, cf, topic, recs[:min(len(recs), wsBenchSingleRecords)], nil, 1, wsBenchSingleWindow); err != nil {
		return res, err
	}
	res["ws_produce_single_rps"] = float64(min(len(recs), wsBenchSingleRecords)) / elapsed.Seconds()

	recs, bin = nil, nil
	debug.FreeOSMemory() // collects them, and returns their pages
	fmt.Fprintf(progress, "bench ws: end-to-end latency at %d records/s\n", wsBenchE2ERate)
	if topic, err = newTopic("e2e"); err != nil {
		return res, err
	}
	lat, err := wsE2ERun(ctx, cf, topic)
	if err != nil {
		return res, err
	}
	res["ws_e2e_p50_us"] = percentile(lat, 0.50)
	res["ws_e2e_p99_us"] = percentile(lat, 0.99)
	return res, nil
}

// storedBytes is the size of topic's partitions on disk.
func storedBytes(ctx context.Context, admin *wsapi.Client, topic string) (int64, error) {
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

// wsProduceRun produces recs (JSON requests) or else bin (binary frames) to
// topic over wsBenchConns connections, per request records at a time (1:
// the single-record request form), window requests in flight per
// connection, and returns the time until the last ack.
func wsProduceRun(ctx context.Context, cf *clientFlags, topic string, recs []wsapi.RecordIn, bin []engine.Record, per, window int) (time.Duration, error) {
	clients := make([]*wsapi.Client, wsBenchConns)
	for i := range clients {
		c, err := cf.dial(ctx)
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
			var inflight []*wsapi.Pending
			for lo < hi || len(inflight) > 0 {
				if lo < hi && len(inflight) < window {
					var p *wsapi.Pending
					var err error
					n := min(per, hi-lo)
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

// wsE2ERun produces single records at wsBenchE2ERate per second, each
// carrying its send time, to a topic tailed on another connection, and
// returns the produce-to-delivery latencies in microseconds.
func wsE2ERun(ctx context.Context, cf *clientFlags, topic string) ([]float64, error) {
	prod, err := cf.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	tailc, err := cf.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer tailc.Close()
	sub, err := tailc.Subscribe(ctx, wsapi.SubscribeOptions{Topic: topic, Partition: -1, From: "latest", Buffer: 1024})
	if err != nil {
		return nil, err
	}
	lat := make([]float64, 0, wsBenchE2ERecords)
	got := make(chan error, 1)
	go func() {
		for len(lat) < wsBenchE2ERecords {
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
	var pend []*wsapi.Pending
	for i := range wsBenchE2ERecords {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		v := fmt.Appendf(nil, `{"sent":%d,"pad":"%s"}`, time.Now().UnixNano(), pad)
		p, err := prod.ProduceRecordAsync(topic, 0, wsapi.RecordIn{Value: v})
		if err != nil {
			return nil, err
		}
		pend = append(pend, p)
		if len(pend) >= 512 {
			for _, p := range pend {
				if _, err := p.Wait(ctx); err != nil {
					return nil, err
				}
			}
			pend = pend[:0]
		}
	}
	for _, p := range pend {
		if _, err := p.Wait(ctx); err != nil {
			return nil, err
		}
	}
	select {
	case err := <-got:
		return lat, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
