package wsapi

import (
	"testing"

	"github.com/pulselog/pulse/engine"
)

// testEngine is the engine as the tests use it.
type testEngine = *engine.Engine

// openEngine opens a real engine on a fresh directory, closed at cleanup.
func openEngine(t testing.TB) (testEngine, string) {
	t.Helper()
	dir := t.TempDir()
	e, err := reopenEngine(dir)
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e, dir
}

// reopenEngine opens the engine on dir.
func reopenEngine(dir string) (testEngine, error) {
	return engine.Open(engine.DefaultOptions(dir))
}
