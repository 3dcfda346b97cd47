package engine

import (
	"path/filepath"

	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/recovery"
)

// Recovery inspection and the crash lab, for the terminal UI: it reaches a
// partition's files only through these methods and SegmentFrames /
// SegmentBatch (files.go), never by path.

// Types of recovery and the crash lab the UI shows.
type (
	RecoveryReport = recovery.Report
	Snapshot       = recovery.Snapshot
	CrashKind      = crashlab.Kind
	CrashFault     = crashlab.Fault
	CrashResult    = crashlab.Result
)

// Snapshot reads the recovery checkpoint of topic's partition as stored.
func (e *Engine) Snapshot(topic string, partition int) (Snapshot, error) {
	dir, err := e.partitionFiles(topic, partition)
	if err != nil {
		return Snapshot{}, err
	}
	return recovery.ReadSnapshot(dir)
}

// CrashKinds lists the faults the crash lab can apply, in display order.
func CrashKinds() []CrashKind { return crashlab.Kinds() }

// ParseCrashFault parses a fault line ("cut:SEGMENT=0:747").
func ParseCrashFault(s string) (CrashFault, error) { return crashlab.ParseFault(s) }

// ResolveCrashFault fills the defaults of f (segment, position) from the
// files of topic's partition, reading batch headers only.
func (e *Engine) ResolveCrashFault(topic string, partition int, f CrashFault) (CrashFault, error) {
	dir, err := e.partitionFiles(topic, partition)
	if err != nil {
		return f, err
	}
	return crashlab.Resolve(dir, f)
}

// RunCrashLab applies f to a scratch copy of topic's partition and compares
// recovery of the healthy and the faulted copy. The partition's own files
// are only read.
func (e *Engine) RunCrashLab(topic string, partition int, f CrashFault) (*CrashResult, error) {
	dir, err := e.partitionFiles(topic, partition)
	if err != nil {
		return nil, err
	}
	opts := crashlab.Options{Topic: topic, Partition: partition}
	if rel, err := filepath.Rel(e.opts.Dir, dir); err == nil {
		opts.Label = rel
	}
	return crashlab.Run(dir, f, opts)
}
