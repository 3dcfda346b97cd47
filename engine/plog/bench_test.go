package plog

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

func benchLog(b *testing.B, c codec.Codec, mode SyncMode) *Log {
	o := DefaultOptions()
	o.Codec = c
	o.SyncMode = mode
	l, err := Open(b.TempDir(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// BenchmarkRead decodes a codec-none partition sequentially from the page
// cache; b.SetBytes makes -bench report MB/s.
func BenchmarkRead(b *testing.B) {
	l := benchLog(b, codec.CodecNone, SyncInterval)
	recs := make([]codec.Record, 1000)
	for i := range recs {
		recs[i] = codec.Record{Key: []byte("key"), Value: bytes.Repeat([]byte{'v'}, 1000)}
	}
	for range 64 {
		if _, _, err := l.Append(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
	_, size := l.Size()
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		from := int64(0)
		for {
			r, err := l.Read(from, 5000, 8<<20)
			if err != nil {
				b.Fatal(err)
			}
			if len(r.Records) == 0 {
				break
			}
			from = r.Next
		}
	}
}

// BenchmarkEveryWrite64 runs 64 producers appending one record at a time.
func BenchmarkEveryWrite64(b *testing.B) {
	l := benchLog(b, codec.CodecNone, SyncEveryWrite)
	rec := []codec.Record{{Value: bytes.Repeat([]byte{'v'}, 256)}}
	b.SetParallelism(32) // 64 goroutines on 2 CPUs
	b.ResetTimer()
	var once sync.Once
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := l.Append(context.Background(), rec); err != nil {
				once.Do(func() { b.Error(err) })
			}
		}
	})
	reportPasses(b, l)
}

// reportPasses reports group commit's figures: fsyncs (sync passes) per
// second and records per fsync.
func reportPasses(b *testing.B, l *Log) {
	passes := float64(l.syncPasses.Load())
	b.ReportMetric(passes/b.Elapsed().Seconds(), "fsyncs/s")
	b.ReportMetric(float64(b.N)/passes, "records/fsync")
}

// BenchmarkEveryWrite1 is one producer appending one record at a time: the
// commit rate the 64-producer run is compared against.
func BenchmarkEveryWrite1(b *testing.B) {
	l := benchLog(b, codec.CodecNone, SyncEveryWrite)
	rec := []codec.Record{{Value: bytes.Repeat([]byte{'v'}, 256)}}
	b.ResetTimer()
	for range b.N {
		if _, _, err := l.Append(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
	}
	reportPasses(b, l)
}

// BenchmarkAppendInterval appends 1 KiB records, 256 per call, from four
// producers to an interval-mode log (fsync every SyncBytes, verification
// before the HWM moves); MB/s is of encoded batch bytes.
func BenchmarkAppendInterval(b *testing.B) {
	l := benchLog(b, codec.CodecNone, SyncInterval)
	recs := make([]codec.Record, 256)
	for i := range recs {
		recs[i] = codec.Record{Key: []byte("key"), Value: bytes.Repeat([]byte{'v'}, 1000)}
	}
	b.SetBytes(int64(len(recs)) * 1024)
	b.SetParallelism(2)
	b.ResetTimer()
	var once sync.Once
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := l.Append(context.Background(), recs); err != nil {
				once.Do(func() { b.Error(err) })
			}
		}
	})
	if err := l.Sync(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendIntervalCodec appends ~1 KiB JSON-like records, 256 per
// call, from four producers to an interval-mode log with each codec, as
// `pulse bench`'s append step does; MB/s is of record bytes before
// compression, so zstd/none is the figure `append_interval_zstd_mbps /
// append_interval_mbps` compares.
func BenchmarkAppendIntervalCodec(b *testing.B) {
	recs := make([]codec.Record, 4096)
	size := 0
	for i := range recs {
		v := fmt.Appendf(nil, `{"id":%d,"type":"order.created","user":"user-%d","items":[`, i, i*7919%10000)
		for j := 0; len(v) < 1000; j++ {
			v = fmt.Appendf(v, `{"sku":"SKU-%05d","qty":%d},`, (i*131+j*7)%100000, 1+j%9)
		}
		v[len(v)-1] = ']'
		recs[i] = codec.Record{Key: fmt.Appendf(nil, "k%d", i%1000), Value: append(v, '}')}
		size += len(recs[i].Key) + len(recs[i].Value)
	}
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		b.Run(c.String(), func(b *testing.B) {
			l := benchLog(b, c, SyncInterval)
			b.SetBytes(int64(size))
			for b.Loop() {
				var wg sync.WaitGroup
				for p := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := p * 256; i < len(recs); i += 4 * 256 {
							if _, _, err := l.Append(context.Background(), recs[i:i+256]); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}
