package engine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/internal/loopfs"
)

// A grow whose new partitions fail to recover after its meta.db commit (their
// disk is full: here partition 1's directory is a link to a full ext4, while
// meta.db has room) is undone: the topic keeps its old count in this engine
// and after a reopen, no files of the new partitions are left, and once there
// is room the same grow succeeds.
func TestGrowThatFailsAfterItsCommitIsUndone(t *testing.T) {
	mnt := loopfs.Mount(t, 8)
	full := filepath.Join(mnt, "p1")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1 << 16, 1} { // to the last byte of the last block
		for chunk := bytes.Repeat([]byte{'x'}, n); ; {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	f.Close()

	dir := t.TempDir()
	e := openEngine(t, dir)
	t.Cleanup(func() { e.Close() }) // before the unmount
	cfg := DefaultTopicConfig()
	if err := e.CreateTopic("t", cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(full, layout.PartitionDir(dir, "t", 1)); err != nil {
		t.Fatal(err)
	}
	grown := cfg
	grown.Partitions = 3
	if err := e.AlterTopic("t", grown); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("grow onto a full disk: %v, want ENOSPC", err)
	}
	check := func(when string, e *Engine) {
		t.Helper()
		ti, err := e.Describe("t")
		if err != nil || len(ti.Partitions) != 1 {
			t.Errorf("%s: describe t: %d partitions, %v; want 1", when, len(ti.Partitions), err)
		}
		for p := 1; p < 3; p++ {
			ents, err := os.ReadDir(layout.PartitionDir(dir, "t", p))
			if err == nil && len(ents) > 0 {
				t.Errorf("%s: partition %d of the failed grow left %d files", when, p, len(ents))
			}
		}
	}
	check("after the failed grow", e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, dir)
	check("after a reopen", e)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := e.AlterTopic("t", grown); err != nil {
		t.Fatalf("the grow once there is room: %v", err)
	}
	if ti, err := e.Describe("t"); err != nil || len(ti.Partitions) != 3 {
		t.Fatalf("after the grow: %+v, %v", ti, err)
	}
}
