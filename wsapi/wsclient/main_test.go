package wsclient

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any leaves a goroutine behind (a
// Client's reader, a Subscription's).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
