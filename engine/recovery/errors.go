package recovery

import "errors"

// Errors of the recovery package, matched with errors.Is.
//
// Reading the two small state files of a partition:
var (
	// ErrBadSnapshot: the snapshot file exists but is not a valid checkpoint
	// (wrong length, magic, version, reserved bits or checksum, or values that
	// cannot describe a log). Run treats it as missing and full-scans.
	ErrBadSnapshot = errors.New("invalid recovery snapshot")

	// ErrBadHWM: the hwm file exists but is not 8 bytes holding a
	// non-negative offset. Run treats it as missing and says so in the report.
	ErrBadHWM = errors.New("invalid hwm file")

	// ErrBadManifest: the manifest file exists but is not a valid segment
	// record (torn, checksum, unknown version or fields, bases not
	// ascending). Run rebuilds it from the segment files found and says so.
	ErrBadManifest = errors.New("invalid segment manifest")
)

// Calling Run:
var (
	// ErrInvalidOptions: an Options field holds a value Run does not know.
	ErrInvalidOptions = errors.New("invalid recovery options")
)

// A missing snapshot or hwm file is reported by ReadSnapshot and ReadHWM as
// an error matching fs.ErrNotExist.
