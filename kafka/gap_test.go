package kafka

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// startWithCorruptTail starts Pulse on a partition hurt/0 holding a0..a2
// (offsets 0..2) and b3, b4, whose batch is corrupt: offsets 3..4 are a
// corrupt range reaching the HWM, 5.
func startWithCorruptTail(t *testing.T) *pulse {
	t.Helper()
	return startPulse(t, corruptTailDir(t), DefaultOptions())
}

// corruptTailDir returns a data dir holding the partition of
// startWithCorruptTail, Pulse stopped.
func corruptTailDir(t *testing.T) string {
	t.Helper()
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
	return dir
}

// TestFetchPassesACorruptRangeAtTheEnd: a corrupt batch that reaches the
// HWM, with nothing readable after it, is answered as Kafka answers a batch
// compaction emptied: a batch of no records whose last offset is the
// range's end, so that a consumer moves past it to the HWM (kcat -e ends)
// instead of asking for the same offset until more is produced; it is led
// by a batch of the partition's first record, below the fetch offset
// (TestClientsPassACorruptRangeAtTheEnd shows what that is for).
func TestFetchPassesACorruptRangeAtTheEnd(t *testing.T) {
	p := startWithCorruptTail(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The protocol: a fetch at the range, and one inside it, are answered
	// at once, with an empty batch ending at its last offset.
	cl := kgoClient(t, p.addr)
	if b := fetchBatches(ctx, t, cl, 3); !isRangeAnswer(b, 3) {
		t.Fatalf("fetch at the corrupt range: %+v, want a batch of a0 and one of no records over 3..4", b)
	}
	if b := fetchBatches(ctx, t, cl, 4); !isRangeAnswer(b, 4) {
		t.Fatalf("fetch inside the corrupt range: %+v, want a batch of a0 and one of no records over 4..4", b)
	}

	// A client nobody here wrote: kcat -e reads to the end and exits.
	if got := kcatToEnd(ctx, t, p.addr, "the corrupt range"); got != "0 a0\n1 a1\n2 a2\n" {
		t.Fatalf("kcat read %q", got)
	}
}

// isRangeAnswer reports whether b is the answer to a fetch at from in the
// corrupt range 3..4 of startWithCorruptTail: a batch of a0 alone, the
// partition's first record, then a batch of no records over from..4.
func isRangeAnswer(b []kmsg.RecordBatch, from int64) bool {
	return len(b) == 2 && b[0].FirstOffset == 0 && b[0].NumRecords == 1 && b[0].LastOffsetDelta == 0 &&
		b[1].FirstOffset == from && int64(b[1].LastOffsetDelta) == 4-from && b[1].NumRecords == 0
}

// fetchBatches sends one Fetch of hurt/0 at offset from and returns the
// batches of its answer.
func fetchBatches(ctx context.Context, t *testing.T, cl *kgo.Client, from int64) []kmsg.RecordBatch {
	t.Helper()
	b, err := fetchBatchesErr(ctx, cl, from)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fetchBatchesErr(ctx context.Context, cl *kgo.Client, from int64) ([]kmsg.RecordBatch, error) {
	b, err := fetchHurtErr(ctx, cl, 10000, 1, 1<<20, [2]int64{0, from})
	if err != nil {
		return nil, err
	}
	return b[0], nil
}

// fetchHurtErr sends one Fetch of hurt at the offsets of at (partition,
// offset; each partition's max_bytes 1 MiB) and returns the batches of
// each partition's answer, in that order.
func fetchHurtErr(ctx context.Context, cl *kgo.Client, maxWaitMs, minBytes, maxBytes int32, at ...[2]int64) ([][]kmsg.RecordBatch, error) {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWaitMs, minBytes, maxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "hurt"
	for _, pa := range at {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(pa[0]), pa[1], 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out [][]kmsg.RecordBatch
	for _, part := range resp.Topics[0].Partitions {
		if part.ErrorCode != 0 {
			return nil, fmt.Errorf("fetch of partition %d at %d: error code %d", part.Partition, at[len(out)][1], part.ErrorCode)
		}
		var batches []kmsg.RecordBatch
		for b := part.RecordBatches; len(b) > 0; {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(b); err != nil {
				return nil, fmt.Errorf("fetch of partition %d at %d: batches %x: %w", part.Partition, at[len(out)][1], part.RecordBatches, err)
			}
			batches = append(batches, rb)
			b = b[12+int(rb.Length):]
		}
		out = append(out, batches)
	}
	return out, nil
}

// A fetch whose read returns records and then skips a corrupt range up to
// the HWM ends its answer with a batch of no records covering the range, so
// the consumer's next fetch asks at the HWM: the range is read, and counted
// in skipped_records, once, not again by a second fetch at its first offset.
func TestFetchEndsWithTheCorruptRangeItSkippedAfterItsRecords(t *testing.T) {
	p := startWithCorruptTail(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	batches := fetchBatches(ctx, t, kgoClient(t, p.addr), 0)
	if len(batches) != 2 {
		t.Fatalf("fetch at 0: %d batches, want the records' and an empty one", len(batches))
	}
	if b := batches[0]; b.FirstOffset != 0 || b.NumRecords != 3 {
		t.Fatalf("fetch at 0: first batch at %d with %d records, want 0 with 3", b.FirstOffset, b.NumRecords)
	}
	if b := batches[1]; b.FirstOffset != 3 || b.LastOffsetDelta != 1 || b.NumRecords != 0 {
		t.Fatalf("fetch at 0: last batch at %d, last offset delta %d, %d records; want 3, 1, 0", b.FirstOffset, b.LastOffsetDelta, b.NumRecords)
	}
	skipped := func() int64 {
		t.Helper()
		info, err := p.eng.Describe("hurt")
		if err != nil {
			t.Fatal(err)
		}
		return info.Partitions[0].SkippedRecords
	}
	if n := skipped(); n != 2 {
		t.Fatalf("after one fetch through the range: skipped_records %d, want 2", n)
	}

	// Clients nobody here wrote move past it with the records: each reads
	// the topic to its end once, and the range is counted once more each.
	if got := kcatToEnd(ctx, t, p.addr, "the corrupt range"); got != "0 a0\n1 a1\n2 a2\n" {
		t.Fatalf("kcat read %q", got)
	}
	if n := skipped(); n != 4 {
		t.Fatalf("after kcat read to the end: skipped_records %d, want 4 (2 more)", n)
	}
	cl := kgoClient(t, p.addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"hurt": {0: kgo.NewOffset().AtStart()}}))
	var got []string
	for len(got) < 3 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%d %s", r.Offset, r.Value)) })
	}
	if fmt.Sprint(got) != "[0 a0 1 a1 2 a2]" {
		t.Fatalf("franz-go read %v", got)
	}
	// franz-go's next fetch is at the HWM: it waits there, reading nothing.
	// Produce one record so that the wait ends, and read it.
	if _, err := p.eng.Produce(ctx, "hurt", 0, []engine.Record{{Value: []byte("c5")}}); err != nil {
		t.Fatal(err)
	}
	for len(got) < 4 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%d %s", r.Offset, r.Value)) })
	}
	if got[3] != "5 c5" {
		t.Fatalf("franz-go read %v after the produce", got)
	}
	if n := skipped(); n != 6 {
		t.Fatalf("after franz-go read to the end: skipped_records %d, want 6 (2 more)", n)
	}
}

// A consumer that asks again at a corrupt range at the end after it was
// answered with the batch of no records past it (kafkajs, which ignores
// such a batch) is not answered at once again: the fetch waits as at the
// HWM, for a record produced (or its max_wait), instead of a loop of
// fetches each answered at once, each reading and counting the range.
func TestFetchAtACorruptRangeAgainWaits(t *testing.T) {
	eng, err := engine.Open(engine.DefaultOptions(corruptTailDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	reads := make(chan struct{}, 1)
	opts := DefaultOptions()
	opts.Records = &readSignal{Engine: eng, onRead: func(from int64) {
		if from == 3 {
			select {
			case reads <- struct{}{}:
			default:
			}
		}
	}}
	p := startPulseOnEngine(t, eng, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := kgoClient(t, p.addr)
	if b := fetchBatches(ctx, t, cl, 3); !isRangeAnswer(b, 3) {
		t.Fatalf("first fetch at the range: %+v, want a batch of a0 and one of no records over 3..4", b)
	}
	<-reads // the first fetch's read
	type answer struct {
		b   []kmsg.RecordBatch
		err error
	}
	got := make(chan answer, 1)
	go func() {
		b, err := fetchBatchesErr(ctx, cl, 3)
		got <- answer{b, err}
	}()
	// Once the second fetch has read the range, a record is produced:
	// a fetch that waits gets it; one answered at once did not.
	select {
	case a := <-got:
		t.Fatalf("second fetch at the range answered before anything was produced: %+v %v", a.b, a.err)
	case <-ctx.Done():
		t.Fatal("the second fetch never read")
	case <-reads:
	}
	if _, err := p.eng.Produce(ctx, "hurt", 0, []engine.Record{{Value: []byte("c5")}}); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	n := 0
	for _, rb := range a.b {
		n += int(rb.NumRecords)
	}
	if n != 1 {
		t.Fatalf("second fetch at the range: %+v, want the record produced meanwhile", a.b)
	}
	// Two answers passed the range on (the second with the record after
	// it); the second fetch's read when it came, before its wait, counts
	// nothing of its own.
	info, err := p.eng.Describe("hurt")
	if err != nil {
		t.Fatal(err)
	}
	if k := info.Partitions[0].SkippedRecords; k != 4 {
		t.Fatalf("after two answers over the range: skipped_records %d, want 4", k)
	}
}

// readSignal is the engine as the record path of the Kafka listener,
// calling onRead with the offset each read of a fetch started at, after
// the read.
type readSignal struct {
	*engine.Engine
	onRead func(from int64)
}

func (r *readSignal) ReadUncounted(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error) {
	res, err := r.Engine.ReadUncounted(topic, partition, from, maxRecords, maxBytes)
	r.onRead(from)
	return res, err
}

func (r *readSignal) CountRead(string, []engine.Record) {}

// TestFetchPassesALostRangeLongerThanABatch: a lost range of more offsets
// than a batch's 32-bit last offset delta can span (a partition directory
// lost after meta.db recorded an HWM of three billion) is passed in batches
// of no records each within that limit, never one whose delta wraps
// negative, and a consumer reaches the HWM and the next record produced.
func TestFetchPassesALostRangeLongerThanABatch(t *testing.T) {
	const hwm = 3_000_000_000
	dir := t.TempDir()
	p := startPulse(t, dir, DefaultOptions())
	if err := p.eng.CreateTopic("hurt", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	if err := os.RemoveAll(layout.PartitionDir(dir, "hurt", 0)); err != nil {
		t.Fatal(err)
	}
	s, err := meta.Open(dir, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetHWM("hurt", 0, hwm); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p = startPulse(t, dir, DefaultOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := kgoClient(t, p.addr)
	from := int64(0)
	for from < hwm {
		batches := fetchBatches(ctx, t, cl, from)
		if len(batches) != 1 {
			t.Fatalf("fetch at %d: %d batches, want one of no records", from, len(batches))
		}
		b := batches[0]
		if b.FirstOffset != from || b.LastOffsetDelta < 0 || b.NumRecords != 0 {
			t.Fatalf("fetch at %d: batch at %d, last offset delta %d, %d records; want one of no records from %d with a delta of at least 0", from, b.FirstOffset, b.LastOffsetDelta, b.NumRecords, from)
		}
		from = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		if from > hwm {
			t.Fatalf("the batches of no records end at %d, past the HWM %d", from-1, hwm)
		}
	}
	// Each answer counts the part of the range its batch passes on, not
	// the rest of the range its read passed over too.
	info, err := p.eng.Describe("hurt")
	if err != nil {
		t.Fatal(err)
	}
	if n := info.Partitions[0].SkippedRecords; n != hwm {
		t.Fatalf("after the fetches through the lost range: skipped_records %d, want %d", n, int64(hwm))
	}
	acks, err := p.eng.Produce(ctx, "hurt", 0, []engine.Record{{Value: []byte("after")}})
	if err != nil {
		t.Fatal(err)
	}
	if acks[0].Offset != hwm {
		t.Fatalf("the record after the lost range got offset %d, want %d", acks[0].Offset, hwm)
	}
	if got := kcatToEnd(ctx, t, p.addr, "the lost range"); got != "3000000000 after\n" {
		t.Fatalf("kcat read %q, want the one record after the lost range", got)
	}
}

// kcatToEnd reads hurt/0 from the beginning to its end with kcat -e, a
// client nobody here wrote, and returns what it printed ("OFFSET VALUE"
// lines). A kcat that fails (does not get past what, before its end) fails
// the test.
func kcatToEnd(ctx context.Context, t *testing.T, addr, what string) string {
	t.Helper()
	kcat := need(t, "kcat", "-V")
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "hurt", "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o %s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -C -e: %v (the consumer did not get past %s)\n%s", err, what, out)
	}
	return string(out)
}
