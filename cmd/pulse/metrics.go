package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/metrics"
)

// engineLimits are the engine's caps a command line may change.
type engineLimits struct {
	maxTopics, maxPartitions int
}

// addLimitFlags adds --max-topics and --max-partitions to cmd.
func addLimitFlags(cmd *cobra.Command) *engineLimits {
	var l engineLimits
	f := cmd.Flags()
	f.IntVar(&l.maxTopics, "max-topics", engine.DefaultMaxTopics, "most topics the data dir may hold (creating or auto-creating one more is refused: too_many_topics)")
	f.IntVar(&l.maxPartitions, "max-partitions", engine.DefaultMaxPartitions, "most partitions of all topics together")
	return &l
}

// check refuses caps no data dir can be served under, naming the flag (the
// engine would take 0 for its default, and a negative cap refuses every
// topic).
func (l *engineLimits) check() error {
	if l.maxTopics < 1 {
		return fmt.Errorf("--max-topics %d: want at least 1", l.maxTopics)
	}
	if l.maxPartitions < 1 {
		return fmt.Errorf("--max-partitions %d: want at least 1", l.maxPartitions)
	}
	return nil
}

// openMetered opens the engine on dir with a fresh metrics registry as its
// observer (fsync times, commit sizes; startAPI serves the registry at
// /metrics when apiConfig.Metrics is set), under the caps of lim (nil: the
// defaults).
func openMetered(dir string, lim *engineLimits) (*engine.Engine, *metrics.Metrics, error) {
	m := metrics.New()
	opts := engine.DefaultOptions(dir)
	opts.Observer = m
	if lim != nil {
		opts.MaxTopics, opts.MaxPartitions = lim.maxTopics, lim.maxPartitions
	}
	e, err := engine.Open(opts)
	return e, m, err
}
