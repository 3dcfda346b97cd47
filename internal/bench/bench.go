// Package bench measures Pulse on this machine's disk: the disk's own
// write bandwidth and fsync rate, the engine's produce, consume and
// recovery figures, compaction, and optionally the Kafka listener and the
// websocket API of a running Pulse. It is `pulse bench`; Run is its entry
// point and Config all it reads.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// Config says what one run of Run measures; DefaultConfig holds the
// defaults of `pulse bench`'s flags.
type Config struct {
	Dir        string                                              // directory to benchmark in, empty or absent; "": a temporary directory
	JSON       bool                                                // print one JSON object instead of the table
	WS         string                                              // address (host:port) of a running pulse whose websocket API is measured too; "": not measured
	Dial       func(ctx context.Context) (*wsclient.Client, error) // connects to the pulse at WS; needed with WS
	MB         int                                                 // MiB appended by the throughput runs
	RecoveryMB int                                                 // MiB in the partition of the recovery figures; 0 skips them
	Seconds    float64                                             // duration of each every-write run
	WSRecords  int                                                 // records of the single-record and 1-vs-100-topics websocket runs (a tenth: fan-out and end-to-end)
	ServerPID  int                                                 // pid of the pulse behind WS; 0: the process listening on its port
	WSSteps    string                                              // comma-separated websocket steps to run, of WSSteps(); "": all
	NoExtras   bool                                                // skip the figures other parts of Pulse add (compaction, Kafka listener)
	Kafka      bool                                                // also measure the Kafka listener, in this process, with franz-go over loopback
}

// DefaultConfig is the configuration of `pulse bench` without flags.
func DefaultConfig() Config {
	return Config{MB: 256, RecoveryMB: 1024, Seconds: 2, WSRecords: 100000}
}

// check refuses the sizes, durations and counts nothing can be measured
// with, naming the flag of each.
func (cfg Config) check() error {
	switch {
	case cfg.MB < 1:
		return fmt.Errorf("bench: --mb %d: want at least 1", cfg.MB)
	case cfg.RecoveryMB < 0:
		return fmt.Errorf("bench: --recovery-mb %d: want 0 (no recovery figures) or more", cfg.RecoveryMB)
	case !(cfg.Seconds > 0) || math.IsInf(cfg.Seconds, 1):
		return fmt.Errorf("bench: --seconds %v: want a duration above 0", cfg.Seconds)
	case cfg.WSRecords < 1:
		return fmt.Errorf("bench: --ws-records %d: want at least 1", cfg.WSRecords)
	case cfg.ServerPID < 0:
		return fmt.Errorf("bench: --server-pid %d: want a pid, or 0 to find it", cfg.ServerPID)
	}
	return nil
}

// WSSteps are the names of the websocket benchmark's steps, in the order
// they run.
func WSSteps() []string { return slices.Clone(wsBenchSteps) }

// benchResult is what `pulse bench --json` prints.
type benchResult map[string]float64

// benchNotes holds, by figure name, why a figure was not measured in this
// run (for instance: not permitted, or not on this OS).
type benchNotes map[string]string

// Run measures what cfg says, writing each step's name to progress as it
// starts and the figures to out at the end.
func Run(ctx context.Context, cfg Config, out, progress io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := cfg.check(); err != nil {
		return err
	}
	wsSteps, err := parseWSSteps(cfg.WSSteps)
	if err != nil {
		return err
	}
	if cfg.WS != "" && cfg.Dial == nil {
		return fmt.Errorf("bench: no dial function for the websocket API at %s", cfg.WS)
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "pulse-bench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("bench: --dir %s is not empty", dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: --dir: %w", err)
	}
	res, notes := benchResult{}, benchNotes{}
	step := func(name string, fn func() error) error {
		settle(dir)
		fmt.Fprintf(progress, "bench: %s...\n", name)
		if err := fn(); err != nil {
			return fmt.Errorf("bench %s: %w", name, err)
		}
		return nil
	}
	total := int64(cfg.MB) << 20
	steps := []struct {
		name string
		fn   func() error
	}{
		{"disk fsync rate", func() error { return benchFsync(dir, res, cfg.Seconds) }},
		{"raw disk writes", func() error { return benchRawWrite(dir, total, res) }},
		{"zstd on one core", func() error { return benchMachine(total, res) }},
		{"append interval codec none", func() error { return benchAppend(ctx, dir, "none", total, res) }},
		{"append interval codec zstd", func() error { return benchAppend(ctx, dir, "zstd", total/2, res) }},
		{"append every-write 1 and 64 producers", func() error { return benchEveryWrite(ctx, dir, cfg.Seconds, res) }},
	}
	if cfg.RecoveryMB > 0 {
		steps = append(steps, struct {
			name string
			fn   func() error
		}{"recovery", func() error { return benchRecovery(dir, int64(cfg.RecoveryMB)<<20, res, notes) }})
	}
	for _, s := range steps {
		if err := step(s.name, s.fn); err != nil {
			return err
		}
	}
	for _, extra := range benchExtras(cfg.Kafka, total) {
		if cfg.NoExtras && !extra.asked {
			continue
		}
		if err := step(extra.name, func() error { return extra.run(ctx, dir, res) }); err != nil {
			return err
		}
	}
	if cfg.WS != "" {
		if err := step("websocket API at "+cfg.WS, func() error {
			figs, why, err := runWSBench(ctx, wsBenchOptions{addr: cfg.WS, total: total, records: cfg.WSRecords, serverPID: cfg.ServerPID, steps: wsSteps, dial: cfg.Dial}, progress)
			for k, v := range figs {
				res[k] = v
			}
			for k, v := range why {
				notes[k] = v
			}
			return err
		}); err != nil {
			return err
		}
	}
	return printBench(out, res, notes, cfg.JSON)
}

// wsBenchOptions say what the websocket benchmark runs against, and how
// much.
type wsBenchOptions struct {
	addr      string
	dial      func(ctx context.Context) (*wsclient.Client, error) // connects to addr
	total     int64                                               // bytes of the batched produce runs, as of the append runs
	records   int                                                 // records of the single-record and 1-vs-100-topics runs
	serverPID int                                                 // the server's pid; 0: the process listening on addr
	steps     map[string]bool                                     // steps to run (of wsBenchSteps); nil: all
}

// dialer connects to the pulse under test: what cmd/pulse's client flags
// make of --ws.
type dialer func(ctx context.Context) (*wsclient.Client, error)

// settle removes what earlier steps left in dir and waits for the kernel to
// write back every dirty page, so that no step's fsyncs queue behind the
// writeback of the step before it.
func settle(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	writebackAll()
}

// benchExtra is a further figure of `pulse bench`, after the engine's own.
type benchExtra struct {
	name  string
	asked bool // a flag asked for it: it runs under --no-extras too
	run   func(ctx context.Context, dir string, res benchResult) error
}

// benchExtras are the further figures of `pulse bench`, in the order they
// run; the Kafka listener's only with kafka, its produce runs of total bytes.
// A figure a flag asked for (asked) runs under --no-extras too.
func benchExtras(kafka bool, total int64) []benchExtra {
	return []benchExtra{
		{name: "compaction", run: benchCompaction},
		{name: "Kafka listener (franz-go over loopback)", asked: kafka, run: func(ctx context.Context, dir string, res benchResult) error {
			if !kafka {
				return nil
			}
			return runKafkaBench(ctx, dir, total, res)
		}},
	}
}

func printBench(w io.Writer, res benchResult, notes benchNotes, asJSON bool) error {
	if asJSON {
		out := map[string]any{}
		for k, v := range res {
			out[k] = v
		}
		if len(notes) > 0 {
			out["not_measured"] = notes
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	keys := make([]string, 0, len(res)+len(notes))
	for k := range res {
		keys = append(keys, k)
	}
	for k := range notes {
		if _, ok := res[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := res[k]; ok {
			fmt.Fprintf(w, "%-48s %14.2f\n", k, v)
		} else {
			fmt.Fprintf(w, "%-48s %14s   (%s)\n", k, "not measured", notes[k])
		}
	}
	ratio := func(name, a, b string, target float64) {
		if res[b] > 0 && res[a] > 0 {
			fmt.Fprintf(w, "%-48s %14.2f   (target >= %.2f)\n", name, res[a]/res[b], target)
		}
	}
	ratioBelow := func(name, a, b string, target float64) {
		if res[b] > 0 && res[a] > 0 {
			fmt.Fprintf(w, "%-48s %14.2f   (target <= %.2f)\n", name, res[a]/res[b], target)
		}
	}
	fmt.Fprintln(w)
	ratio("append_interval / raw_write", "append_interval_mbps", "raw_write_mbps", 0.85)
	ratio("every_write_1p / fsync", "append_every_write_1p_rps", "fsync_per_sec", 0.8)
	ratio("every_write_1p / fdatasync", "append_every_write_1p_rps", "fdatasync_per_sec", 0.8)
	ratio("every_write_64p / 1p", "append_every_write_64p_rps", "append_every_write_1p_rps", 30)
	ratio("append_interval_zstd / append_interval", "append_interval_zstd_mbps", "append_interval_mbps", 0.6)
	ratio("ws batch100 / append_interval", "ws_produce_batch100_mbps", "append_interval_mbps", 0.7)
	ratio("ws binary100 / append_interval", "ws_produce_binary100_mbps", "append_interval_mbps", 0.9)
	ratio("ws topics100 / topics1", "ws_produce_topics100_rps", "ws_produce_topics1_rps", 0.9)
	ratio("ws fanout64 / fanout1 (per subscriber)", "ws_fanout64_per_sub_rps", "ws_fanout1_per_sub_rps", 0.9)
	ratio("ws fanout64 / fanout1 (produce)", "ws_fanout64_produce_rps", "ws_fanout1_produce_rps", 0.9)
	ratioBelow("ws e2e every-write p50 / fdatasync p50", "ws_e2e_every_write_p50_us", "fdatasync_p50_us", 1.5)
	ratioBelow("ws e2e every-write p99 / fdatasync p99", "ws_e2e_every_write_p99_us", "fdatasync_p99_us", 3)
	printBounds(w, res)
	return nil
}

// benchFsync measures the disk's commit limit: 4 KiB appended and fsynced,
// and the same with fdatasync, which is what a partition log calls per commit.
func benchFsync(dir string, res benchResult, seconds float64) error {
	for _, c := range []struct {
		name string
		sync func(*os.File) error
	}{
		{"fsync", fsutil.SyncFile},
		{"fdatasync", fsutil.SyncData}, // what the log calls per commit: fdatasync, F_FULLFSYNC on macOS
	} {
		rate, lat, err := syncRate(dir, seconds/2, c.sync)
		if err != nil {
			return err
		}
		res[c.name+"_per_sec"] = rate
		if c.name == "fdatasync" {
			// The disk's own latency, against which the engine's ack
			// and end-to-end latencies (each at least one fdatasync)
			// are read.
			res["fdatasync_p50_us"] = percentile(lat, 0.50)
			res["fdatasync_p99_us"] = percentile(lat, 0.99)
		}
	}
	return nil
}

// syncRate appends 4 KiB and syncs, back to back, for seconds; it returns
// the syncs per second and each sync's latency in microseconds.
func syncRate(dir string, seconds float64, sync func(*os.File) error) (float64, []float64, error) {
	f, err := os.Create(filepath.Join(dir, "fsync.bench"))
	if err != nil {
		return 0, nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	var lat []float64
	start := time.Now()
	for time.Since(start).Seconds() < seconds {
		if _, err := f.Write(buf); err != nil {
			return 0, nil, err
		}
		t := time.Now()
		if err := sync(f); err != nil {
			return 0, nil, err
		}
		lat = append(lat, float64(time.Since(t).Nanoseconds())/1e3)
	}
	return float64(len(lat)) / time.Since(start).Seconds(), lat, nil
}

// benchRawWrite writes total bytes in 1 MiB writes with an fsync every 8 MiB
// and at the end: the cadence of an interval-mode partition, without framing.
func benchRawWrite(dir string, total int64, res benchResult) error {
	f, err := os.Create(filepath.Join(dir, "raw.bench"))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	start := time.Now()
	var unsynced int64
	for written := int64(0); written < total; written += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			return err
		}
		if unsynced += int64(len(buf)); unsynced >= 8<<20 {
			if err := f.Sync(); err != nil {
				return err
			}
			unsynced = 0
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	res["raw_write_mbps"] = mbps(total, time.Since(start))
	return nil
}

func mbps(bytes int64, d time.Duration) float64 { return float64(bytes) / 1e6 / d.Seconds() }

// benchRecord returns a JSON-like value of about 1 KiB.
func benchRecord(rng *rand.Rand, i int) []byte {
	kinds := []string{"order.created", "order.paid", "page.view", "sensor.reading"}
	b := fmt.Appendf(nil, `{"id":%d,"type":%q,"user":"user-%d","ts":%d,"amount":%d.%02d,"tags":["a","b"],"items":[`,
		i, kinds[i%len(kinds)], rng.IntN(10000), 1764000000000+int64(i), rng.IntN(500), rng.IntN(100))
	for j := 0; len(b) < 1000; j++ {
		b = fmt.Appendf(b, `{"sku":"SKU-%05d","qty":%d},`, rng.IntN(100000), 1+rng.IntN(9))
	}
	b[len(b)-1] = ']'
	return append(b, '}')
}

// benchRecords returns the records of the append runs (and of the websocket
// API's produce runs, so that their figures compare): about total bytes of
// ~1 KiB JSON values keyed k0..k999.
func benchRecords(total int64) []engine.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []engine.Record
	var raw int64
	for i := 0; raw < total; i++ {
		r := engine.Record{Key: fmt.Appendf(nil, "k%d", i%1000), Value: benchRecord(rng, i)}
		raw += int64(len(r.Key) + len(r.Value) + 25)
		recs = append(recs, r)
	}
	return recs
}

func openBenchEngine(dir, name string) (*engine.Engine, error) {
	return engine.Open(engine.DefaultOptions(filepath.Join(dir, name)))
}

// benchAppend appends total bytes of 1 KiB records to an interval-mode topic
// from four producers, 256 records per produce call.
func benchAppend(ctx context.Context, dir, codecName string, total int64, res benchResult) error {
	e, err := openBenchEngine(dir, "append-"+codecName)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := e.CreateTopic("bench", engine.TopicConfig{Codec: codecName, SyncMode: engine.SyncInterval}); err != nil {
		return err
	}
	recs := benchRecords(total)
	const perCall, producers = 256, 4
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(perCall)) - perCall
				if i >= len(recs) {
					return
				}
				if _, err := e.Produce(ctx, "bench", 0, recs[i:min(i+perCall, len(recs))]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if err := e.Sync("bench"); err != nil {
		return err
	}
	elapsed := time.Since(start)
	segs, err := e.Segments("bench", 0)
	if err != nil {
		return err
	}
	var stored, rawBytes int64
	for _, s := range segs {
		stored += s.Bytes
		rawBytes += s.RawBytes
	}
	if codecName == "none" {
		res["append_interval_mbps"] = mbps(stored, elapsed)
		recs = nil // the read below should not pay GC work for the producers' input
		runtime.GC()
		return benchRead(e, stored, res)
	}
	res["append_interval_zstd_mbps"] = mbps(rawBytes, elapsed)
	if stored > 0 {
		res["compression_ratio"] = float64(rawBytes) / float64(stored)
	}
	return nil
}

// benchRead reads the whole topic back sequentially.
func benchRead(e *engine.Engine, stored int64, res benchResult) error {
	start := time.Now()
	var from int64
	for {
		r, err := e.Read("bench", 0, from, 5000, 8<<20)
		if err != nil {
			return err
		}
		if len(r.Records) == 0 {
			break
		}
		from = r.Next
	}
	res["read_mbps"] = mbps(stored, time.Since(start))
	return nil
}

// everyWriteSlices is how many slices of its time each every-write run
// gets; the two runs alternate slice by slice (1, 64, 64, 1, 1, 64, ...),
// so that both see the same disk: this VM's fsync latency drifts by half
// from one second to the next, which otherwise moves their ratio as much as
// group commit does.
const everyWriteSlices = 8

// benchEveryWrite runs one producer, then 64, appending one record at a
// time to an every-write topic each, for seconds each in all, in
// alternating slices (everyWriteSlices). It records the records/s of both,
// the ack latency distribution of the one producer, and from the engines'
// observers the fsync latency of each run and the records per fsync.
func benchEveryWrite(ctx context.Context, dir string, seconds float64, res benchResult) error {
	type run struct {
		producers int
		e         *engine.Engine
		obs       *syncObserver
		records   int64
		elapsed   time.Duration
		lat       []time.Duration // one producer's ack latencies
	}
	runs := []*run{{producers: 1}, {producers: 64}}
	for _, r := range runs {
		r.obs = &syncObserver{}
		opts := engine.DefaultOptions(filepath.Join(dir, fmt.Sprintf("every-write-%d", r.producers)))
		opts.Observer = r.obs
		e, err := engine.Open(opts)
		if err != nil {
			return err
		}
		defer e.Close()
		if err := e.CreateTopic("bench", engine.TopicConfig{Codec: "none", SyncMode: engine.SyncEveryWrite}); err != nil {
			return err
		}
		r.e = e
	}
	value := benchRecord(rand.New(rand.NewPCG(3, 4)), 0)[:256]
	slice := time.Duration(seconds * float64(time.Second) / everyWriteSlices)
	for i := range 2 * everyWriteSlices {
		r := runs[(i+1)/2%2] // 1, 64, 64, 1, 1, 64, ...
		n, d, lat, err := everyWriteSlice(ctx, r.e, r.producers, value, slice)
		if err != nil {
			return err
		}
		r.records += n
		r.elapsed += d
		r.lat = append(r.lat, lat...)
	}
	for _, r := range runs {
		res[fmt.Sprintf("append_every_write_%dp_rps", r.producers)] = float64(r.records) / r.elapsed.Seconds()
		fs := r.obs.fsyncMicros()
		res[fmt.Sprintf("every_write_%dp_fsync_p50_us", r.producers)] = percentile(fs, 0.50)
		if passes, recs := r.obs.commits(); passes > 0 && r.producers > 1 {
			res[fmt.Sprintf("every_write_%dp_records_per_fsync", r.producers)] = float64(recs) / float64(passes)
		}
	}
	if l := runs[0].lat; len(l) > 0 {
		slices.Sort(l)
		res["ack_p50_us"] = float64(l[len(l)/2].Microseconds())
		res["ack_p99_us"] = float64(l[len(l)*99/100].Microseconds())
	}
	return nil
}

// everyWriteSlice runs producers one-record-at-a-time against e's topic
// bench for d: the records acked, the time until the last producer
// stopped, and with one producer each ack's latency.
func everyWriteSlice(ctx context.Context, e *engine.Engine, producers int, value []byte, d time.Duration) (int64, time.Duration, []time.Duration, error) {
	var total atomic.Int64
	var lat []time.Duration
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	start := time.Now()
	deadline := start.Add(d)
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := []engine.Record{{Value: value}}
			for t0 := time.Now(); t0.Before(deadline); {
				if _, err := e.Produce(ctx, "bench", 0, rec); err != nil {
					errs <- err
					return
				}
				t1 := time.Now()
				if producers == 1 {
					lat = append(lat, t1.Sub(t0))
				}
				total.Add(1)
				t0 = t1
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, nil, err
	}
	return total.Load(), elapsed, lat, nil
}

// syncObserver is an engine.Observer that keeps a run's fsync latencies and
// counts its sync passes and the records they made durable.
type syncObserver struct {
	mu      sync.Mutex
	fsyncs  []time.Duration
	passes  int64
	records int64
}

func (o *syncObserver) ObserveFsync(_ string, _ int, d time.Duration) {
	o.mu.Lock()
	o.fsyncs = append(o.fsyncs, d)
	o.mu.Unlock()
}

func (o *syncObserver) ObserveCommit(_ string, _ int, records int64, _ int) {
	o.mu.Lock()
	o.passes++
	o.records += records
	o.mu.Unlock()
}

// fsyncMicros returns the fsync latencies observed, in microseconds.
func (o *syncObserver) fsyncMicros() []float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	us := make([]float64, len(o.fsyncs))
	for i, d := range o.fsyncs {
		us[i] = float64(d.Nanoseconds()) / 1e3
	}
	return us
}

// commits returns the sync passes observed and the records they covered.
func (o *syncObserver) commits() (passes, records int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.passes, o.records
}

// benchRecovery fills one partition with size bytes, closes it cleanly,
// measures what reopening it reads from the device with a cold page cache
// and times the snapshot path, then removes the snapshot and times the full
// scan.
func benchRecovery(dir string, size int64, res benchResult, notes benchNotes) error {
	name := "recovery"
	e, err := openBenchEngine(dir, name)
	if err != nil {
		return err
	}
	if err := e.CreateTopic("bench", engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval}); err != nil {
		e.Close()
		return err
	}
	rng := rand.New(rand.NewPCG(5, 6))
	batch := make([]engine.Record, 1000)
	for i := range batch {
		batch[i] = engine.Record{Value: benchRecord(rng, i)}
	}
	for written := int64(0); written < size; written += 1000 * 1024 {
		if _, err := e.Produce(context.Background(), "bench", 0, batch); err != nil {
			e.Close()
			return err
		}
	}
	if err := e.Close(); err != nil {
		return err
	}
	report := func() (ms float64, scanned int64, err error) {
		e, err := openBenchEngine(dir, name)
		if err != nil {
			return 0, 0, err
		}
		defer e.Close()
		for _, r := range e.RecoveryReports() {
			if r.Topic == "bench" {
				return float64(r.Duration.Microseconds()) / 1000, r.BytesScanned, nil
			}
		}
		return 0, 0, fmt.Errorf("no recovery report for topic bench")
	}
	ms, _, err := report()
	if err != nil {
		return err
	}
	res["recovery_snapshot_ms"] = ms
	pdir := layout.PartitionDir(filepath.Join(dir, name), "bench", 0)
	if err := os.Remove(filepath.Join(pdir, layout.SnapshotFile)); err != nil {
		return err
	}
	ms, scanned, err := report()
	if err != nil {
		return err
	}
	res["recovery_fullscan_ms"] = ms
	res["recovery_fullscan_mbps"] = float64(scanned) / 1e6 / (ms / 1000)
	res["recovery_partition_mb"] = float64(size) / 1e6
	// Last, as it drops the page cache: the two opens above read a warm
	// cache, as an engine restarted right after it stopped does. The
	// full scan's clean close wrote the snapshot again.
	if _, err := os.Stat(filepath.Join(pdir, layout.SnapshotFile)); err != nil {
		return fmt.Errorf("cold restart: %w", err)
	}
	return benchColdRestart(filepath.Join(dir, name), res, notes)
}

// benchColdRestart drops the page cache and reopens the engine on dataDir
// (closed cleanly), counting the bytes this process reads from the device
// during engine.Open (read_bytes of /proc/self/io) against the bytes the
// data dir holds. Between the drop and the measured open, an engine is
// opened on a small data dir of its own, so that the pages of this program
// that opening runs are read back before the count starts: what is counted
// is the store.
func benchColdRestart(dataDir string, res benchResult, notes benchNotes) error {
	figs := []string{"cold_restart_read_mb", "cold_restart_read_fraction"}
	var store int64
	err := filepath.WalkDir(dataDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			store += fi.Size()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("cold restart: size of %s: %w", dataDir, err)
	}
	res["cold_restart_store_mb"] = float64(store) / 1e6
	notMeasured := func(err error) error {
		for _, f := range figs {
			notes[f] = err.Error()
		}
		return nil
	}
	if _, _, err := processIO(0); err != nil {
		return notMeasured(err)
	}
	warm := dataDir + "-warm"
	defer os.RemoveAll(warm)
	warmOpen := func() error {
		e, err := engine.Open(engine.DefaultOptions(warm))
		if err != nil {
			return fmt.Errorf("cold restart: %w", err)
		}
		return e.Close()
	}
	if err := warmOpen(); err != nil {
		return err
	}
	if e, err := engine.Open(engine.DefaultOptions(warm)); err == nil {
		err = e.CreateTopic("bench", engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval})
		if err == nil {
			_, err = e.Produce(context.Background(), "bench", 0, []engine.Record{{Value: []byte(`{}`)}})
		}
		if cerr := e.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("cold restart: %w", err)
		}
	}
	if err := dropPageCache(); err != nil {
		return notMeasured(err)
	}
	if err := warmOpen(); err != nil {
		return err
	}
	before, _, err := processIO(0)
	if err != nil {
		return notMeasured(err)
	}
	e, err := engine.Open(engine.DefaultOptions(dataDir))
	if err != nil {
		return fmt.Errorf("cold restart: %w", err)
	}
	after, _, ioErr := processIO(0)
	if err := e.Close(); err != nil {
		return fmt.Errorf("cold restart: %w", err)
	}
	if ioErr != nil {
		return notMeasured(ioErr)
	}
	res["cold_restart_read_mb"] = float64(after-before) / 1e6
	if store > 0 {
		res["cold_restart_read_fraction"] = float64(after-before) / float64(store)
	}
	return nil
}
