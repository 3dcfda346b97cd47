package log

import "errors"

// Errors returned by a partition log, matched with errors.Is.
var (
	// Appending.
	ErrClosed         = errors.New("partition log is closed")
	ErrInvalid        = errors.New("invalid append")
	ErrRecordTooLarge = errors.New("record too large")

	// ErrFailed wraps the first write, fsync or verification failure; the
	// log refuses appends from then on (reads keep working).
	ErrFailed = errors.New("partition log failed")
	// ErrVerify marks a batch whose re-read after fsync did not match.
	ErrVerify = errors.New("written batch failed verification")

	// Reading.
	ErrOffsetOutOfRange = errors.New("offset out of range")
)
