package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Index file layout: a sequence of fixed entries, big-endian.
const (
	entryOffRelOffset   = 0 // u32: batch base offset - segment base
	entryOffRelPosition = 4 // u32: batch byte position in the .log file
	IndexEntryLen       = 8

	// DefaultIndexIntervalBytes is the default spacing of index entries.
	DefaultIndexIntervalBytes = 4096
	// maxRel is the largest relative offset or position an entry can hold.
	maxRel = math.MaxUint32
)

// IndexEntry is one sparse index entry: the batch starting at byte
// RelPosition of the .log file has base offset segment base + RelOffset.
type IndexEntry struct {
	RelOffset   uint32
	RelPosition uint32
}

// EncodeIndex returns the .index file bytes of entries.
func EncodeIndex(entries []IndexEntry) []byte {
	b := make([]byte, len(entries)*IndexEntryLen)
	for i, e := range entries {
		p := b[i*IndexEntryLen:]
		binary.BigEndian.PutUint32(p[entryOffRelOffset:], e.RelOffset)
		binary.BigEndian.PutUint32(p[entryOffRelPosition:], e.RelPosition)
	}
	return b
}

// DecodeIndex parses .index file bytes. The file must be a whole number of
// entries with strictly increasing offsets and positions. On error (wrapping
// ErrBadIndex, naming the entry) it also returns the valid entries before the
// problem, which are usable as they are.
func DecodeIndex(b []byte) ([]IndexEntry, error) {
	n := len(b) / IndexEntryLen
	entries := make([]IndexEntry, 0, n)
	for i := 0; i < n; i++ {
		p := b[i*IndexEntryLen:]
		e := IndexEntry{
			RelOffset:   binary.BigEndian.Uint32(p[entryOffRelOffset:]),
			RelPosition: binary.BigEndian.Uint32(p[entryOffRelPosition:]),
		}
		if i > 0 {
			if err := checkOrder(i, entries[i-1], e); err != nil {
				return entries, err
			}
		}
		entries = append(entries, e)
	}
	if rem := len(b) % IndexEntryLen; rem != 0 {
		return entries, fmt.Errorf("%w: %d bytes after entry %d: a partial entry", ErrBadIndex, rem, n-1)
	}
	return entries, nil
}

// checkOrder checks that entry i (e) follows entry i-1 (prev).
func checkOrder(i int, prev, e IndexEntry) error {
	if e.RelOffset <= prev.RelOffset {
		return fmt.Errorf("%w: entry %d: relative offset %d not above the previous %d", ErrBadIndex, i, e.RelOffset, prev.RelOffset)
	}
	if e.RelPosition <= prev.RelPosition {
		return fmt.Errorf("%w: entry %d: position %d not above the previous %d", ErrBadIndex, i, e.RelPosition, prev.RelPosition)
	}
	return nil
}

// ValidateIndex checks entries for a log file of size bytes: strictly
// increasing, every position inside the file.
func ValidateIndex(entries []IndexEntry, size int64) error {
	for i, e := range entries {
		if i > 0 {
			if err := checkOrder(i, entries[i-1], e); err != nil {
				return err
			}
		}
		if int64(e.RelPosition) >= size {
			return fmt.Errorf("%w: entry %d: position %d past the log end %d", ErrBadIndex, i, e.RelPosition, size)
		}
	}
	return nil
}

// lookup returns the position of the greatest entry with RelOffset <= rel,
// or 0 when there is none.
func lookup(entries []IndexEntry, rel int64) int64 {
	pos, _ := lookupEntry(entries, rel)
	return pos
}

// lookupEntry is lookup that also returns the entry's RelOffset (0, 0 when
// there is none).
func lookupEntry(entries []IndexEntry, rel int64) (pos, relOffset int64) {
	if rel < 0 {
		return 0, 0
	}
	r := uint32(min(rel, maxRel))
	i := sort.Search(len(entries), func(i int) bool { return entries[i].RelOffset > r }) - 1
	if i < 0 {
		return 0, 0
	}
	return int64(entries[i].RelPosition), int64(entries[i].RelOffset)
}
