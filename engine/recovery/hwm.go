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
	if v < 0 {
		return nil, fmt.Errorf("%w: negative high-watermark %d", ErrBadHWM, v)
	}
	b := make([]byte, HWMLen)
	binary.BigEndian.PutUint64(b, uint64(v))
	return b, nil
}

// DecodeHWM parses an hwm file image: exactly 8 bytes holding a
// non-negative offset. Errors wrap ErrBadHWM.
func DecodeHWM(b []byte) (int64, error) {
	if len(b) != HWMLen {
		return 0, fmt.Errorf("%w: %d bytes, want %d", ErrBadHWM, len(b), HWMLen)
	}
	v := int64(binary.BigEndian.Uint64(b))
	if v < 0 {
		return 0, fmt.Errorf("%w: negative value %d", ErrBadHWM, v)
	}
	return v, nil
}

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
