package recovery

import (
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"

	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
)

// HWMFile is the name of the persisted high-watermark inside a partition
// directory: 8 bytes, big-endian, the exclusive bound of what consumers may see.
const (
	HWMFile = layout.HWMFile
	HWMLen  = 8
)

// EncodeHWM returns the 8-byte file image of v.
func EncodeHWM(v int64) ([]byte, error) {
	if v < 0 || v > MaxPersistedOffset {
		return nil, fmt.Errorf("%w: high-watermark %d outside [0, %d]", ErrBadHWM, v, int64(MaxPersistedOffset))
	}
	b := make([]byte, HWMLen)
	binary.BigEndian.PutUint64(b, uint64(v))
	return b, nil
}

// DecodeHWM parses an hwm file image: exactly 8 bytes holding a
// offset in [0, MaxPersistedOffset]. Errors wrap ErrBadHWM.
func DecodeHWM(b []byte) (int64, error) {
	if len(b) != HWMLen {
		return 0, fmt.Errorf("%w: %d bytes, want %d", ErrBadHWM, len(b), HWMLen)
	}
	v := int64(binary.BigEndian.Uint64(b))
	if v < 0 {
		return 0, fmt.Errorf("%w: negative value %d", ErrBadHWM, v)
	}
	if v > MaxPersistedOffset {
		return 0, fmt.Errorf("%w: value %d past the largest offset a log reaches (%d)", ErrBadHWM, v, int64(MaxPersistedOffset))
	}
	return v, nil
}

// MaxPersistedOffset bounds every offset an hwm file or a snapshot may hold
// (2^62: ten million records a second would take 14,000 years to get
// there). A value past it was never written by Pulse (a damaged or hostile
// file, such as all ones): it is unreadable, never a promise, since a log
// end near math.MaxInt64 would leave no offset to append at.
const MaxPersistedOffset = 1 << 62

// WriteHWM replaces dir/hwm atomically and durably (temp file, fsync,
// rename, directory fsync).
func WriteHWM(dir string, v int64) error {
	b, err := EncodeHWM(v)
	if err != nil {
		return fmt.Errorf("write hwm in %s: %w", dir, err)
	}
	if err := fsutil.WriteFileAtomic(dir, HWMFile, b); err != nil {
		return fmt.Errorf("write hwm: %w", err)
	}
	return nil
}

// ReadHWM reads dir/hwm. A missing file gives an error matching
// fs.ErrNotExist; garbage or a wrong length an error matching ErrBadHWM.
func ReadHWM(dir string) (int64, error) {
	p := filepath.Join(dir, HWMFile)
	b, err := readSmallFile(p, HWMLen)
	if err != nil {
		return 0, err
	}
	v, err := DecodeHWM(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

func isEOF(err error) bool { return err == io.EOF }
