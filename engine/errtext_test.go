package engine

import (
	"context"
	"errors"
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
