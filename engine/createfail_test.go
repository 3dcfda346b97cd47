package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pulselog/pulse/internal/layout"
)

// A create that fails after its meta.db commit (a partition that cannot be
// recovered: here a directory where its hwm file goes, in production a full
// disk writing its manifest or hwm) is undone: the error is the create's
// answer, and neither this engine nor the next open of the data dir serves
// the topic or keeps its files; a later create of the name succeeds.
func TestCreateThatFailsAfterItsCommitIsUndone(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	obstacle := filepath.Join(layout.PartitionDir(dir, "u", 1), layout.HWMFile, "x")
	if err := os.MkdirAll(obstacle, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultTopicConfig()
	cfg.Partitions = 2
	if err := e.CreateTopic("u", cfg); err == nil {
		t.Fatal("create over a directory where the hwm file goes succeeded")
	}
	check := func(when string, e *Engine) {
		t.Helper()
		if _, err := e.Describe("u"); !errors.Is(err, ErrTopicNotFound) {
			t.Errorf("%s: describe u: %v, want ErrTopicNotFound", when, err)
		}
		ts, err := e.Topics()
		if err != nil || len(ts) != 0 {
			t.Errorf("%s: topics %+v, %v; want none", when, ts, err)
		}
		if _, err := os.Stat(layout.TopicDir(dir, "u")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the failed create's directory: %v, want it gone", when, err)
		}
	}
	check("after the failed create", e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, dir)
	defer e.Close()
	check("after a reopen", e)
	if p := e.Problems(); len(p) != 0 {
		t.Errorf("reopen found problems: %q", p)
	}
	if err := e.CreateTopic("u", cfg); err != nil {
		t.Fatalf("create again: %v", err)
	}
}
