package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// An error the engine passes on from a partition log names its cause once:
// the engine's sentinels are the log's, not a second error of the same
// text wrapped around it ("record too large: record too large: ...").
func TestLogErrorsNameTheirCauseOnce(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	if err := e.CreateTopic("t", DefaultTopicConfig()); err != nil {
		t.Fatal(err)
	}
	_, err := e.Produce(context.Background(), "t", 0, []Record{{Value: make([]byte, 17<<20)}})
	if !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("a 17 MiB record: %v, want ErrRecordTooLarge", err)
	}
	if n := strings.Count(err.Error(), "record too large"); n != 1 {
		t.Errorf("a 17 MiB record: %q says \"record too large\" %d times", err, n)
	}
	_, err = e.Read("t", 0, 5, 10, 1<<20)
	if !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("a read past the end: %v, want ErrOffsetOutOfRange", err)
	}
	if n := strings.Count(err.Error(), "offset out of range"); n != 1 {
		t.Errorf("a read past the end: %q says \"offset out of range\" %d times", err, n)
	}
}

// A partition the topic does not have is refused naming how many it has,
// in words that fit the count: "1 partition", "2 partitions", whichever
// call asked for it.
func TestPartitionOutOfRangeCountsInWords(t *testing.T) {
	e := openEngine(t, t.TempDir())
	defer e.Close()
	one, two := DefaultTopicConfig(), DefaultTopicConfig()
	two.Partitions = 2
	if err := e.CreateTopic("one", one); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("two", two); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(topic string) error{
		"produce": func(topic string) error {
			_, err := e.Produce(context.Background(), topic, 3, []Record{{Value: []byte("x")}})
			return err
		},
		"read": func(topic string) error {
			_, err := e.Read(topic, 3, 0, 10, 1<<20)
			return err
		},
		"maintenance status": func(topic string) error {
			_, err := e.MaintenanceStatus(topic, 3)
			return err
		},
	}
	for name, call := range calls {
		for topic, want := range map[string]string{
			"one": "topic one has 1 partition, asked for 3",
			"two": "topic two has 2 partitions, asked for 3",
		} {
			err := call(topic)
			if !errors.Is(err, ErrPartitionOutOfRange) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s of partition 3 of %s: %v, want ErrPartitionOutOfRange saying %q", name, topic, err, want)
			}
		}
	}
}

// Every error of Open names the data directory once: inDir adds it to an
// error that does not name it, and leaves one that does (as "data
// directory DIR", or a path under its topics) as it is.
func TestOpenErrorsNameTheDirOnce(t *testing.T) {
	cause := errors.New("boom")
	for _, c := range []struct {
		dir  string
		err  error
		want string
	}{
		{"/d", fmt.Errorf("data directory /d: %w", cause), "data directory /d: boom"},
		{"/d", fmt.Errorf("partition %s: %w", filepath.Join("/d", "topics", "t", "p00000"), cause), "partition " + filepath.Join("/d", "topics", "t", "p00000") + ": boom"},
		{"/d", fmt.Errorf("topic t: stored config: %w", cause), "data directory /d: topic t: stored config: boom"},
		{".", fmt.Errorf("topic t.x: %w", cause), "data directory .: topic t.x: boom"},
	} {
		got := inDir(c.dir, c.err)
		if got.Error() != c.want || !errors.Is(got, cause) {
			t.Errorf("inDir(%q, %q) = %q, want %q wrapping its cause", c.dir, c.err, got, c.want)
		}
	}
}
