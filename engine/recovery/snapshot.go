package recovery

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
)

// Snapshot file layout (seed 002 §8). All integers big-endian.
//
//	0  magic 0x53 ('S')
//	1  version 0x01
//	2  reserved u16 (zero)
//	4  crc32c u32 (Castagnoli, over bytes 8..40)
//	8  leo i64         log end offset
//	16 activeBase i64  base offset of the active segment
//	24 activeSize i64  valid byte length of the active segment (a batch boundary)
//	32 activeNext i64  next offset of the active segment; equals leo
const (
	SnapshotFile    = layout.SnapshotFile // file name inside a partition directory
	SnapshotLen     = 40                  // bytes
	snapshotMagic   = 0x53
	snapshotVersion = 0x01

	snapOffMagic      = 0
	snapOffVersion    = 1
	snapOffReserved   = 2
	snapOffCRC        = 4
	snapOffLEO        = 8
	snapOffActiveBase = 16
	snapOffActiveSize = 24
	snapOffActiveNext = 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot is a partition's recovery checkpoint: where the log ended and how
// many bytes of the active segment were valid when it was written. It is
// written after every rotation, after a trim and on clean shutdown, and lets
// recovery skip scanning everything but the active segment's growth since.
type Snapshot struct {
	LEO        int64 `json:"leo"`
	ActiveBase int64 `json:"active_base"`
	ActiveSize int64 `json:"active_size"`
	ActiveNext int64 `json:"active_next"`
}

// Validate checks that s can describe a log: no negative values, the active
// segment starts at or below the log end, and ActiveNext == LEO.
func (s Snapshot) Validate() error {
	switch {
	case s.LEO < 0 || s.ActiveBase < 0 || s.ActiveSize < 0 || s.ActiveNext < 0:
		return fmt.Errorf("%w: negative value in %+v", ErrBadSnapshot, s)
	case s.LEO > MaxPersistedOffset:
		return fmt.Errorf("%w: leo %d past the largest offset a log reaches (%d)", ErrBadSnapshot, s.LEO, int64(MaxPersistedOffset))
	case s.ActiveNext != s.LEO:
		return fmt.Errorf("%w: active next %d != leo %d", ErrBadSnapshot, s.ActiveNext, s.LEO)
	case s.ActiveBase > s.LEO:
		return fmt.Errorf("%w: active base %d above leo %d", ErrBadSnapshot, s.ActiveBase, s.LEO)
	case s.ActiveSize == 0 && s.LEO != s.ActiveBase:
		return fmt.Errorf("%w: empty active segment at %d but leo %d", ErrBadSnapshot, s.ActiveBase, s.LEO)
	case s.ActiveSize > 0 && s.LEO == s.ActiveBase:
		return fmt.Errorf("%w: %d bytes in the active segment but no offsets past its base %d", ErrBadSnapshot, s.ActiveSize, s.ActiveBase)
	}
	return nil
}

// EncodeSnapshot returns the 40-byte file image of s. It refuses a snapshot
// that DecodeSnapshot would refuse.
func EncodeSnapshot(s Snapshot) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	b := make([]byte, SnapshotLen)
	b[snapOffMagic] = snapshotMagic
	b[snapOffVersion] = snapshotVersion
	binary.BigEndian.PutUint64(b[snapOffLEO:], uint64(s.LEO))
	binary.BigEndian.PutUint64(b[snapOffActiveBase:], uint64(s.ActiveBase))
	binary.BigEndian.PutUint64(b[snapOffActiveSize:], uint64(s.ActiveSize))
	binary.BigEndian.PutUint64(b[snapOffActiveNext:], uint64(s.ActiveNext))
	binary.BigEndian.PutUint32(b[snapOffCRC:], crc32c(b[snapOffLEO:]))
	return b, nil
}

// DecodeSnapshot parses a snapshot file image strictly: exact length, magic,
// version, zero reserved bits, checksum, and values that pass Validate.
// Errors wrap ErrBadSnapshot.
func DecodeSnapshot(b []byte) (Snapshot, error) {
	if len(b) != SnapshotLen {
		return Snapshot{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadSnapshot, len(b), SnapshotLen)
	}
	if b[snapOffMagic] != snapshotMagic {
		return Snapshot{}, fmt.Errorf("%w: magic 0x%02x, want 0x%02x", ErrBadSnapshot, b[snapOffMagic], snapshotMagic)
	}
	if b[snapOffVersion] != snapshotVersion {
		return Snapshot{}, fmt.Errorf("%w: version %d, want %d", ErrBadSnapshot, b[snapOffVersion], snapshotVersion)
	}
	if r := binary.BigEndian.Uint16(b[snapOffReserved:]); r != 0 {
		return Snapshot{}, fmt.Errorf("%w: reserved bits 0x%04x set", ErrBadSnapshot, r)
	}
	want := binary.BigEndian.Uint32(b[snapOffCRC:])
	if got := crc32c(b[snapOffLEO:]); got != want {
		return Snapshot{}, fmt.Errorf("%w: crc32c 0x%08x, stored 0x%08x", ErrBadSnapshot, got, want)
	}
	s := Snapshot{
		LEO:        int64(binary.BigEndian.Uint64(b[snapOffLEO:])),
		ActiveBase: int64(binary.BigEndian.Uint64(b[snapOffActiveBase:])),
		ActiveSize: int64(binary.BigEndian.Uint64(b[snapOffActiveSize:])),
		ActiveNext: int64(binary.BigEndian.Uint64(b[snapOffActiveNext:])),
	}
	if err := s.Validate(); err != nil {
		return Snapshot{}, err
	}
	return s, nil
}

// WriteSnapshot replaces dir/snapshot atomically (temp file, fsync, rename,
// directory fsync): a crash leaves the old or the new checkpoint, never a mix.
func WriteSnapshot(dir string, s Snapshot) error {
	b, err := EncodeSnapshot(s)
	if err != nil {
		return fmt.Errorf("write snapshot in %s: %w", dir, err)
	}
	if err := fsutil.WriteFileAtomic(dir, SnapshotFile, b); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return nil
}

// ReadSnapshot reads and decodes dir/snapshot. A missing file gives an error
// matching fs.ErrNotExist; a damaged one an error matching ErrBadSnapshot.
func ReadSnapshot(dir string) (Snapshot, error) {
	p := filepath.Join(dir, SnapshotFile)
	b, err := readSmallFile(p, SnapshotLen)
	if err != nil {
		return Snapshot{}, err
	}
	s, err := DecodeSnapshot(b)
	if err != nil {
		return Snapshot{}, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

// readSmallFile reads at most want+1 bytes of path, enough to tell a file of
// the right length from a longer one without reading a huge file.
func readSmallFile(path string, want int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, want+1)
	n, err := f.ReadAt(b, 0)
	if n == len(b) || err == nil || isEOF(err) {
		return b[:n], nil
	}
	return nil, fmt.Errorf("read %s: %w", path, err)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
