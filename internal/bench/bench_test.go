package bench

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunRefusesNonEmptyDir: a --dir that holds anything is refused before
// any step runs, and what it holds stays.
func TestRunRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dir = dir
	var progress strings.Builder
	err := Run(context.Background(), cfg, io.Discard, &progress)
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("Run on a non-empty dir: %v, want an error saying it is not empty", err)
	}
	if progress.Len() != 0 {
		t.Errorf("steps ran on a refused dir: %q", progress.String())
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("the dir's file after a refused run: %q, %v", b, err)
	}
}

// TestRunCreatesAbsentDir: a --dir that does not exist yet is created and
// benchmarked in, as the flag's help says.
func TestRunCreatesAbsentDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent", "bench")
	cfg := DefaultConfig()
	cfg.Dir = dir
	cfg.MB, cfg.RecoveryMB, cfg.Seconds, cfg.NoExtras = 1, 0, 0.05, true
	var out strings.Builder
	if err := Run(context.Background(), cfg, &out, io.Discard); err != nil {
		t.Fatalf("Run in an absent dir: %v", err)
	}
	if !strings.Contains(out.String(), "append_interval_mbps") {
		t.Errorf("no append_interval_mbps figure in:\n%s", out.String())
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the dir after the run: %v, %v", fi, err)
	}
}

// TestRunRefusesBadConfig: an unknown websocket step, or a websocket
// address without a way to dial it, is an error naming it before any step
// runs and before --dir is made.
func TestRunRefusesBadConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"unknown step", func(c *Config) { c.WS, c.WSSteps = "127.0.0.1:1", "batch,nosuch" }, "nosuch"},
		{"no dial", func(c *Config) { c.WS = "127.0.0.1:1" }, "127.0.0.1:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bench")
			cfg := DefaultConfig()
			cfg.Dir = dir
			c.edit(&cfg)
			var progress strings.Builder
			err := Run(context.Background(), cfg, io.Discard, &progress)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run: %v, want an error naming %q", err, c.want)
			}
			if progress.Len() != 0 {
				t.Errorf("steps ran: %q", progress.String())
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("--dir made (%v)", err)
			}
		})
	}
}

// TestKafkaBench runs the Kafka listener's figures with 2 MiB of records
// (franz-go over loopback to a listener in this process) and checks each
// figure is a positive, finite number, with the ratios to the engine's own
// figures when those are known. The figures themselves are not asserted.
func TestKafkaBench(t *testing.T) {
	res := benchResult{"append_interval_mbps": 100, "read_mbps": 100}
	if err := runKafkaBench(context.Background(), t.TempDir(), 2<<20, res); err != nil {
		t.Fatal(err)
	}
	requirePositive(t, res,
		"kafka_produce_acks1_mbps", "kafka_produce_acks1_rps", "kafka_produce_acks1_vs_append",
		"kafka_produce_acksall_mbps", "kafka_produce_acksall_rps", "kafka_produce_acksall_vs_append",
		"kafka_consume_mbps", "kafka_consume_vs_read", "kafka_e2e_p50_us", "kafka_e2e_p99_us")
	t.Log(res)
}

// requirePositive fails t for each of keys that res lacks or holds as
// anything but a positive finite number.
func requirePositive(t *testing.T, res benchResult, keys ...string) {
	t.Helper()
	for _, k := range keys {
		v, ok := res[k]
		if !ok || !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("%s = %v (present %v), want a positive finite number", k, v, ok)
		}
	}
}

// TestEveryWriteBench runs the every-write step briefly (1 and 64
// producers in alternating slices) and checks its figures: every one a
// positive, finite number, each producer's record seen as one fsync's
// share at most once (64 producers with one record in flight each cannot
// share more than 64 records per fsync), and the ack percentiles ordered.
// The rates themselves are not asserted (machines are shared): they are
// logged.
func TestEveryWriteBench(t *testing.T) {
	res := benchResult{}
	if err := benchEveryWrite(context.Background(), t.TempDir(), 0.2, res); err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	requirePositive(t, res, "append_every_write_1p_rps", "append_every_write_64p_rps", "ack_p50_us", "ack_p99_us",
		"every_write_1p_fsync_p50_us", "every_write_64p_fsync_p50_us", "every_write_64p_records_per_fsync")
	if r := res["every_write_64p_records_per_fsync"]; r > 64 {
		t.Errorf("every_write_64p_records_per_fsync = %.2f: more than the 64 records in flight", r)
	}
	if res["ack_p99_us"] < res["ack_p50_us"] {
		t.Errorf("ack p99 %v below p50 %v", res["ack_p99_us"], res["ack_p50_us"])
	}
}

// The compaction step at a small size (PULSE_BENCH_COMPACT_MB): both of its
// passes run and every figure is a positive finite number.
func TestCompactionBench(t *testing.T) {
	t.Setenv(compactBenchEnv, "32")
	res := benchResult{}
	if err := benchCompaction(context.Background(), t.TempDir(), res); err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	requirePositive(t, res, "compaction_peak_mib", "compaction_heap_idle_mib", "compaction_partition_mb", "compaction_keys_seen",
		"compaction_mbps", "compaction_repeating_peak_mib", "compaction_reclaimed_ratio")
	if r := res["compaction_reclaimed_ratio"]; r >= 1 {
		t.Errorf("compaction_reclaimed_ratio = %v: the pass dropped everything", r)
	}
}

// TestPrintBenchRatios: after the figures come the ratios of figures of the
// same run, each beside its target, and only those whose two figures were
// measured.
func TestPrintBenchRatios(t *testing.T) {
	res := benchResult{
		"append_interval_mbps": 800, "append_interval_zstd_mbps": 400, "raw_write_mbps": 1000,
		"ws_e2e_every_write_p50_us": 300, "fdatasync_p50_us": 200,
	}
	var out strings.Builder
	if err := printBench(&out, res, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"append_interval / raw_write                                0.80   (target >= 0.85)\n",
		"append_interval_zstd / append_interval                     0.50   (target >= 0.60)\n",
		"ws e2e every-write p50 / fdatasync p50                     1.50   (target <= 1.50)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "every_write_64p / 1p") {
		t.Errorf("a ratio of figures not measured is printed:\n%s", out.String())
	}
}

// TestMachineBench runs the machine step on 1 MiB of records: the
// processors and the one-core zstd rate are positive finite numbers.
func TestMachineBench(t *testing.T) {
	res := benchResult{}
	if err := benchMachine(1<<20, res); err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	requirePositive(t, res, "cpus", "zstd_1core_mbps")
}

// TestPrintBenchBounds: below the ratios come the best values of the zstd
// and end-to-end ratios that the machine step's figures allow, each only
// when its figures were measured.
func TestPrintBenchBounds(t *testing.T) {
	res := benchResult{
		"append_interval_mbps": 1000, "cpus": 2, "zstd_1core_mbps": 250,
		"fdatasync_p50_us": 200, "ws_rtt_p50_us": 100,
	}
	var out strings.Builder
	if err := printBench(&out, res, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cpus x zstd_1core / append_interval                        0.50   (the most append_interval_zstd / append_interval reaches here)\n",
		"(fdatasync + ws rtt) / fdatasync, p50                      1.50   (the least ws e2e every-write p50 / fdatasync p50 reaches here)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	delete(res, "ws_rtt_p50_us")
	delete(res, "zstd_1core_mbps")
	out.Reset()
	if err := printBench(&out, res, nil, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "reaches here") {
		t.Errorf("a bound of figures not measured is printed:\n%s", out.String())
	}
}

// TestRunRefusesBadNumbers: a size, duration or count that cannot be
// measured with (it printed figures of 0 or below) is an error naming its
// flag before any step runs, and --dir is not created.
func TestRunRefusesBadNumbers(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.MB = 0 }, "--mb 0: want at least 1"},
		{func(c *Config) { c.MB = -1 }, "--mb -1: want at least 1"},
		{func(c *Config) { c.RecoveryMB = -5 }, "--recovery-mb -5: want 0 (no recovery figures) or more"},
		{func(c *Config) { c.Seconds = 0 }, "--seconds 0: want a duration above 0"},
		{func(c *Config) { c.Seconds = math.Inf(1) }, "--seconds +Inf: want a duration above 0"},
		{func(c *Config) { c.WSRecords = 0 }, "--ws-records 0: want at least 1"},
		{func(c *Config) { c.ServerPID = -2 }, "--server-pid -2: want a pid, or 0 to find it"},
	} {
		dir := filepath.Join(t.TempDir(), "bench")
		cfg := DefaultConfig()
		cfg.Dir = dir
		cfg.MB, cfg.RecoveryMB, cfg.Seconds, cfg.NoExtras = 1, 0, 0.05, true
		c.edit(&cfg)
		var progress strings.Builder
		err := Run(context.Background(), cfg, io.Discard, &progress)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run: %v, want an error naming %q", err, c.want)
		}
		if progress.Len() != 0 {
			t.Errorf("%s: steps ran: %q", c.want, progress.String())
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: --dir made (%v)", c.want, err)
		}
	}
}
