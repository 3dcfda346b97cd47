//go:build !unix

package segment

import "testing"

// RLIMIT_FSIZE, which TestFailedAppendIsUndone uses to make a write fail
// half-way, exists only on unix.
const fsizeHelperEnv = "PULSE_SEGMENT_FSIZE_HELPER"

func fsizeHelper() int { return 2 }

func TestFailedAppendIsUndone(t *testing.T) {
	t.Skip("needs RLIMIT_FSIZE (unix only) to make a write fail half-way")
}
