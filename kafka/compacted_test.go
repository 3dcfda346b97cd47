package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
)

// TestCompactedTopicRefusesKeylessRecords: as in Kafka, a record without a
// key cannot go to a compacted topic (compaction keeps the newest record of
// each key, and such a record has none). The partition's whole produce is
// refused with INVALID_RECORD, whose message names the topic, and nothing
// of it is stored; keyed records, an empty key and tombstones (a key, no value) go on,
// and a topic with cleanup delete takes keyless records as before.
func TestCompactedTopicRefusesKeylessRecords(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("state", engine.TopicConfig{Cleanup: engine.CleanupCompact}); err != nil {
		t.Fatal(err)
	}
	if err := p.eng.CreateTopic("events", engine.TopicConfig{Cleanup: engine.CleanupDelete}); err != nil {
		t.Fatal(err)
	}
	// Linger lets the keyed and the keyless record share one batch.
	cl := kgoClient(t, p.addr, kgo.ProducerLinger(50*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	res := cl.ProduceSync(ctx,
		&kgo.Record{Topic: "state", Key: []byte("k1"), Value: []byte("v1")},
		&kgo.Record{Topic: "state", Value: []byte("no key")},
	)
	for _, r := range res {
		if !errors.Is(r.Err, kerr.InvalidRecord) {
			t.Fatalf("record %q: err %v, want INVALID_RECORD", r.Record.Value, r.Err)
		}
	}
	// The message, which franz-go does not pass on, names what was wrong.
	batch := appendBatch(nil, []engine.Record{{Offset: 0, Key: []byte("k"), Value: []byte("v")}, {Offset: 1, Value: []byte("no key")}})
	got := produceRaw(t, cl, produceReq("state", 0, batch))
	if got.ErrorCode != errInvalidRecord || got.ErrorMessage == nil ||
		!strings.Contains(*got.ErrorMessage, "compacted topic state") || !strings.Contains(*got.ErrorMessage, "without a key") {
		t.Fatalf("raw produce: code %d, message %v", got.ErrorCode, got.ErrorMessage)
	}
	info, err := p.eng.Describe("state")
	if err != nil {
		t.Fatal(err)
	}
	if hwm := info.Partitions[0].HWM; hwm != 0 {
		t.Fatalf("the refused produce stored records: HWM %d", hwm)
	}

	for i, r := range []*kgo.Record{
		{Topic: "state", Key: []byte("k1"), Value: []byte("v1")},
		{Topic: "state", Key: []byte("k1")}, // a tombstone
		{Topic: "state", Key: []byte{}, Value: []byte("an empty key is a key")},
		{Topic: "events", Value: []byte("no key")},
	} {
		got, err := cl.ProduceSync(ctx, r).First()
		if err != nil {
			t.Fatalf("produce %s key %q: %v", r.Topic, r.Key, err)
		}
		if want := []int64{0, 1, 2, 0}[i]; got.Offset != want {
			t.Errorf("produce %s key %q: offset %d, want %d", r.Topic, r.Key, got.Offset, want)
		}
	}
	info, err = p.eng.Describe("state")
	if err != nil {
		t.Fatal(err)
	}
	if hwm := info.Partitions[0].HWM; hwm != 3 {
		t.Fatalf("state HWM %d after three keyed records, want 3", hwm)
	}
}
