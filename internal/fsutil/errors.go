package fsutil

import "errors"

// Errors returned by fsutil, matched with errors.Is.
var (
	// ErrLocked: Lock found the directory's LOCK file held by another
	// process (or by another Lock in this one). The wrapping error names
	// the directory and, when it could be read, the holder's pid.
	ErrLocked = errors.New("data directory is locked by another pulse process")
)
