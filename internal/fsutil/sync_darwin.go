package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// On macOS fsync(2) hands the data to the drive but does not flush the
// drive's write cache: a power loss can still take it back. F_FULLFSYNC
// asks the drive to flush its cache too, which is what SQLite does for
// every sync it promises. Some filesystems (network mounts, some external
// drives) refuse F_FULLFSYNC; then fsync(2) is the best the OS offers.

func fullFsync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			_, serr = unix.FcntlInt(fd, unix.F_FULLFSYNC, 0)
			if errors.Is(serr, unix.ENOTSUP) || errors.Is(serr, unix.EINVAL) || errors.Is(serr, unix.ENOTTY) {
				serr = unix.Fsync(int(fd))
			}
			if !errors.Is(serr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// syncData: macOS has no cheaper durable sync than F_FULLFSYNC.
func syncData(f *os.File) error { return fullFsync(f) }

func syncFile(f *os.File) error { return fullFsync(f) }

// syncDir makes renames and new names in the directory durable.
func syncDir(d *os.File) error { return fullFsync(d) }
