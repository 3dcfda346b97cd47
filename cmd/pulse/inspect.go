package main

import (
	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/offline"
)

func newInspectCmd() *cobra.Command {
	var asJSON bool
	var opts recovery.Options
	cmd := &cobra.Command{
		Use:   "inspect [DIR]",
		Short: "Show what crash recovery would do to every partition, changing nothing",
		Long: `Inspect runs crash recovery read-only on every partition of a data directory
(or of DIR: a data directory, a topic directory or one partition directory)
and prints each partition's recovery report: the path recovery would take,
torn tails it would truncate, corrupt ranges, indexes it would rebuild, temp
files it would remove, and the high-watermark the log would open with. No
file is written, truncated, removed or fsynced, so it is safe next to a
running pulse (whose in-flight writes may then show as torn tails).`,
		Args: cobra.MaximumNArgs(1),
	}
	data := addDataFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as a JSON array")
	cmd.Flags().StringVar((*string)(&opts.HiddenTail), "hidden-tail", string(recovery.HiddenTailExpose), "hidden-tail policy to evaluate: expose or hide")
	cmd.Flags().IntVar(&opts.IndexIntervalBytes, "index-interval-bytes", recovery.DefaultIndexIntervalBytes, "sparse index spacing the log was written with")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root := *data
		if len(args) == 1 {
			root = args[0]
		}
		return missingPath("inspect", root, wantDir, offline.Inspect(cmd.OutOrStdout(), root, opts, asJSON))
	}
	return cmd
}
