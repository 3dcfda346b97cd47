package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/offline"
)

func newCrashlabCmd() *cobra.Command {
	var cfg offline.CrashlabConfig
	kinds := crashlab.Kinds()
	var help strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&help, "  %-18s %s\n", k, k.Describe())
	}
	cmd := &cobra.Command{
		Use:   "crashlab --topic T --partition P --fault F",
		Short: "Apply a crash fault to a scratch copy of a partition and show what recovery does",
		Long: `Crashlab copies one partition directory to a scratch directory, damages the
copy with one fault, runs crash recovery on it and on an untouched copy, and
prints both recovery reports side by side with what changed: the records that
survive, what was truncated, what reads now skip as corrupt or keep hidden.

The original files are only read (copied), never opened for writing, so it is
safe next to a running pulse.

Faults (SEGMENT=BASE picks a segment; default: the last one holding data):
` + help.String() + `
Forms: cut[:SEGMENT=BASE][:N]  flip[:SEGMENT=BASE][:POS:BIT]  index:delete[:SEGMENT=BASE]
cut defaults N to the middle of the last batch; flip defaults to the middle of
the first batch's records, bit 0.`,
		Example: `  pulse crashlab --topic orders --partition 0 --fault cut
  pulse crashlab --topic orders --partition 0 --fault flip:4096:3 --json
  pulse crashlab --topic users --fault compaction-crash`,
		Args: cobra.NoArgs,
	}
	data := addDataFlag(cmd)
	cmd.Flags().StringVar(&cfg.Topic, "topic", "", "topic of the partition (required)")
	cmd.Flags().IntVar(&cfg.Partition, "partition", 0, "partition number")
	cmd.Flags().StringVar(&cfg.Fault, "fault", "", "fault to apply, e.g. cut:1234, flip:4096:3, index:delete (required)")
	cmd.Flags().BoolVar(&cfg.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar((*string)(&cfg.Options.HiddenTail), "hidden-tail", string(recovery.HiddenTailExpose), "hidden-tail policy recovery uses: expose or hide")
	cmd.Flags().IntVar(&cfg.Options.IndexIntervalBytes, "index-interval-bytes", recovery.DefaultIndexIntervalBytes, "sparse index spacing the log was written with")
	cmd.Flags().StringVar(&cfg.Options.ScratchDir, "scratch", "", "directory for the scratch copies (default the system temp dir)")
	cmd.Flags().BoolVar(&cfg.Options.Keep, "keep", false, "keep the scratch copies (their path is printed)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.Data = *data
		return offline.Crashlab(cmd.OutOrStdout(), cfg)
	}
	return cmd
}
