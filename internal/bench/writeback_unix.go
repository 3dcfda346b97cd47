//go:build unix

package bench

import "syscall"

// writebackAll asks the kernel to write back every dirty page (sync(2)),
// so that a benchmark step's fsyncs do not queue behind the step before.
func writebackAll() { syscall.Sync() }
