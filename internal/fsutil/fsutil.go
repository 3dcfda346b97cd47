// Package fsutil holds the durability helpers every Pulse storage package
// uses: the one way a file is replaced atomically, directory fsync, and the
// data directory's exclusive lock.
package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulselog/pulse/internal/layout"
)

// TempPrefix starts the name of every temporary file WriteFileAtomic
// creates (".tmp-<name>-<random>"). Recovery deletes files with this prefix:
// an unrenamed temp is never the only copy of anything.
const TempPrefix = layout.TempPrefix

// FileMode is the permission of files Pulse creates in a data directory.
const FileMode = 0o644

// IsTemp reports whether a file name (not a path) is a WriteFileAtomic temp.
func IsTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }

// WriteFileAtomic replaces <dir>/<name> with data so that a crash leaves
// either the old file or the new one, never a mix: it writes
// <dir>/.tmp-<name>-<random>, fsyncs it, renames it over <dir>/<name> and
// fsyncs dir. On any error the temp file is removed and <dir>/<name> is
// untouched (unless the error is the final directory fsync, after which the
// rename may or may not survive a crash).
func WriteFileAtomic(dir, name string, data []byte) (err error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return fmt.Errorf("atomic write of %q in %s: not a plain file name", name, dir)
	}
	target := filepath.Join(dir, name)
	f, err := os.CreateTemp(dir, TempPrefix+name+"-*")
	if err != nil {
		return fmt.Errorf("atomic write %s: %w", target, err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if err != nil {
			f.Close() // second close after a successful one is harmless
			if !renamed {
				os.Remove(tmp)
			}
		}
	}()
	if err := f.Chmod(FileMode); err != nil {
		return fmt.Errorf("atomic write %s: %w", target, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("atomic write %s: %w", target, err)
	}
	if err := syncFile(f); err != nil {
		return fmt.Errorf("atomic write %s: fsync: %w", target, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("atomic write %s: %w", target, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("atomic write %s: %w", target, err)
	}
	renamed = true
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("atomic write %s: %w", target, err)
	}
	return nil
}

// SyncDir fsyncs a directory, making the creation, removal and renaming of
// the files in it durable (F_FULLFSYNC on macOS; on Windows the directory
// is only checked to exist, see sync_windows.go).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	serr := syncDir(d)
	cerr := d.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
