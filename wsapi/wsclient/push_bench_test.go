package wsclient

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/wsapi/wire"
)

// benchPushRecords are 500 records of the bench's shape: a short key and a
// ~1 KiB JSON value, checked as JSON at produce time.
func benchPushRecords() []engine.Record {
	recs := make([]engine.Record, 500)
	for i := range recs {
		recs[i] = engine.Record{
			Offset: int64(1000 + i), Timestamp: 1764424800123 + int64(i/10), Attributes: codec.AttrJSONValue,
			Key:   fmt.Appendf(nil, "key-%d", i%64),
			Value: fmt.Appendf(nil, `{"i":%d,"user":"u-%d","pad":"%s"}`, i, i%97, strings.Repeat("p", 980)),
		}
	}
	return recs
}

// BenchmarkDecodePush reads one 500-record push as the read loop does, a
// JSON push (fastPush) and the same records in a binary push (binaryPush).
func BenchmarkDecodePush(b *testing.B) {
	recs := benchPushRecords()
	b.Run("json", func(b *testing.B) {
		msg := push(1, 0, 1500, 0, recs)
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			var env envelope
			if got, ok := fastPush(msg, &env); !ok || len(got) != len(recs) {
				b.Fatal("fastPush refused the push")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/rec")
	})
	b.Run("binary", func(b *testing.B) {
		h := wire.BinaryPush{Sub: 1, Next: 1500}
		msg := wire.AppendBinaryPush(nil, &h, recs)
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		for b.Loop() {
			var env envelope
			if got := binaryPush(msg, &env); len(got) != len(recs) || env.Error != nil {
				b.Fatal("binaryPush refused the push")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/rec")
	})
}
