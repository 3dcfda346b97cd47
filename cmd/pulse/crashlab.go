package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/recovery"
)

// crashlabConfig is what one `pulse crashlab` run needs.
type crashlabConfig struct {
	data      string
	topic     string
	partition int
	fault     string
	asJSON    bool
	opts      crashlab.Options
}

func newCrashlabCmd() *cobra.Command {
	var cfg crashlabConfig
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
	cmd.Flags().StringVar(&cfg.topic, "topic", "", "topic of the partition (required)")
	cmd.Flags().IntVar(&cfg.partition, "partition", 0, "partition number")
	cmd.Flags().StringVar(&cfg.fault, "fault", "", "fault to apply, e.g. cut:1234, flip:4096:3, index:delete (required)")
	cmd.Flags().BoolVar(&cfg.asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar((*string)(&cfg.opts.HiddenTail), "hidden-tail", string(recovery.HiddenTailExpose), "hidden-tail policy recovery uses: expose or hide")
	cmd.Flags().IntVar(&cfg.opts.IndexIntervalBytes, "index-interval-bytes", recovery.DefaultIndexIntervalBytes, "sparse index spacing the log was written with")
	cmd.Flags().StringVar(&cfg.opts.ScratchDir, "scratch", "", "directory for the scratch copies (default the system temp dir)")
	cmd.Flags().BoolVar(&cfg.opts.Keep, "keep", false, "keep the scratch copies (their path is printed)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.data = *data
		return runCrashlab(cmd.OutOrStdout(), cfg)
	}
	return cmd
}

// partitionPath is where partition p of topic lives in a data directory,
// and the same path relative to it.
func partitionPath(data, topic string, p int) (abs, rel string) {
	abs = crashlab.PartitionDir(data, topic, p)
	rel, err := filepath.Rel(data, abs)
	if err != nil {
		rel = abs
	}
	return abs, rel
}

func runCrashlab(w io.Writer, cfg crashlabConfig) error {
	if cfg.topic == "" {
		return fmt.Errorf("crashlab: --topic is required")
	}
	if err := engine.ValidateTopicName(cfg.topic); err != nil {
		return fmt.Errorf("crashlab: --topic: %w", err)
	}
	if cfg.partition < 0 {
		return fmt.Errorf("crashlab: --partition %d: must be 0 or more", cfg.partition)
	}
	if cfg.fault == "" {
		return fmt.Errorf("crashlab: --fault is required (one of %s)", kindNames())
	}
	f, err := crashlab.ParseFault(cfg.fault)
	if err != nil {
		return fmt.Errorf("crashlab: --fault: %w", err)
	}
	dir, rel := partitionPath(cfg.data, cfg.topic, cfg.partition)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("crashlab: topic %s partition %d: no directory %s in data dir %s", cfg.topic, cfg.partition, rel, cfg.data)
	}
	opts := cfg.opts
	opts.Topic, opts.Partition, opts.Label = cfg.topic, cfg.partition, rel
	res, err := crashlab.Run(dir, f, opts)
	if err != nil {
		return err
	}
	if cfg.asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return renderCrashlab(w, res)
}

func renderCrashlab(w io.Writer, res *crashlab.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "crash lab: %s, fault %s\n", res.Partition, res.FaultSpec)
	fmt.Fprintf(&b, "applied:   %s\n\n", res.Applied)
	for _, l := range crashlab.SideBySide("HEALTHY COPY", res.Healthy.Lines(), "FAULTED COPY", res.Faulted.Lines(), 0) {
		b.WriteString(l + "\n")
	}
	b.WriteString("\nwhat changed:\n")
	for _, l := range res.Findings {
		b.WriteString("  - " + l + "\n")
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", res.Verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

func kindNames() string {
	var s []string
	for _, k := range crashlab.Kinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}
