package wsapi

import (
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// TestEventsFollowGrow: an SSE stream of a whole topic opened before a grow
// delivers the records of the partitions the grow adds (from their first
// record) and its id then lists them; a stream of one partition keeps to
// it; a resumed stream whose Last-Event-ID predates the grow starts the
// added partitions at their first record, so nothing produced to them
// while it was away is missed.
func TestEventsFollowGrow(t *testing.T) {
	s := startServer(t, Options{})
	if err := s.eng.CreateTopic("orders", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	u := "http://" + s.addr + "/v1/topics/orders/"
	// From earliest: a stream that delivered the first record is running,
	// whenever curl got it started, and the grow comes after that.
	whole, _ := curlEvents(t, u+"events?from=earliest")
	one, _ := curlEvents(t, u+"events?from=earliest&partition=0")
	curlRun(t, "-d", `{"partition":0,"value":"before"}`, u+"records")
	if ev := nextEvent(t, whole); ev.id != "0/0,1/-1" || !strings.Contains(ev.data, `"before"`) {
		t.Fatalf("whole-topic stream, first event: %+v", ev)
	}
	if ev := nextEvent(t, one); ev.id != "0/0" {
		t.Fatalf("partition-0 stream, first event: %+v", ev)
	}

	info, err := s.eng.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	cfg.Partitions = 3
	if err := s.eng.AlterTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	curlRun(t, "-d", `{"partition":2,"value":"grown"}`, u+"records")
	if ev := nextEvent(t, whole); ev.id != "0/0,1/-1,2/0" || !strings.Contains(ev.data, `"partition":2`) || !strings.Contains(ev.data, `"grown"`) {
		t.Fatalf("whole-topic stream after the grow: %+v, want id 0/0,1/-1,2/0", ev)
	}
	curlRun(t, "-d", `{"partition":0,"value":"after"}`, u+"records")
	if ev := nextEvent(t, whole); ev.id != "0/1,1/-1,2/0" {
		t.Fatalf("whole-topic stream after the grow, second event: %+v, want id 0/1,1/-1,2/0", ev)
	}
	if ev := nextEvent(t, one); ev.id != "0/1" || !strings.Contains(ev.data, `"after"`) {
		t.Fatalf("partition-0 stream after the grow: %+v, want 0/1", ev)
	}

	// Resumed with an id from before the grow: partition 2 from its start.
	resumed, _ := curlEvents(t, u+"events", "Last-Event-ID: 0/0,1/-1")
	ev := nextEvent(t, resumed)
	want := map[string]bool{"0/0,1/-1,2/0": true, "0/1,1/-1,2/-1": true}
	if !want[ev.id] {
		t.Fatalf("resumed stream, first event id %q, want one of %v", ev.id, want)
	}
	if ev := nextEvent(t, resumed); ev.id != "0/1,1/-1,2/0" {
		t.Fatalf("resumed stream, second event: %+v, want id 0/1,1/-1,2/0", ev)
	}
}
