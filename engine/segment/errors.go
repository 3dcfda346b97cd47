package segment

import (
	"errors"

	"github.com/pulselog/pulse/internal/layout"
)

// Errors returned by the segment package, matched with errors.Is. Corrupt or
// torn batch bytes are reported as *codec.CorruptError wrapping the codec's
// sentinels (codec.ErrTorn, codec.ErrChecksum, codec.ErrCorrupt).
var (
	// Opening and naming.

	// ErrBadName: a file name is not <20-digit base offset>.log / .index.
	ErrBadName = layout.ErrBadName

	// The sparse index.

	// ErrBadIndex: index bytes or entries are malformed: a trailing partial
	// entry, offsets or positions not strictly increasing, a position past
	// the end of the log file.
	ErrBadIndex = errors.New("bad segment index")

	// Writing.

	// ErrFull: the batch would put a position or relative offset past what
	// the 32-bit index entries can hold; the caller must roll a new segment.
	ErrFull = errors.New("segment full")
	// ErrBadAppend: the batch cannot go into this segment: its bytes do not
	// match its header, or its base offset is below the segment's base or
	// not above the last indexed one. Nothing was written.
	ErrBadAppend = errors.New("batch cannot be appended to this segment")
	// ErrReadOnly: a write on a segment opened with OpenReadOnly.
	ErrReadOnly = errors.New("segment is read-only")
	// ErrClosed: any operation after Close or Remove.
	ErrClosed = errors.New("segment is closed")
)
