//go:build linux || darwin || freebsd || netbsd || openbsd

package recovery

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of path read-only. Reading batch headers
// at every index entry through a mapping costs page faults (which the kernel
// batches for neighbouring pages) instead of a system call per entry: that
// is what keeps the snapshot path fast on a large log.
func mapFile(path string, size int64) ([]byte, func(), error) {
	if size <= 0 || size > 1<<40 {
		return nil, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
