package segment

import (
	"fmt"

	"github.com/pulselog/pulse/internal/fsutil"
)

// SyncData makes every batch appended before the call durable with one
// fdatasync of the .log file; index entries stay buffered until Sync or
// Close. This is the per-commit sync of the partition log: the index is
// derived from the data, and recovery rebuilds whatever part of it a crash
// lost, so paying a second fsync for it on every commit would halve the
// commit rate for nothing. The log calls Sync when a segment is sealed and on
// close. Appends may continue meanwhile.
func (s *Segment) SyncData() error {
	if s.readOnly {
		return fmt.Errorf("segment %s: sync: %w", s.Path(), ErrReadOnly)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return fmt.Errorf("segment %s: sync: %w", s.Path(), ErrClosed)
	}
	if err := fsutil.SyncData(s.log); err != nil { // fdatasync; F_FULLFSYNC on macOS
		return fmt.Errorf("segment %s: %w", s.Path(), err)
	}
	return nil
}
