package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/internal/bench"
)

func newBenchCmd() *cobra.Command {
	cfg := bench.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure produce, consume and recovery throughput on this disk",
		Long: `Opens a fresh engine in a temporary directory (or --dir, which must be
empty or absent) and prints figures, each measured in this run: the disk's own
write bandwidth and fsync rate first, so the engine's figures can be read as
ratios of what the disk allows.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg.WS != "" {
				cfg.Dial = (&clientFlags{server: cfg.WS, flag: "--ws", token: os.Getenv("PULSE_TOKEN")}).dial
			}
			return bench.Run(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Dir, "dir", cfg.Dir, "directory to benchmark in (default: a temporary directory)")
	f.BoolVar(&cfg.JSON, "json", cfg.JSON, "print one JSON object")
	f.StringVar(&cfg.WS, "ws", cfg.WS, "also benchmark the websocket API of the pulse running at this address (host:port)")
	f.IntVar(&cfg.MB, "mb", cfg.MB, "MiB appended by the throughput runs")
	f.IntVar(&cfg.RecoveryMB, "recovery-mb", cfg.RecoveryMB, "MiB in the partition used for the recovery figures (0 skips them)")
	f.Float64Var(&cfg.Seconds, "seconds", cfg.Seconds, "duration of each every-write run")
	f.IntVar(&cfg.WSRecords, "ws-records", cfg.WSRecords, "records of the single-record and 1-vs-100-topics websocket runs (a tenth of it: fan-out and end-to-end runs)")
	f.IntVar(&cfg.ServerPID, "server-pid", cfg.ServerPID, "pid of the pulse serve behind --ws, for its CPU and i/o figures (default: the process listening on its port)")
	f.StringVar(&cfg.WSSteps, "ws-steps", cfg.WSSteps, "comma-separated websocket steps to run, of "+strings.Join(bench.WSSteps(), ",")+" (default: all)")
	f.BoolVar(&cfg.NoExtras, "no-extras", cfg.NoExtras, "skip the compaction figures (the Kafka listener's run only with --kafka-listener, then also with this flag)")
	f.MarkHidden("no-extras")
	f.BoolVar(&cfg.Kafka, "kafka-listener", cfg.Kafka, "also benchmark the Kafka listener (in this process, franz-go over loopback)")
	return cmd
}
