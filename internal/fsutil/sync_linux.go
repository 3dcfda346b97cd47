package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// syncData is fdatasync(2): the data and the file size, not timestamps.
func syncData(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if !errors.Is(serr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// syncFile is fsync(2).
func syncFile(f *os.File) error { return f.Sync() }

// syncDir is fsync(2) of the directory.
func syncDir(d *os.File) error { return d.Sync() }
