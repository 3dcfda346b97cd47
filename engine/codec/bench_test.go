package codec

import "testing"

// benchRecords is one flush's worth of 1 KiB JSON-like records (~1 MiB).
func benchRecords() ([]Record, int64) {
	recs := make([]Record, 1000)
	var raw int64
	for i := range recs {
		recs[i] = Record{Key: []byte("user-" + string(rune('a'+i%26))), Value: jsonRecord(i, 1024), Timestamp: 1_764_000_000_000 + int64(i/100)}
		raw += int64(len(recs[i].Value))
	}
	return recs, raw
}

func BenchmarkEncode(b *testing.B) {
	recs, raw := benchRecords()
	for _, c := range codecs {
		b.Run(c.String(), func(b *testing.B) {
			buf := make([]byte, 0, 2<<20)
			var n int
			b.SetBytes(raw)
			b.ReportAllocs()
			for b.Loop() {
				out, err := AppendBatch(buf[:0], 0, recs, EncodeOptions{Codec: c})
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.ReportMetric(float64(raw)/float64(n), "ratio")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	recs, raw := benchRecords()
	for _, c := range codecs {
		b.Run(c.String(), func(b *testing.B) {
			batch, err := AppendBatch(nil, 0, recs, EncodeOptions{Codec: c})
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]Record, 0, len(recs))
			b.SetBytes(raw)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeBatchInto(batch, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	recs, raw := benchRecords()
	batch, _ := AppendBatch(nil, 0, recs, EncodeOptions{})
	b.SetBytes(raw)
	for b.Loop() {
		if _, err := VerifyBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}
