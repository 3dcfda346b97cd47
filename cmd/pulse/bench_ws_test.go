package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// TestWSBenchFigures runs the websocket benchmark against an in-process
// server on loopback and checks it reports every figure. The figures
// themselves are not asserted (machines are shared): they are logged.
func TestWSBenchFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("the websocket benchmark moves ~60 MiB")
	}
	if addr := os.Getenv("PULSE_WS_BENCH_ADDR"); addr != "" {
		// Against a pulse serve run by hand, in another process.
		figs, err := runWSBench(context.Background(), addr, 256<<20, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range figs {
			t.Logf("%s = %.1f", k, v)
		}
		return
	}
	eng, err := engine.Open(engine.DefaultOptions(filepath.Join(t.TempDir(), "data")))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, stop, err := startAPI(ctx, eng, apiConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	figs, err := runWSBench(ctx, addr, 16<<20, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ws_produce_batch100_rps", "ws_produce_batch100_mbps", "ws_produce_binary100_rps", "ws_produce_binary100_mbps", "ws_produce_single_rps", "ws_e2e_p50_us", "ws_e2e_p99_us"} {
		v, ok := figs[k]
		if !ok || v <= 0 {
			t.Errorf("figure %s = %v (present %v)", k, v, ok)
		}
		t.Logf("%s = %.1f", k, v)
	}
	if figs["ws_e2e_p99_us"] < figs["ws_e2e_p50_us"] {
		t.Errorf("p99 %v below p50 %v", figs["ws_e2e_p99_us"], figs["ws_e2e_p50_us"])
	}
	// The benchmark cleans up after itself.
	ts, err := eng.Topics()
	if err != nil || len(ts) != 0 {
		t.Fatalf("topics left behind: %v %v", ts, err)
	}
}
