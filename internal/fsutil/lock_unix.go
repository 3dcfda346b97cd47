//go:build unix

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive flock(2) on f without waiting; held
// reports that another holder has it.
func tryLockFile(f *os.File) (held bool, err error) {
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, err
	}
	return false, err
}

func unlockFile(f *os.File) error { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
