package engine

import (
	"errors"
	"os"
	"testing"

	"github.com/pulselog/pulse/internal/layout"
)

// TestTopicAndPartitionCaps: past MaxTopics or MaxPartitions CreateTopic
// fails with ErrTooManyTopics and creates nothing (no directory, no meta.db
// entry); a data dir that holds more than a lower cap still opens.
func TestTopicAndPartitionCaps(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions(dir)
	o.MaxTopics, o.MaxPartitions = 3, 5
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		parts int
		ok    bool
	}{{"a", 2, true}, {"b", 2, true}, {"c", 2, false}, {"c", 1, true}, {"d", 1, false}} {
		err := e.CreateTopic(c.name, TopicConfig{Partitions: c.parts})
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, ErrTooManyTopics)) {
			e.Close()
			t.Fatalf("create %s (%d partitions): %v, want ok=%v or ErrTooManyTopics", c.name, c.parts, err, c.ok)
		}
		if !c.ok {
			if _, serr := os.Stat(layout.PartitionDir(dir, c.name, 1)); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("refused topic %s left a directory (%v)", c.name, serr)
			}
		}
	}
	ts, _ := e.Topics()
	if len(ts) != 3 {
		t.Fatalf("%d topics, want 3", len(ts))
	}
	e.Close()
	o.MaxTopics, o.MaxPartitions = 1, 1
	e, err = Open(o)
	if err != nil {
		t.Fatalf("a data dir past the caps must still open: %v", err)
	}
	defer e.Close()
	if ts, _ := e.Topics(); len(ts) != 3 {
		t.Fatalf("%d topics after reopen, want 3", len(ts))
	}
	if err := e.CreateTopic("e", TopicConfig{}); !errors.Is(err, ErrTooManyTopics) {
		t.Fatalf("create past the caps: %v", err)
	}
}
