package kafka

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/loopfs"
)

// TestFullDiskIsKafkaStorageError fills a real ext4 through the listener: a
// produce the disk cannot take is refused with KAFKA_STORAGE_ERROR, whose
// message names the cause, and stores nothing. The error is one Kafka
// clients retry: a franz-go producer that meets it gets its record through
// once space is freed, at the next offset, none handed out twice.
func TestFullDiskIsKafkaStorageError(t *testing.T) {
	mnt := loopfs.Mount(t, 16)
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, bytes.Repeat([]byte{1}, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPulse(t, filepath.Join(mnt, "data"), DefaultOptions())
	if err := p.eng.CreateTopic("full", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	cl := kgoClient(t, p.addr)
	recs := func() []engine.Record {
		out := make([]engine.Record, 32)
		for i := range out {
			v := make([]byte, 8<<10)
			rand.Read(v)
			out[i] = engine.Record{Value: v}
		}
		return out
	}
	var next int64 // offset the next stored batch gets
	refused := false
	for i := 0; !refused; i++ {
		if i > 200 {
			t.Fatal("the disk never filled")
		}
		got := produceRaw(t, cl, produceReq("full", 0, producerBatch(recs(), -1, -1, -1)))
		switch got.ErrorCode {
		case 0:
			if got.BaseOffset != next {
				t.Fatalf("batch %d stored at %d, want %d", i, got.BaseOffset, next)
			}
			next += 32
		case errKafkaStorageError:
			refused = true
			if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, "no space left on device") {
				t.Errorf("the refusal's message does not name the cause: %v", got.ErrorMessage)
			}
		default:
			t.Fatalf("batch %d on a filling disk: error %d, want KAFKA_STORAGE_ERROR (%d)", i, got.ErrorCode, errKafkaStorageError)
		}
	}
	info, err := p.eng.Describe("full")
	if err != nil {
		t.Fatal(err)
	}
	if hwm := info.Partitions[0].HWM; hwm != next {
		t.Fatalf("HWM %d after the refusal, want %d: the refused batch moved the log", hwm, next)
	}

	// What space the refused batch left, a second ballast takes, so that
	// nothing of the record below fits.
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4<<10)); err != nil {
			break
		}
	}
	f.Close()

	// A retrying producer's record waits out the full disk.
	prod := kgoClient(t, p.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	v := make([]byte, 64<<10)
	rand.Read(v)
	done := make(chan *kgo.Record, 1)
	var perr error
	prod.Produce(context.Background(), &kgo.Record{Topic: "full", Partition: 0, Value: v}, func(r *kgo.Record, err error) {
		perr = err
		done <- r
	})
	select {
	case r := <-done:
		t.Fatalf("a record larger than the free space was acked at %d (%v) before space was freed", r.Offset, perr)
	case <-time.After(300 * time.Millisecond):
	}
	for _, f := range []string{ballast, filler} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	r := <-done
	if perr != nil {
		t.Fatalf("the retried record after space was freed: %v", perr)
	}
	if r.Offset != next {
		t.Fatalf("the retried record stored at %d, want %d", r.Offset, next)
	}
}
