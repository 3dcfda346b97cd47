package plog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// TestCompressedBesideTheWriter appends zstd records from four producers
// (large drains, whose batches are compressed on other goroutines while the
// writer writes) and from one producer of single records (compressed in
// line), then reads the segment files back: offsets are contiguous in file
// order, every batch's CRC holds, every record is the one its append was
// acked for, and every batch's bytes are exactly what codec.AppendBatch
// makes of its records, so moving compression off the writer changed no
// byte on disk.
func TestCompressedBesideTheWriter(t *testing.T) {
	o := DefaultOptions()
	o.Codec = codec.CodecZstd
	o.SyncMode = SyncInterval
	o.SegmentMaxBytes = 64 << 10 // a few rolls
	o.FlushRecords = 300
	dir := t.TempDir()
	l := openLog(t, dir, o)
	var mu sync.Mutex
	acks := map[int64]codec.Record{}
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range 12 {
				recs := make([]codec.Record, 256)
				for i := range recs {
					recs[i] = codec.Record{Key: fmt.Appendf(nil, "p%d", p), Value: fmt.Appendf(nil, `{"p":%d,"c":%d,"i":%d,"pad":"%0900d"}`, p, c, i, i*p)}
				}
				base, _, err := l.Append(context.Background(), recs)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i, r := range recs {
					acks[base+int64(i)] = r
				}
				mu.Unlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			r := codec.Record{Value: fmt.Appendf(nil, `{"single":%d}`, i)}
			base, _, err := l.Append(context.Background(), []codec.Record{r})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			acks[base] = r
			mu.Unlock()
		}
	}()
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	bases, err := segment.List(dir)
	if err != nil || len(bases) < 2 {
		t.Fatalf("segments %v (%v), want several", bases, err)
	}
	next, batches := int64(0), 0
	for _, b := range bases {
		data, err := os.ReadFile(filepath.Join(dir, segment.LogFile(b)))
		if err != nil {
			t.Fatal(err)
		}
		for pos := int64(0); pos < int64(len(data)); {
			h, err := codec.ParseHeader(data[pos:])
			if err != nil {
				t.Fatalf("segment %d position %d: %v", b, pos, err)
			}
			raw := data[pos : pos+h.Size()]
			batch, err := codec.DecodeBatch(raw)
			if err != nil {
				t.Fatalf("segment %d position %d: %v", b, pos, err)
			}
			if h.BaseOffset != next || h.Codec() != codec.CodecZstd {
				t.Fatalf("segment %d position %d: batch at offset %d codec %v, want offset %d zstd", b, pos, h.BaseOffset, h.Codec(), next)
			}
			for _, r := range batch.Records {
				if err := sameRecord(r, acks[r.Offset]); err != nil {
					t.Fatalf("offset %d: %v", r.Offset, err)
				}
			}
			again, err := codec.AppendBatch(nil, h.BaseOffset, batch.Records, codec.EncodeOptions{Codec: codec.CodecZstd})
			if err != nil || !bytes.Equal(again, raw) {
				t.Fatalf("segment %d position %d: the stored batch is not what AppendBatch makes of its records (%v)", b, pos, err)
			}
			next += int64(h.RecordCount)
			batches++
			pos += h.Size()
		}
	}
	if next != int64(len(acks)) || len(acks) != 4*12*256+200 {
		t.Fatalf("read %d offsets, %d acked", next, len(acks))
	}
	t.Logf("%d records in %d batches in %d segments", next, batches, len(bases))
}
