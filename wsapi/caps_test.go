package wsapi

import (
	"context"
	"errors"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// TestTooManyTopics: past the engine's topic cap, an auto-creating produce
// or subscribe and a create_topic get too_many_topics with their id, and
// no topic is created.
func TestTooManyTopics(t *testing.T) {
	dir := t.TempDir()
	opts := engine.DefaultOptions(dir)
	opts.MaxTopics = 2
	e, err := engine.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ts := serveBackend(t, e, dir, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i, name := range []string{"a", "b"} {
		if m := c.call(i+1, map[string]any{"op": "produce", "topic": name, "value": 1}); errCode(m) != "" {
			t.Fatalf("produce to %s: %v", name, m)
		}
	}
	for i, req := range []map[string]any{
		{"op": "produce", "topic": "c", "value": 1},
		{"op": "subscribe", "topic": "c", "from": "earliest"},
		{"op": "create_topic", "topic": "c"},
	} {
		m := c.call(10+i, req)
		if errCode(m) != wire.CodeTooManyTopics {
			t.Errorf("%v past the cap: %v, want %s", req["op"], m, wire.CodeTooManyTopics)
		}
	}
	if _, err := e.Describe("c"); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("topic c after refusals: %v", err)
	}
	if got := len(topicDirs(t, dir)); got != 2 {
		t.Fatalf("%d topic directories, want 2", got)
	}
	// The topics already there still take records.
	if _, err := e.Produce(context.Background(), "a", 0, []engine.Record{{Value: []byte(`2`)}}); err != nil {
		t.Fatal(err)
	}
}
