package main

import (
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/metrics"
)

// openMetered opens the engine on dir with a fresh metrics registry as its
// observer (fsync times, commit sizes); startAPI serves the registry at
// /metrics when apiConfig.Metrics is set.
func openMetered(dir string) (*engine.Engine, *metrics.Metrics, error) {
	m := metrics.New()
	opts := engine.DefaultOptions(dir)
	opts.Observer = m
	e, err := engine.Open(opts)
	return e, m, err
}
