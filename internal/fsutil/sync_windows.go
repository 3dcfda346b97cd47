package fsutil

import "os"

// On Windows os.File.Sync is FlushFileBuffers, which writes the file's data
// and metadata and flushes the drive's cache: there is no cheaper durable
// variant.
func syncData(f *os.File) error { return f.Sync() }

func syncFile(f *os.File) error { return f.Sync() }

// syncDir is a no-op on Windows, which has no directory fsync: NTFS
// journals the metadata of creates and renames (MoveFileEx, which os.Rename
// uses) itself and commits that journal on its own schedule, so a rename
// that a power loss hits may still be undone.
func syncDir(d *os.File) error { return nil }
