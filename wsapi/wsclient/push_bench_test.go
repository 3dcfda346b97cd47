package wsclient

import (
	"fmt"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/wsapi/wire"
)

// benchPushRecords are 500 records of the bench's shape: a short key and a
// ~1 KiB JSON value dense with short tokens (as pulse bench's records),
// checked as JSON at produce time.
func benchPushRecords() []engine.Record {
	recs := make([]engine.Record, 500)
	for i := range recs {
		v := fmt.Appendf(nil, `{"id":%d,"type":"order.created","user":"user-%d","ts":%d,"amount":%d.%02d,"tags":["a","b"],"items":[`,
			i, i%10000, 1764000000000+int64(i), i%500, i%100)
		for j := 0; len(v) < 1000; j++ {
			v = fmt.Appendf(v, `{"sku":"SKU-%05d","qty":%d},`, (i*31+j*7)%100000, 1+j%9)
		}
		v[len(v)-1] = ']'
		recs[i] = engine.Record{
			Offset: int64(1000 + i), Timestamp: 1764424800123 + int64(i/10), Attributes: codec.AttrJSONValue,
			Key:   fmt.Appendf(nil, "key-%d", i%64),
			Value: append(v, '}'),
		}
	}
	return recs
}

// BenchmarkDecodePush reads one 500-record push as the read loop does, a
// JSON push (fastPush; json-checked: without value_lens, as from an older
// server, so that every value is checked; json-headers: each record with
// two headers, as Kafka clients often write) and the same records in a
// binary push (binaryPush).
func BenchmarkDecodePush(b *testing.B) {
	recs := benchPushRecords()
	withHeaders := make([]engine.Record, len(recs))
	for i, r := range recs {
		r.Headers = []engine.Header{{Key: "source", Value: []byte("checkout")}, {Key: "trace", Value: fmt.Appendf(nil, "%016x", i)}}
		withHeaders[i] = r
	}
	for name, msg := range map[string][]byte{
		"json": push(1, 0, 1500, 0, recs), "json-checked": oldPush(1, 0, 1500, 0, recs),
		"json-headers": push(1, 0, 1500, 0, withHeaders),
	} {
		b.Run(name, func(b *testing.B) {
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
	}
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
