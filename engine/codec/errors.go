package codec

import (
	"errors"
	"fmt"
)

// Errors returned by the codec, matched with errors.Is. The codec wraps them
// with detail ("codec: corrupt batch: record 3: offsetDelta 9 out of range");
// packages that know where the bytes came from (segment, recovery) wrap them
// again in a *CorruptError carrying the file, byte position and offset.
var (
	// Decoding bytes read from disk or from a peer.

	// ErrTorn: the input ends before the batch does (shorter than the
	// 52-byte header, or than header + batchLen). At the tail of a segment
	// this is what a crash in the middle of a write leaves behind.
	ErrTorn = errors.New("torn batch")
	// ErrChecksum: the stored crc32c does not match bytes 8..end.
	ErrChecksum = errors.New("batch checksum mismatch")
	// ErrCorrupt: the bytes are complete but not a valid batch: bad magic,
	// version or flags, a records section that does not hold exactly
	// recordCount well-formed records, an offsetDelta out of range, a bad
	// zstd frame.
	ErrCorrupt = errors.New("corrupt batch")
	// ErrTooLarge: a batch (or its decompressed records section) exceeds
	// MaxBatchBytes. On decode it is reported together with ErrCorrupt, so
	// both errors.Is(err, ErrCorrupt) and errors.Is(err, ErrTooLarge) hold.
	ErrTooLarge = errors.New("batch too large")

	// Encoding records supplied by the caller.

	// ErrInvalidBatch: AppendBatch was given records it cannot encode (no
	// records, sparse offsets not strictly increasing, a timestamp too far
	// from the first one for an int32 delta, ...). Nothing is appended.
	ErrInvalidBatch = errors.New("invalid batch input")
)

// CorruptError says where corrupt or torn batch bytes were found. The codec
// never returns it itself; segment and recovery wrap the codec's sentinel
// errors in it. Match the cause with errors.Is(err, ErrTorn) and so on, and
// the location with errors.As(err, &ce).
type CorruptError struct {
	Path     string // file holding the batch
	Position int64  // byte position of the batch (its header) in the file
	Offset   int64  // base offset of the batch, or -1 when it could not be read
	Err      error  // cause, wrapping one of ErrTorn, ErrChecksum, ErrCorrupt, ErrTooLarge
}

// Error names the file, the byte position and (when known) the offset.
func (e *CorruptError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: byte position %d: %v", e.Path, e.Position, e.Err)
	}
	return fmt.Sprintf("%s: byte position %d (offset %d): %v", e.Path, e.Position, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *CorruptError) Unwrap() error { return e.Err }

// corruptf wraps ErrCorrupt with a formatted detail.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("codec: %w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// tornf wraps ErrTorn with a formatted detail.
func tornf(format string, args ...any) error {
	return fmt.Errorf("codec: %w: %s", ErrTorn, fmt.Sprintf(format, args...))
}

// invalidf wraps ErrInvalidBatch with a formatted detail.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("codec: %w: %s", ErrInvalidBatch, fmt.Sprintf(format, args...))
}
