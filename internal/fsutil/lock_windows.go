package fsutil

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows byte-range locks are mandatory: a locked range cannot be read by
// anyone else. The lock therefore covers one byte far past the pid written
// at the start of LOCK (locking past the end of a file is allowed), so that
// a second process can still read who holds it.
const lockOffsetHigh = 1 // byte 1<<32

// tryLockFile takes an exclusive LockFileEx lock without waiting; held
// reports that another holder has it. Windows releases it when the handle
// is closed or the process exits.
func tryLockFile(f *os.File) (held bool, err error) {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err = windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, err
	}
	return false, err
}

func unlockFile(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
