package crashlab

import "errors"

// Errors of the crash lab, matched with errors.Is.
var (
	// ErrBadFault: a fault string does not parse ("cut:abc", "flip:12",
	// an unknown kind, a bit outside 0..7). Nothing is copied.
	ErrBadFault = errors.New("bad fault")
	// ErrNotApplicable: the fault cannot be applied to this partition (a
	// position past the end of the segment, a cut of an empty log, a
	// compaction crash without a sealed segment, a segment that does not
	// exist). The original partition is never touched either way.
	ErrNotApplicable = errors.New("fault not applicable to this partition")
)
