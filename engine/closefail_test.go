package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/internal/loopfs"
)

// fillDisk opens an engine on a real small ext4 with ballast that can be
// freed later, and produces to both partitions of topic t until an append
// fails for lack of space.
func fillDisk(t *testing.T) (e *Engine, ballast string) {
	t.Helper()
	mnt := loopfs.Mount(t, 16)
	ballast = filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, bytes.Repeat([]byte{1}, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	e = openEngine(t, filepath.Join(mnt, "data"))
	t.Cleanup(func() { e.Close() }) // before the unmount; ErrClosed when closed already
	cfg := DefaultTopicConfig()
	cfg.Partitions = 2
	cfg.Codec = "none"
	if err := e.CreateTopic("t", cfg); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the disk never filled")
		}
		recs := []Record{{Value: append([]byte(fmt.Sprintf("r%d:", i)), bytes.Repeat([]byte{'x'}, 32<<10)...)}}
		if _, err := e.Produce(context.Background(), "t", i%2, recs); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("produce on a full disk: %v, want ENOSPC", err)
			}
			return e, ballast
		}
	}
}

// A partition whose write failed for a full disk rewound to its durable end
// and answered that write: once the disk has room again, closing the engine
// has nothing left it could not write, and does not report the old failure.
func TestCloseAfterAFullDiskThatRecoveredSucceeds(t *testing.T) {
	e, ballast := fillDisk(t)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("close once the disk has room: %v, want no error", err)
	}
}

// On a disk that is still full, closing says once for each partition what it
// could not write and why: one line each, naming the topic and partition,
// not repeating the append that failed before the close.
func TestCloseOnAFullDiskSaysOnceWhatItCouldNotWrite(t *testing.T) {
	e, _ := fillDisk(t)
	err := e.Close()
	if err == nil {
		t.Fatal("close on a full disk: no error, want what could not be written")
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("close on a full disk: %v, want ENOSPC", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "append batch") {
		t.Errorf("the close error repeats the failed append:\n%s", msg)
	}
	seen := map[string]bool{}
	lines := strings.Split(msg, "\n")
	if !slices.IsSorted(lines) {
		t.Errorf("lines not in partition order:\n%s", msg)
	}
	for _, line := range lines {
		if seen[line] {
			t.Errorf("line said twice: %s\nin:\n%s", line, msg)
		}
		seen[line] = true
		if !strings.HasPrefix(line, "topic t partition ") {
			t.Errorf("line does not name its topic and partition: %s", line)
		}
		if strings.Count(line, syscall.ENOSPC.Error()) != 1 {
			t.Errorf("line does not give its cause once: %s", line)
		}
	}
}
