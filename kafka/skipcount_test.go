package kafka

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/internal/metrics"
)

// countedPulse is Pulse serving dir as pulse serve does, fetches going
// through internal/metrics's Backend, and the URL of its /metrics.
func countedPulse(t *testing.T, dir string) (*pulse, string) {
	t.Helper()
	eng, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	m.Watch(eng, nil)
	opts := DefaultOptions()
	opts.Records = m.Wrap(eng)
	p := startPulseOnEngine(t, eng, opts)
	web := httptest.NewServer(m.Handler())
	t.Cleanup(web.Close)
	return p, web.URL
}

// skippedOnMetrics scrapes url and returns pulse_partition_skipped_records
// of hurt/partition.
func skippedOnMetrics(t *testing.T, url string, partition int) int64 {
	t.Helper()
	series := fmt.Sprintf(`pulse_partition_skipped_records{partition="%d",topic="hurt"}`, partition)
	n, ok := onMetrics(t, url, series)
	if !ok {
		t.Fatalf("/metrics has no %s", series)
	}
	return n
}

// onMetrics scrapes url and returns the value of series (name{labels}),
// and whether it is there.
func onMetrics(t *testing.T, url, series string) (int64, bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", sc.Text(), err)
			}
			return int64(n), true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return 0, false
}

// fetchHurt is fetchHurtErr failing the test on an error.
func fetchHurt(ctx context.Context, t *testing.T, cl *kgo.Client, maxWaitMs, minBytes, maxBytes int32, at ...[2]int64) [][]kmsg.RecordBatch {
	t.Helper()
	b, err := fetchHurtErr(ctx, cl, maxWaitMs, minBytes, maxBytes, at...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A fetch at a corrupt range at the end that waits (kafkajs asks there
// again after the batch of no records past it) reads the partition again
// when its max_wait ends, and answers the same batch: skipped_records
// counts the range once for that answer, not once for each read the fetch
// made.
func TestFetchThatWaitsAtACorruptRangeCountsItOncePerAnswer(t *testing.T) {
	p, url := countedPulse(t, corruptTailDir(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	isSkip := func(b [][]kmsg.RecordBatch) bool { return isRangeAnswer(b[0], 3) }
	// The same connection asks twice, as kafkajs does.
	cl := kgoClient(t, p.addr)
	fetch := func() [][]kmsg.RecordBatch { return fetchHurt(ctx, t, cl, 100, 1, 1<<20, [2]int64{0, 3}) }
	if b := fetch(); !isSkip(b) {
		t.Fatalf("first fetch at the range: %+v, want a batch of a0 and one of no records over 3..4", b)
	}
	if n := skippedOnMetrics(t, url, 0); n != 2 {
		t.Fatalf("after the first answer over the range: skipped_records %d, want 2", n)
	}
	// Answered when its max_wait ends (nothing is produced), after a read
	// when it came and one when it woke.
	if b := fetch(); !isSkip(b) {
		t.Fatalf("second fetch at the range: %+v, want a batch of a0 and one of no records over 3..4", b)
	}
	if n := skippedOnMetrics(t, url, 0); n != 4 {
		t.Fatalf("after the second answer over the range: skipped_records %d, want 4 (2 per answer)", n)
	}
	// The record each answer leads with is not handed on: it is not read.
	if n, _ := onMetrics(t, url, `pulse_read_records_total{topic="hurt"}`); n != 0 {
		t.Fatalf("after two answers over the range: pulse_read_records_total %d, want 0", n)
	}
}

// A consumer whose fetches wait for more bytes than there are (kcat with a
// large fetch.min.bytes) gets the records and the batch of no records past
// the range after each fetch's max_wait: the range is counted once, not
// once for the read when the fetch came and again when it woke.
func TestFetchWaitingForMinBytesCountsASkippedRangeOnce(t *testing.T) {
	p, url := countedPulse(t, corruptTailDir(t))
	kcat := need(t, "kcat", "-V")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", p.addr, "-t", "hurt", "-p", "0", "-o", "beginning", "-e", "-q",
		"-X", "fetch.min.bytes=1000000", "-X", "fetch.wait.max.ms=100", "-f", "%o %s\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -C -e: %v\n%s", err, out)
	}
	if string(out) != "0 a0\n1 a1\n2 a2\n" {
		t.Fatalf("kcat read %q", out)
	}
	if n := skippedOnMetrics(t, url, 0); n != 2 {
		t.Fatalf("after kcat read to the end once: skipped_records %d, want 2", n)
	}
}

// A partition of a fetch whose answer has no room left for it (the fetch's
// max_bytes taken by the partition before it) is answered with nothing, so
// a corrupt range its read passed is not counted: the consumer asks there
// again, and the answer that carries the range counts it, once.
func TestFetchCountsNoRangeOfAPartitionItLeavesOut(t *testing.T) {
	dir := t.TempDir()
	p := startPulse(t, dir, DefaultOptions())
	if err := p.eng.CreateTopic("hurt", engine.TopicConfig{Partitions: 2, Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.eng.Produce(ctx, "hurt", 0, []engine.Record{{Value: []byte("a0")}, {Value: []byte("a1")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.eng.Produce(ctx, "hurt", 1, []engine.Record{{Value: []byte("b0")}, {Value: []byte("b1")}}); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	seg := filepath.Join(layout.PartitionDir(dir, "hurt", 1), layout.LogFile(0))
	fi, err := os.Stat(seg)
	if err != nil {
		t.Fatal(err)
	}
	damage.FlipByte(t, seg, fi.Size()-2) // partition 1's only batch: offsets 0..1
	p, url := countedPulse(t, dir)

	// max_bytes 1: partition 0 gets its first record (KIP-74), partition 1
	// nothing.
	got := fetchHurt(ctx, t, kgoClient(t, p.addr), 10000, 1, 1, [2]int64{0, 0}, [2]int64{1, 0})
	if len(got[0]) != 1 || got[0][0].NumRecords != 1 || len(got[1]) != 0 {
		t.Fatalf("fetch of both partitions: %+v, want a0 and nothing for partition 1", got)
	}
	if n := skippedOnMetrics(t, url, 1); n != 0 {
		t.Fatalf("after an answer with nothing of partition 1: skipped_records %d, want 0", n)
	}
	got = fetchHurt(ctx, t, kgoClient(t, p.addr), 10000, 1, 1<<20, [2]int64{1, 0})
	if len(got[0]) != 1 || got[0][0].NumRecords != 0 || got[0][0].FirstOffset != 0 || got[0][0].LastOffsetDelta != 1 {
		t.Fatalf("fetch of partition 1: %+v, want one batch of no records over 0..1", got)
	}
	if n := skippedOnMetrics(t, url, 1); n != 2 {
		t.Fatalf("after the answer over partition 1's range: skipped_records %d, want 2", n)
	}
}

// ListOffsets looks records up without handing any to the client: -3 (max
// timestamp) on a partition whose last offset is in a corrupt range answers
// offset -1 and counts nothing in skipped_records.
func TestListOffsetsCountsNoSkippedRange(t *testing.T) {
	p, url := countedPulse(t, corruptTailDir(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "hurt"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, kgoClient(t, p.addr))
	if err != nil {
		t.Fatal(err)
	}
	if part := resp.Topics[0].Partitions[0]; part.ErrorCode != 0 || part.Offset != -1 {
		t.Fatalf("ListOffsets -3: code %d, offset %d; want 0, -1 (offset 4 is in the corrupt range)", part.ErrorCode, part.Offset)
	}
	if n := skippedOnMetrics(t, url, 0); n != 0 {
		t.Fatalf("after ListOffsets -3: skipped_records %d, want 0", n)
	}
}
