//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package recovery

// mapFile is not available: headers are read with pread.
func mapFile(path string, size int64) ([]byte, func(), error) {
	return nil, func() {}, nil
}
