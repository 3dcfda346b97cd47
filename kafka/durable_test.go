package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/pulselog/pulse/engine"
)

// TestCommitMetadataSurvivesRestart: kadm commits offsets with metadata
// strings; after a restart of Pulse on the same data dir OffsetFetch
// returns both, and the websocket API's cursor is the same offset.
func TestCommitMetadataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	p := startPulse(t, dir, Options{})
	if err := p.eng.CreateTopic("md", engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(kgoClient(t, p.addr))
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "md", Partition: 0, At: 5, LeaderEpoch: -1, Metadata: "worker-1 checkpoint \u00e9"})
	offs.Add(kadm.Offset{Topic: "md", Partition: 1, At: 9, LeaderEpoch: -1, Metadata: ""})
	offs.Add(kadm.Offset{Topic: "md", Partition: 2, At: 1 << 40, LeaderEpoch: -1, Metadata: string(make([]byte, maxCommitMetadata))})
	resp, err := adm.CommitOffsets(ctx, "mdgroup", offs)
	if err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	// Over the limit: refused, the stored commit unchanged.
	big := kadm.Offsets{}
	big.Add(kadm.Offset{Topic: "md", Partition: 0, At: 6, LeaderEpoch: -1, Metadata: string(make([]byte, maxCommitMetadata+1))})
	if resp, err := adm.CommitOffsets(ctx, "mdgroup", big); err != nil || resp.Error() == nil {
		t.Fatalf("over-long metadata: %v %v", err, resp)
	}

	p.stop(t)
	p = startPulse(t, dir, Options{})
	adm = kadm.NewClient(kgoClient(t, p.addr))
	got, err := adm.FetchOffsets(ctx, "mdgroup")
	if err != nil || got.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, got.Error())
	}
	for _, want := range offs.Sorted() {
		o, ok := got.Lookup("md", want.Partition)
		if !ok || o.At != want.At || o.Metadata != want.Metadata {
			t.Errorf("partition %d after restart: %+v, want offset %d metadata %q", want.Partition, o, want.At, want.Metadata)
		}
	}
	if off, ok, err := p.eng.Cursor("mdgroup", "md", 1); err != nil || !ok || off != 9 {
		t.Errorf("engine cursor: %d %v %v, want 9", off, ok, err)
	}
	// A websocket-style commit of the same cursor replaces offset and
	// metadata, as a Kafka commit without metadata would.
	if err := p.eng.CommitCursor("mdgroup", "md", 0, 0); err != nil {
		t.Fatal(err)
	}
	got, err = adm.FetchOffsets(ctx, "mdgroup")
	if o, _ := got.Lookup("md", 0); err != nil || o.At != 0 || o.Metadata != "" {
		t.Errorf("after a cursor commit: %+v %v", o, err)
	}
}
