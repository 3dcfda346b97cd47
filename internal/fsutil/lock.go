package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pulselog/pulse/internal/layout"
)

// LockFile is the name of the lock file Lock creates in a directory.
const LockFile = layout.LockFile

// DirLock is an exclusive lock on <dir>/LOCK: flock(2) on unix, LockFileEx
// on Windows (lock_unix.go, lock_windows.go). The kernel releases it when
// the process exits, however it exits, so a crash never leaves a directory
// locked.
type DirLock struct {
	dir string
	f   *os.File
}

// Lock takes the exclusive lock of dir, creating <dir>/LOCK if needed and
// writing the caller's pid into it. If another process (or another DirLock
// of this process) holds it, Lock fails at once with an error wrapping
// ErrLocked that names dir and the holder's pid.
func Lock(dir string) (*DirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if held, err := tryLockFile(f); err != nil {
		holder := readPID(f)
		f.Close()
		if held {
			if holder > 0 {
				return nil, fmt.Errorf("%w: %s (held by pid %d)", ErrLocked, dir, holder)
			}
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	// The pid is information for the error above, not part of the lock:
	// failing to write it does not fail Lock.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{dir: dir, f: f}, nil
}

// Dir returns the locked directory.
func (l *DirLock) Dir() string { return l.dir }

// Unlock releases the lock. The LOCK file stays: removing it would let two
// processes lock two different files of the same name.
func (l *DirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	uerr := unlockFile(l.f)
	cerr := l.f.Close()
	l.f = nil
	if err := errors.Join(uerr, cerr); err != nil {
		return fmt.Errorf("unlock %s: %w", l.dir, err)
	}
	return nil
}

// readPID returns the pid written in a LOCK file, or 0.
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// Held reports whether another process (or another DirLock of this
// process) holds the lock of dir now. It takes and releases the lock for an
// instant and writes nothing; a dir without a LOCK file is not held.
func Held(dir string) bool {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := tryLockFile(f)
	if err == nil {
		unlockFile(f)
	}
	return held
}
