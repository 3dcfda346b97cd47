package plog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// TestProducerStamps: appends of idempotent producers, racing plain appends
// that group commit would otherwise coalesce with them, are each stored as
// one batch of their own with their stamp, even past the flush limits; the
// plain records carry none; ProducerBatches lists them after a reopen, and
// not before they are visible.
//
// With zstd and large values, drains are big enough to be cut into a batch
// per core and compressed beside the writer: the stamped appends still keep
// a batch of their own.
func TestProducerStamps(t *testing.T) {
	t.Run("none", func(t *testing.T) { testProducerStamps(t, codec.CodecNone, 0) })
	t.Run("zstd-large", func(t *testing.T) { testProducerStamps(t, codec.CodecZstd, 4<<10) })
}

func testProducerStamps(t *testing.T, c codec.Codec, pad int) {
	dir := t.TempDir()
	o := testOptions()
	o.Codec = c
	o.SegmentMaxBytes = 16 << 20
	o.FlushRecords = 10
	l := openLog(t, dir, o)
	recs := func(tag string, n int) []codec.Record {
		out := make([]codec.Record, n)
		for i := range out {
			v := fmt.Appendf(nil, "%s-%d", tag, i)
			for len(v) < pad {
				v = append(v, byte('a'+len(v)%7))
			}
			out[i] = codec.Record{Key: []byte("k"), Value: v}
		}
		return out
	}
	type want struct {
		stamp codec.ProducerStamp
		n     int
		base  int64
	}
	var (
		mu    sync.Mutex
		wants = map[codec.ProducerStamp]want{}
		wg    sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(2)
		go func() { // a plain producer
			defer wg.Done()
			for i := range 20 {
				if _, _, err := l.Append(context.Background(), recs(fmt.Sprintf("plain%d.%d", w, i), 3)); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() { // an idempotent one
			defer wg.Done()
			seq := int32(0)
			for i := range 20 {
				n := 1 + i%4
				if i == 7 {
					n = 35 // more than FlushRecords: still one batch
				}
				st := codec.ProducerStamp{ID: uint32(100 + w), Epoch: uint32(w), BaseSequence: seq}
				base, _, err := l.AppendProducer(context.Background(), recs(fmt.Sprintf("idem%d.%d", w, i), n), st)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				wants[st] = want{st, n, base}
				mu.Unlock()
				seq += int32(n)
			}
		}()
	}
	wg.Wait()
	check := func(l *Log) {
		t.Helper()
		got := map[codec.ProducerStamp]ProducerBatch{}
		if err := l.ProducerBatches(func(b ProducerBatch) { got[b.Producer] = b }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(wants) {
			t.Fatalf("%d stamped batches, want %d", len(got), len(wants))
		}
		for st, w := range wants {
			if b := got[st]; b.BaseOffset != w.base || b.Records != w.n {
				t.Errorf("stamp %+v: batch at %d of %d records, want at %d of %d", st, b.BaseOffset, b.Records, w.base, w.n)
			}
		}
		// Every stamped record is where its batch says, and no plain
		// record is inside a stamped batch.
		all := readAll(t, l)
		for st, w := range wants {
			for i := range w.n {
				if v := string(all[w.base+int64(i)].Value); v[:4] != "idem" || v[4] != byte('0'+st.ID-100) {
					t.Fatalf("offset %d in the batch of %+v holds %q", w.base+int64(i), st, v)
				}
			}
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, o)
	defer l.Close()
	check(l)
	// Too big for one batch: refused before anything is stored.
	hwm := l.HWM()
	huge := []codec.Record{{Value: make([]byte, codec.MaxBatchBytes)}}
	if _, _, err := l.AppendProducer(context.Background(), huge, codec.ProducerStamp{ID: 1}); err == nil {
		t.Fatal("a batch over MaxBatchBytes was accepted")
	}
	if l.HWM() != hwm || l.LEO() != hwm {
		t.Fatalf("HWM %d, LEO %d after a refused append, want %d", l.HWM(), l.LEO(), hwm)
	}
}

// A producer scan of a closed log fails with ErrClosed, as an append does:
// the engine tells a topic deleted under the Kafka listener's scan by it.
func TestProducerBatchesOfClosedLogIsErrClosed(t *testing.T) {
	l := openLog(t, t.TempDir(), testOptions())
	if _, _, err := l.AppendProducer(context.Background(), []codec.Record{{Value: []byte("v")}}, codec.ProducerStamp{ID: 7}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	err := l.ProducerBatches(func(ProducerBatch) { t.Error("a batch of a closed log") })
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("ProducerBatches after Close: %v, want ErrClosed", err)
	}
}
