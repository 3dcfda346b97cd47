package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkManyTopics appends batches of 100 records of 1 KiB (codec none,
// interval mode) from 64 goroutines to one topic, then round-robin to 100
// topics of one partition: the engine's own figure behind the websocket
// bench's topics100 / topics1. Each partition written makes its records
// visible within its own window, with an fsync and a re-read of its own,
// so 100 partitions pay about 100 times the fsyncs of one.
//
//	go test ./engine -run '^$' -bench ManyTopics -benchtime 10000x
func BenchmarkManyTopics(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("topics=%d", n), func(b *testing.B) {
			e, err := Open(DefaultOptions(b.TempDir()))
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			topics := make([]string, n)
			for i := range topics {
				topics[i] = fmt.Sprintf("t%d", i)
				if err := e.CreateTopic(topics[i], TopicConfig{Partitions: 1, Codec: "none", SyncMode: SyncInterval}); err != nil {
					b.Fatal(err)
				}
			}
			recs := make([]Record, 100)
			for i := range recs {
				recs[i] = Record{Value: make([]byte, 1024)}
			}
			b.SetBytes(100 * 1024)
			b.ResetTimer()
			var mu sync.Mutex
			next := 0
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for {
						mu.Lock()
						i := next
						next++
						mu.Unlock()
						if i >= b.N {
							return
						}
						if _, err := e.Produce(context.Background(), topics[i%n], 0, recs); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
