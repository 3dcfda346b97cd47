// Package damage changes files at rest the way a bad disk or a stray write
// would, for tests of what Pulse reports and keeps when its files are hurt.
package damage

import (
	"os"
	"testing"
)

// FlipByte flips bit 5 (0x20) of the byte at pos of the file at path,
// failing the test when the file cannot be read or written back.
func FlipByte(tb testing.TB, path string, pos int64) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	b[pos] ^= 0x20
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
}
