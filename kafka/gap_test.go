package kafka

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/internal/layout"
)

// TestFetchPassesACorruptRangeAtTheEnd: a corrupt batch that reaches the
// HWM, with nothing readable after it, is answered as Kafka answers a batch
// compaction emptied: a batch of no records whose last offset is the
// range's end, so that a consumer moves past it to the HWM (kcat -e ends)
// instead of asking for the same offset until more is produced.
func TestFetchPassesACorruptRangeAtTheEnd(t *testing.T) {
	dir := t.TempDir()
	p := startPulse(t, dir, DefaultOptions())
	if err := p.eng.CreateTopic("hurt", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, batch := range [][]engine.Record{
		{{Value: []byte("a0")}, {Value: []byte("a1")}, {Value: []byte("a2")}},
		{{Value: []byte("b3")}, {Value: []byte("b4")}},
	} {
		if _, err := p.eng.Produce(ctx, "hurt", 0, batch); err != nil {
			t.Fatal(err)
		}
	}
	p.stop(t)
	seg := filepath.Join(layout.PartitionDir(dir, "hurt", 0), layout.LogFile(0))
	fi, err := os.Stat(seg)
	if err != nil {
		t.Fatal(err)
	}
	damage.FlipByte(t, seg, fi.Size()-2) // in the last batch's last record: offsets 3..4
	p = startPulse(t, dir, DefaultOptions())

	// The protocol: a fetch at the range is answered at once with an
	// empty batch ending at its last offset.
	cl := kgoClient(t, p.addr)
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 10000, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "hurt"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = 3, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	part := resp.Topics[0].Partitions[0]
	var b kmsg.RecordBatch
	if err := b.ReadFrom(part.RecordBatches); err != nil || part.ErrorCode != 0 || part.HighWatermark != 5 {
		t.Fatalf("fetch at the corrupt range: code %d, HWM %d, batches %x: %v", part.ErrorCode, part.HighWatermark, part.RecordBatches, err)
	}
	if b.FirstOffset != 3 || b.LastOffsetDelta != 1 || b.NumRecords != 0 {
		t.Fatalf("fetch at the corrupt range: batch at %d, last offset delta %d, %d records; want 3, 1, 0", b.FirstOffset, b.LastOffsetDelta, b.NumRecords)
	}

	// A client nobody here wrote: kcat -e reads to the end and exits.
	kcat := need(t, "kcat", "-V")
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", p.addr, "-t", "hurt", "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o %s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -C -e: %v (the consumer did not get past the corrupt range)\n%s", err, out)
	}
	if got := string(out); got != "0 a0\n1 a1\n2 a2\n" {
		t.Fatalf("kcat read %q", got)
	}
}
