package compact

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
)

// BenchmarkCompaction measures one pass over a log of 16k records of 1 KiB
// (16 MiB raw) in 1 MiB segments, half of them updates of 2000 hot keys: the dedupe pass
// reads everything and four segments are rewritten. Each iteration works on
// a fresh copy of the log; only the pass is timed.
func BenchmarkCompaction(b *testing.B) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		b.Run(c.String(), func(b *testing.B) {
			o := plog.DefaultOptions()
			o.SegmentMaxBytes = 1 << 20
			o.Codec = c
			o.SyncMode = plog.SyncInterval
			var scanned int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := b.TempDir()
				l, err := plog.Open(dir, o)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				vals := make([]byte, 1<<20) // random letters: zstd still has work
				for j := range vals {
					vals[j] = byte('a' + rng.IntN(26))
				}
				for n := 0; n < 16; n++ {
					recs := make([]codec.Record, 1000)
					for j := range recs {
						key := fmt.Sprintf("own-%d-%d", n, j)
						if rng.IntN(2) == 0 {
							key = fmt.Sprintf("hot-%d", rng.IntN(2000))
						}
						at := rng.IntN(len(vals) - 1000)
						recs[j] = codec.Record{Key: []byte(key), Value: vals[at : at+1000]}
					}
					if _, _, err := l.Append(context.Background(), recs); err != nil {
						b.Fatal(err)
					}
				}
				if err := l.Sync(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := Run(context.Background(), l, Options{Now: func() time.Time { return time.Now() }})
				b.StopTimer()
				if err != nil || res.Outcome != OutcomeCompacted {
					b.Fatalf("%+v %v", res, err)
				}
				scanned += res.BytesScanned
				l.Close()
			}
			b.SetBytes(scanned / int64(b.N))
		})
	}
}
