package tui

import "github.com/pulselog/pulse/engine/recovery"

// Optional engine views of the recovery inspector (recovery.go), the frame
// browser (frames.go) and the crash lab (crashlab.go). Like the ones in
// source.go, the UI looks for them with a type assertion on the Source and
// says "not available" where one is missing.
//
// The frame browser and the crash lab need no engine method: they read
// segment files under Source.Dir() read-only (the crash lab copies them to
// a scratch directory first).

// recoveryReporter returns the recovery report of every partition from the
// last open, sorted by topic and partition (the engine facade's
// RecoveryReports).
type recoveryReporter interface {
	RecoveryReports() []recovery.Report
}

// HiddenTailExposer makes the hidden tail of a partition visible now: it
// fsyncs the records between the HWM and the log end and moves the HWM to
// the log end (what recovery's "expose" policy does at open). It returns
// when the HWM moved, or with an error and nothing changed.
type HiddenTailExposer interface {
	ExposeHiddenTail(topic string, partition int) error
}
