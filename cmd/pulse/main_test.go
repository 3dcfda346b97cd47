package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest and the text input's cursor blink leave these behind
		// after a program quits; they are the UI libraries', not Pulse's.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("github.com/charmbracelet/bubbles/cursor.(*Model).BlinkCmd.func1"),
	)
}
