package plog

import "errors"

// Errors returned by a partition log, matched with errors.Is.
var (
	// Appending.
	ErrClosed         = errors.New("partition log is closed")
	ErrInvalid        = errors.New("invalid append")
	ErrRecordTooLarge = errors.New("record too large")

	// ErrFailed wraps a write, fsync or verification failure. The appends
	// waiting on it fail with it; the log rewinds to its last durable
	// position, and the next append tries the disk again (Failure says
	// why until one succeeds). Reads keep working throughout.
	ErrFailed = errors.New("partition log failed")
	// ErrVerify marks a batch whose re-read after fsync did not match.
	ErrVerify = errors.New("written batch failed verification")

	// Changing options while the log runs (SetSegmentMaxBytes, SetSyncMode).
	ErrInvalidOption = errors.New("invalid option")

	// Reading.
	ErrOffsetOutOfRange = errors.New("offset out of range")

	// Maintenance passes (maintenance.go).

	// ErrNoSegment: the sealed segment a hook names is not in the log (a
	// concurrent change removed it, or it never existed).
	ErrNoSegment = errors.New("no such sealed segment")
	// ErrActiveSegment: a hook was asked to change the active segment,
	// which only the writer touches.
	ErrActiveSegment = errors.New("the active segment is never trimmed or rewritten")
	// ErrNotOldest: TrimOldest was given a segment that is not the oldest.
	ErrNotOldest = errors.New("segment is not the oldest")
	// ErrPassEnded: a hook was called on a Pass after End.
	ErrPassEnded = errors.New("maintenance pass has ended")
)
