package crashlab

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (the
// recoveries it runs check indexes in parallel).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
