//go:build unix

package recovery

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"go.uber.org/goleak"
)

// The recovery benchmarks run on one partition built once per process in a
// temp directory: PULSE_BENCH_MB megabytes (default 256; `pulse bench` and
// the figures quoted in the docs use 1024) in 64 MiB segments, batches of
// PULSE_BENCH_BATCH records (default 100) of ~120 bytes, codec none, a 4 KiB
// index interval, hwm and snapshot at the end. Run with
//
//	go test ./engine/recovery -run '^$' -bench Recovery -benchtime 5x
//
// BenchmarkRecoveryFullScan reports MB/s (from page cache after the first
// iteration); BenchmarkRecoverySnapshot reports ms/op.

var bench struct {
	once sync.Once
	dir  string
	size int64
	leo  int64
	err  error
}

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func benchPartition(b *testing.B) (string, int64) {
	bench.once.Do(func() {
		bench.dir, bench.err = os.MkdirTemp("", "pulse-recovery-bench-")
		if bench.err != nil {
			return
		}
		bench.size, bench.leo, bench.err = buildBenchPartition(bench.dir, int64(benchEnv("PULSE_BENCH_MB", 256))<<20, benchEnv("PULSE_BENCH_BATCH", 100))
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.dir, bench.size
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	if code == 0 {
		// The fast path's parallel index checks must all have ended.
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left behind: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// buildBenchPartition writes about total bytes of batches into dir.
func buildBenchPartition(dir string, total int64, perBatch int) (int64, int64, error) {
	const segMax = 64 << 20
	const interval = 4 << 10
	recs := make([]codec.Record, perBatch)
	for i := range recs {
		recs[i] = codec.Record{
			Timestamp: 1_750_000_000_000,
			Key:       []byte(fmt.Sprintf("user-%06d", i)),
			Value:     []byte(fmt.Sprintf(`{"event":"page_view","n":%d,"path":"/products/%d","ua":"Mozilla/5.0"}`, i, i*7)),
		}
	}
	var written, off int64
	var active Snapshot
	for written < total {
		base := off
		var data, idx []byte
		last := int64(-1)
		for int64(len(data)) < segMax && written+int64(len(data)) < total {
			pos := int64(len(data))
			if last < 0 || pos-last >= interval {
				idx = binary.BigEndian.AppendUint32(idx, uint32(off-base))
				idx = binary.BigEndian.AppendUint32(idx, uint32(pos))
				last = pos
			}
			var err error
			data, err = codec.AppendBatch(data, off, recs, codec.EncodeOptions{})
			if err != nil {
				return 0, 0, err
			}
			off += int64(perBatch)
		}
		name := fmt.Sprintf("%020d", base)
		if err := os.WriteFile(filepath.Join(dir, name+".log"), data, 0o644); err != nil {
			return 0, 0, err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".index"), idx, 0o644); err != nil {
			return 0, 0, err
		}
		written += int64(len(data))
		active = Snapshot{LEO: off, ActiveBase: base, ActiveSize: int64(len(data)), ActiveNext: off}
	}
	if err := WriteHWM(dir, off); err != nil {
		return 0, 0, err
	}
	if err := WriteSnapshot(dir, active); err != nil {
		return 0, 0, err
	}
	return written, off, nil
}

func BenchmarkRecoveryFullScan(b *testing.B) {
	dir, size := benchPartition(b)
	snap := filepath.Join(dir, SnapshotFile)
	saved, err := os.ReadFile(snap)
	if err != nil {
		b.Fatal(err)
	}
	os.Remove(snap)
	defer os.WriteFile(snap, saved, 0o644)
	b.SetBytes(size)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		res, err := Run(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Report.Path != PathFullScan || res.LEO != bench.leo || res.Report.NeedsWork() && len(res.Report.IndexesRebuilt) > 0 {
			b.Fatalf("unexpected report:\n%v", res.Report.Lines())
		}
		for _, s := range res.Segments {
			s.Close()
		}
	}
	b.ReportMetric(float64(size)/1e6/(cpuSince(cpu0)/1e3/float64(b.N)), "cpu-MB/s")
}

func BenchmarkRecoverySnapshot(b *testing.B) {
	dir, _ := benchPartition(b)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		res, err := Run(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Report.Path != PathSnapshot || res.Report.NeedsWork() || res.LEO != bench.leo {
			b.Fatalf("unexpected report:\n%v", res.Report.Lines())
		}
		for _, s := range res.Segments {
			s.Close()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(cpuSince(cpu0)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user+system CPU time in milliseconds: on a busy
// shared machine it shows the cost that wall time hides under queueing.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

func cpuSince(t0 float64) float64 { return cpuTime() - t0 }
