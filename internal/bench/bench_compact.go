package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/compact"
)

// Compaction figures of `pulse bench`:
//
//   - compaction_peak_mib: the peak Go heap while compacting a partition of
//     compactBenchMB (1 GiB on disk, codec none) of 1 KiB records whose keys
//     are all distinct (1M of them).
//     That is more keys than the dedupe map's cap (1<<18), so the pass ends
//     "aborted: key cap" (with at least 256 MiB): the figure shows memory is
//     bounded by the cap, not by the log.
//   - compaction_mbps: sealed bytes per second of a pass that rewrites every
//     sealed segment of a partition a quarter that size, where half the
//     records update one of 20k hot keys and half have keys of their own
//     (dedupe pass and rewrite included).
//
// PULSE_BENCH_COMPACT_MB sets the size (in MiB) for quick runs; segments
// are a sixteenth of it (64 MiB at the default) and the hot keys scale with
// it (20k at the default).
const (
	compactBenchMB  = 1024
	compactBenchEnv = "PULSE_BENCH_COMPACT_MB"
	compactHotKeys  = 20_000
)

func benchCompaction(ctx context.Context, dir string, res benchResult) error {
	size := int64(compactBenchMB) << 20
	if v := os.Getenv(compactBenchEnv); v != "" {
		mb, err := strconv.Atoi(v)
		if err != nil || mb <= 0 {
			return fmt.Errorf("%s=%q: want a positive number of MiB", compactBenchEnv, v)
		}
		size = int64(mb) << 20
	}
	o := engine.DefaultOptions(filepath.Join(dir, "compaction"))
	o.RetentionInterval, o.CompactionInterval = 0, 0 // only the passes measured here
	e, err := engine.Open(o)
	if err != nil {
		return err
	}
	defer e.Close()

	// Segments of a sixteenth of the step's size: the engine's default
	// 64 MiB at the default 1024 MiB, and segments sealed to compact in
	// smaller runs too.
	segment := max(engine.MinSegmentMaxBytes, size/16)

	// Memory: 1M distinct keys, more than the cap.
	if err := fillCompactTopic(ctx, e, "distinct", size, segment, 0); err != nil {
		return err
	}
	run, peak, err := measureCompaction(e, "distinct")
	if err != nil {
		return err
	}
	res["compaction_peak_mib"] = peak
	res["compaction_heap_idle_mib"] = heapMiB() // live heap once the pass is over
	res["compaction_partition_mb"] = float64(size) / 1e6
	res["compaction_keys_seen"] = float64(run.Keys)
	if records := size >> 10; records > int64(compact.DefaultOptions().MaxKeys) && run.Outcome != "aborted: key cap" {
		return fmt.Errorf("compaction of about %d distinct keys ended %q, want the key cap", records, run.Outcome)
	}

	// Throughput: repeating keys, every sealed segment rewritten.
	// As many hot keys per record as at the default size.
	hot := max(1, int(compactHotKeys*size/(compactBenchMB<<20)))
	if err := fillCompactTopic(ctx, e, "repeating", size/4, segment, hot); err != nil {
		return err
	}
	run, peak, err = measureCompaction(e, "repeating")
	if err != nil {
		return err
	}
	if run.Outcome != "compacted" {
		return fmt.Errorf("compaction of repeating keys ended %q (%s)", run.Outcome, run.Error)
	}
	res["compaction_mbps"] = mbps(run.BytesBefore, run.Duration)
	res["compaction_repeating_peak_mib"] = peak
	res["compaction_reclaimed_ratio"] = 1 - float64(run.BytesAfter)/float64(run.BytesBefore)
	return nil
}

// fillCompactTopic creates topic (codec none, so its size on disk is size)
// and fills it with 1 KiB records. With hot 0 the keys are distinct, in
// shuffled order; otherwise half the records take one of hot keys at random
// and the other half a key of their own, so a compaction both drops and
// keeps records in every segment.
func fillCompactTopic(ctx context.Context, e *engine.Engine, topic string, size, segment int64, hot int) error {
	if err := e.CreateTopic(topic, engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval, Cleanup: engine.CleanupCompact, SegmentMaxBytes: segment}); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(hot), 17))
	var perm []int
	if hot == 0 {
		perm = rng.Perm(int(size>>10) + 1)
	}
	key := func(i int) []byte {
		switch {
		case hot == 0:
			return fmt.Appendf(nil, "key-%08d", perm[i%len(perm)])
		case rng.IntN(2) == 0:
			return fmt.Appendf(nil, "hot-%08d", rng.IntN(hot))
		}
		return fmt.Appendf(nil, "own-%08d", i)
	}
	values := make([][]byte, 64)
	for i := range values {
		values[i] = benchRecord(rng, i)
	}
	batch := make([]engine.Record, 1000)
	written := int64(0)
	for i := 0; written < size; {
		for j := range batch {
			batch[j] = engine.Record{Key: key(i), Value: values[i%len(values)]}
			written += int64(len(batch[j].Value) + 30)
			i++
		}
		if _, err := e.Produce(ctx, topic, 0, batch); err != nil {
			return err
		}
	}
	return nil
}

// heapMiB is the live heap after a collection.
func heapMiB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// measureCompaction runs one compaction pass over topic and samples the
// heap meanwhile. It returns the run and the peak heap in MiB.
func measureCompaction(e *engine.Engine, topic string) (engine.MaintenanceRun, float64, error) {
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	err := e.RunCompaction(topic)
	close(stop)
	wg.Wait()
	if err != nil {
		return engine.MaintenanceRun{}, 0, err
	}
	st, err := e.MaintenanceStatus(topic, 0)
	if err != nil {
		return engine.MaintenanceRun{}, 0, err
	}
	if st.LastCompaction == nil {
		return engine.MaintenanceRun{}, 0, fmt.Errorf("topic %s: no compaction run recorded", topic)
	}
	return *st.LastCompaction, float64(peak.Load()) / (1 << 20), nil
}
