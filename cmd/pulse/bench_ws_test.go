package main

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wsBenchFigures are the figures `pulse bench --ws` prints, each as a
// number on Linux.
var wsBenchFigures = []string{
	"fdatasync_p50_us", "fdatasync_p99_us", "append_interval_mbps",
	"append_every_write_1p_rps", "append_every_write_64p_rps",
	"ws_produce_batch100_rps", "ws_produce_batch100_mbps", "ws_produce_batch100_cpu_us_per_rec",
	"ws_produce_binary100_rps", "ws_produce_binary100_mbps", "ws_produce_binary100_cpu_us_per_rec",
	"ws_consume_rps", "ws_consume_server_cpu_us_per_rec", "ws_consume_client_cpu_us_per_rec", "ws_consume_cpu_us_per_rec",
	"ws_consume_binary_rps", "ws_consume_binary_server_cpu_us_per_rec", "ws_consume_binary_client_cpu_us_per_rec", "ws_consume_binary_cpu_us_per_rec",
	"ws_produce_single_rps", "ws_produce_single_server_cpu_us_per_rec", "ws_produce_single_client_cpu_us_per_rec", "ws_produce_single_cpu_us_per_rec",
	"ws_produce_topics1_rps", "ws_produce_topics100_rps", "ws_produce_topics1_cpu_us_per_rec", "ws_produce_topics100_cpu_us_per_rec",
	"ws_fanout1_per_sub_rps", "ws_fanout8_per_sub_rps", "ws_fanout64_per_sub_rps",
	"ws_fanout1_delivered_rps", "ws_fanout8_delivered_rps", "ws_fanout64_delivered_rps",
	"ws_fanout1_produce_rps", "ws_fanout8_produce_rps", "ws_fanout64_produce_rps",
	"ws_fanout1_server_cpu_us_per_delivery", "ws_fanout8_server_cpu_us_per_delivery", "ws_fanout64_server_cpu_us_per_delivery",
	"ws_e2e_interval_p50_us", "ws_e2e_interval_p99_us", "ws_e2e_interval_disk_bytes_per_payload_byte",
	"ws_e2e_every_write_p50_us", "ws_e2e_every_write_p99_us", "ws_e2e_every_write_disk_bytes_per_payload_byte",
	"ws_rtt_p50_us", "ws_rtt_p99_us", "cpus", "zstd_1core_mbps",
	"cold_restart_store_mb",
}

// wsBenchRatios are the ratio lines printed under the figures.
var wsBenchRatios = []string{
	"every_write_64p / 1p", "append_interval_zstd / append_interval",
	"ws topics100 / topics1", "ws fanout64 / fanout1 (per subscriber)", "ws fanout64 / fanout1 (produce)",
	"ws e2e every-write p50 / fdatasync p50", "ws e2e every-write p99 / fdatasync p99",
	"cpus x zstd_1core / append_interval", "(fdatasync + ws rtt) / fdatasync, p50",
}

// TestBenchWSAgainstServe runs `pulse bench --ws` with small counts against
// a `pulse serve` process and checks that every figure is printed with a
// positive, finite number. The figures themselves are not asserted
// (machines are shared): they are logged.
func TestBenchWSAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every bench step against a pulse serve")
	}
	srv := startServe(t, t.TempDir())
	cmd := exec.Command(pulseBinary(t), "bench", "--ws", srv.addr, "--dir", t.TempDir(),
		"--mb", "2", "--recovery-mb", "4", "--seconds", "0.2", "--ws-records", "2000", "--no-extras")
	var errb strings.Builder
	cmd.Stderr = &errb
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("pulse bench did not finish; stderr %s", errb.String())
	}
	if err != nil {
		t.Fatalf("pulse bench: %v\nstdout %s\nstderr %s", err, out, errb.String())
	}
	t.Logf("pulse bench output:\n%s", out)
	values, notes := map[string]string{}, map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if name, rest, ok := strings.Cut(line, "  "); ok {
			name, rest = strings.TrimSpace(name), strings.TrimSpace(rest)
			if why, ok := strings.CutPrefix(rest, "not measured"); ok {
				notes[name] = why
				continue
			}
			values[name] = strings.Fields(rest)[0]
		}
	}
	positive := func(name string) {
		t.Helper()
		s, ok := values[name]
		if !ok {
			t.Errorf("no figure %s printed (not measured: %q)", name, notes[name])
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("figure %s = %q, want a positive finite number", name, s)
		}
	}
	for _, name := range append(wsBenchFigures, wsBenchRatios...) {
		positive(name)
	}
	// The cold-restart figures need root, to drop the page cache.
	for _, name := range []string{"cold_restart_read_mb", "cold_restart_read_fraction"} {
		if os.Geteuid() == 0 {
			positive(name)
		} else if !strings.Contains(notes[name], "root") {
			t.Errorf("%s: neither measured nor explained: %q", name, notes[name])
		}
	}
	// The benchmark deletes the topics it created.
	if ts := mustPulse(t, "", "topics", "list", "--server", srv.addr); strings.Contains(ts, "ws-bench-") {
		t.Errorf("topics left behind:\n%s", ts)
	}
}

// TestBenchWSSteps runs one websocket step alone, as for a CPU profile of
// it, and refuses an unknown step before measuring anything.
func TestBenchWSSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bench's disk steps against a pulse serve")
	}
	srv := startServe(t, t.TempDir())
	_, errOut, err := pulse(t, "", "bench", "--ws", srv.addr, "--ws-steps", "single,sing", "--dir", t.TempDir())
	if err == nil || !strings.Contains(errOut, `unknown step "sing"`) || strings.Contains(errOut, "fsync rate") {
		t.Fatalf("bench with an unknown step: %v, stderr %s", err, errOut)
	}
	out := mustPulse(t, "", "bench", "--ws", srv.addr, "--ws-steps", "consume", "--dir", t.TempDir(),
		"--mb", "1", "--recovery-mb", "0", "--seconds", "0.2", "--no-extras")
	if !strings.Contains(out, "ws_consume_server_cpu_us_per_rec") || !strings.Contains(out, "ws_consume_binary_server_cpu_us_per_rec") || strings.Contains(out, "ws_produce_single_rps") || strings.Contains(out, "ws_produce_batch100_rps") {
		t.Errorf("bench --ws-steps consume printed:\n%s", out)
	}
}
