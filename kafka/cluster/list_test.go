package cluster

import (
	"slices"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// Topics lists every topic right after one of them was altered, created or
// deleted through the Source. The Source drops what its Kafka client cached
// of such a topic, and a list of all topics answered from that client's
// cache then lacked the altered one, for up to the client's metadata age
// (the UI's topics list showed it gone for seconds after an edit).
func TestTopicsListedRightAfterAChange(t *testing.T) {
	addr := bootstrap(t)
	_, adm := kclient(t, addr)
	a, b, c := uniq(t, "list-a"), uniq(t, "list-b"), uniq(t, "list-c")
	createTopic(t, adm, a, 1)
	createTopic(t, adm, b, 1)
	src := openSource(t, addr)
	names := func() []string {
		t.Helper()
		ts, err := src.Topics()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ti := range ts {
			out = append(out, ti.Name)
		}
		return out
	}
	if got := names(); !slices.Contains(got, a) || !slices.Contains(got, b) {
		t.Fatalf("topics %v, want %s and %s among them", got, a, b)
	}
	info, err := src.Describe(b)
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	cfg.SegmentMaxBytes = 8 << 20
	if err := src.AlterTopic(b, cfg); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Contains(got, b) {
		t.Fatalf("right after altering %s the topics are %v", b, got)
	}
	if err := src.CreateTopic(c, engine.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Contains(got, c) {
		t.Fatalf("right after creating %s the topics are %v", c, got)
	}
	if err := src.DeleteTopic(a); err != nil {
		t.Fatal(err)
	}
	if got := names(); slices.Contains(got, a) {
		t.Fatalf("right after deleting %s the topics are %v", a, got)
	}
}
