//go:build !linux && !darwin && !windows

package fsutil

import "os"

// Other systems: fsync(2) for everything.
func syncData(f *os.File) error { return f.Sync() }

func syncFile(f *os.File) error { return f.Sync() }

func syncDir(d *os.File) error { return d.Sync() }
