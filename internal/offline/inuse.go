package offline

import (
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/internal/fsutil"
)

// heldByRunningPulse reports whether a running pulse holds the data dir
// that dir is (or is inside of): its LOCK file is locked (fsutil.Held,
// which writes nothing).
func heldByRunningPulse(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, fsutil.LockFile)); err == nil {
			return fsutil.Held(d)
		}
		if parent := filepath.Dir(d); parent == d {
			return false
		}
	}
}

// runningNote is what inspect prints first about a data dir a running
// pulse holds: its open segments' indexes and its HWM file are written as
// it runs, so the reports describe a crash at this instant.
const runningNote = "note: a running pulse holds this data dir; its active segments' indexes and HWM\n" +
	"      are written as it runs, so \"would be rebuilt\" and hidden tails below are what a\n" +
	"      crash at this instant would leave, not damage. Stop it for a report of its files at rest.\n\n"
