package fsutil

import (
	"fmt"
	"os"
)

// The durability primitives. Every durability promise Pulse makes ends in
// one of SyncData, SyncFile or SyncDir (or in os.File.Sync, which the Go
// runtime implements as SyncFile does on each OS). What each costs and
// does on each OS is written in docs/architecture.md, "Durability on each
// OS"; the per-OS code is in sync_linux.go, sync_darwin.go,
// sync_windows.go and sync_other.go.

// SyncData makes f's written data and its size durable, skipping metadata
// that reading the data back does not need (timestamps). It is the
// per-commit sync of an append-only file: fdatasync(2) on Linux,
// fcntl(F_FULLFSYNC) on macOS (falling back to fsync(2) where the
// filesystem refuses it), FlushFileBuffers on Windows, fsync(2) elsewhere.
func SyncData(f *os.File) error {
	if err := syncData(f); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return nil
}

// SyncFile makes f's data and metadata durable: fsync(2) on Linux and other
// unixes, fcntl(F_FULLFSYNC) on macOS (fsync(2) where refused),
// FlushFileBuffers on Windows.
func SyncFile(f *os.File) error {
	if err := syncFile(f); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return nil
}
