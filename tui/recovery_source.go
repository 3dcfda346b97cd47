package tui

import "github.com/pulselog/pulse/engine"

// Optional engine views of the recovery inspector (recovery.go), the frame
// browser (frames.go) and the crash lab (crashlab.go). Like the ones in
// source.go, the UI looks for them with a type assertion on the Source and
// says "not available" where one is missing.
//
// The frame browser and hex view read segment files through SegmentFiles
// (frames.go), the crash lab through CrashLab (crashlab.go), the snapshot
// panel through SnapshotReader: the UI opens no file of a data dir itself.

// recoveryReporter returns the recovery report of every partition from the
// last open, sorted by topic and partition (the engine facade's
// RecoveryReports).
type recoveryReporter interface {
	RecoveryReports() []engine.RecoveryReport
}

// HiddenTailExposer makes the hidden tail of a partition visible now: it
// fsyncs the records between the HWM and the log end and moves the HWM to
// the log end (what recovery's "expose" policy does at open). It returns
// when the HWM moved, or with an error and nothing changed.
type HiddenTailExposer interface {
	ExposeHiddenTail(topic string, partition int) error
}

// SnapshotReader reads a partition's recovery checkpoint as stored (the
// segments screen's snapshot panel).
type SnapshotReader interface {
	Snapshot(topic string, partition int) (engine.Snapshot, error)
}
