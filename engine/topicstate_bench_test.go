package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkReadStallDuringCreateDelete creates and deletes a topic of 64
// partitions per iteration while a reader reads another topic in a loop:
// max_read_stall_ms is the slowest of those reads (the figure the topic
// states of topics.go exist to keep at a few milliseconds), p99_read_ms
// their 99th percentile, reads how many there were.
//
//	go test ./engine -run '^$' -bench ReadStallDuringCreateDelete -benchtime 20x
func BenchmarkReadStallDuringCreateDelete(b *testing.B) {
	benchReadStall(b, func(e *Engine, name string) error {
		if err := e.CreateTopic(name, TopicConfig{Partitions: 64, Codec: "none", SegmentMaxBytes: 1 << 20}); err != nil {
			return err
		}
		return e.DeleteTopic(name)
	})
}

// BenchmarkReadStallDuringGrow is the same figure while topics are grown
// from 1 partition to 64 (then deleted): the grow's I/O happens outside
// the engine's lock too.
func BenchmarkReadStallDuringGrow(b *testing.B) {
	benchReadStall(b, func(e *Engine, name string) error {
		if err := e.CreateTopic(name, TopicConfig{Partitions: 1, Codec: "none", SegmentMaxBytes: 1 << 20}); err != nil {
			return err
		}
		cfg, err := e.Describe(name)
		if err != nil {
			return err
		}
		c := cfg.Config
		c.Partitions = 64
		if err := e.AlterTopic(name, c); err != nil {
			return err
		}
		return e.DeleteTopic(name)
	})
}

// benchReadStall reports the latency of reads of one steady topic while
// churn runs once per iteration on a topic of its own.
func benchReadStall(b *testing.B, churn func(e *Engine, name string) error) {
	e := openEngine(b, b.TempDir())
	defer e.Close()
	if err := e.CreateTopic("steady", TopicConfig{Partitions: 1, Codec: "none"}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Produce(context.Background(), "steady", 0, []Record{{Value: []byte("v")}}); err != nil {
		b.Fatal(err)
	}

	stop := make(chan struct{})
	var (
		wg      sync.WaitGroup
		lat     []time.Duration
		readErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if _, err := e.Read("steady", 0, 0, 1, 1<<20); err != nil {
				readErr = err
				return
			}
			lat = append(lat, time.Since(start))
			// Paced like a consumer's polls, so the reader does not
			// starve the creates of the two cores.
			time.Sleep(200 * time.Microsecond)
		}
	}()

	b.ResetTimer()
	for i := range b.N {
		if err := churn(e, fmt.Sprintf("churn-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	if readErr != nil {
		b.Fatal(readErr)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	if len(lat) > 0 {
		b.ReportMetric(ms(lat[len(lat)-1]), "max_read_stall_ms")
		b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "p99_read_ms")
	}
	b.ReportMetric(float64(len(lat)), "reads")
}
