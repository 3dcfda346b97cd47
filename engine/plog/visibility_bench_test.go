package plog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
)

// BenchmarkIntervalVisibility measures interval mode's trade between how
// soon an acked record becomes visible and how many bytes reach the device,
// for visibility windows around the default: one producer appends ~1 KiB
// records at 2,000 per second while a reader waits on NotifyC, as a live
// subscriber does. It reports the delay from the append call to the
// record's visibility (p50, p99) and, on Linux, the bytes this process
// caused to be written to the device (write_bytes of /proc/self/io) per
// byte of the values appended. Each fsync writes again the page the
// previous one left half full, so the bytes fall as the window grows and
// the delay rises with it (docs/architecture.md, "sync-mode interval").
//
//	go test ./engine/plog -run '^$' -bench IntervalVisibility -benchtime 2000x
func BenchmarkIntervalVisibility(b *testing.B) {
	for _, w := range []time.Duration{500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond} {
		b.Run("window="+w.String(), func(b *testing.B) {
			o := DefaultOptions()
			o.SyncMode = SyncInterval
			o.Codec = codec.CodecNone // as the websocket bench topics: the bytes on disk are the payload's
			o.VisibleWithin = w
			var syncs syncCounter
			o.Observer = &syncs
			l := openLog(b, b.TempDir(), o)
			defer l.Close()
			value := bytes.Repeat([]byte("x"), 1000)
			sent := make([]time.Time, b.N)
			delays := make([]float64, 0, b.N)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // the reader: wakes on each HWM move
				defer wg.Done()
				var next int64
				for next < int64(b.N) {
					c := l.NotifyC()
					hwm := l.HWM()
					now := time.Now()
					for ; next < hwm && next < int64(b.N); next++ {
						delays = append(delays, float64(now.Sub(sent[next]).Microseconds()))
					}
					if next < int64(b.N) {
						<-c
					}
				}
			}()
			w0, ioErr := selfWriteBytes()
			interval := time.Second / 2000
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				sent[i] = time.Now()
				if _, _, err := l.Append(context.Background(), []codec.Record{{Value: value}}); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			b.StopTimer()
			if ioErr == nil {
				w1, err := selfWriteBytes()
				if err == nil {
					b.ReportMetric(float64(w1-w0)/float64(b.N*len(value)), "disk_bytes/payload_byte")
				}
			}
			b.ReportMetric(float64(syncs.n.Load())/time.Since(start).Seconds(), "fsyncs/s")
			b.ReportMetric(float64(syncs.nanos.Load())/1e3/float64(max(1, syncs.n.Load())), "fsync_mean_us")
			slices.Sort(delays)
			b.ReportMetric(delays[len(delays)/2], "visible_p50_us")
			b.ReportMetric(delays[min(len(delays)-1, len(delays)*99/100)], "visible_p99_us")
		})
	}
}

// syncCounter counts a log's fsyncs.
type syncCounter struct{ n, nanos atomic.Int64 }

func (c *syncCounter) ObserveFsync(_ string, _ int, d time.Duration) {
	c.n.Add(1)
	c.nanos.Add(d.Nanoseconds())
}
func (c *syncCounter) ObserveCommit(string, int, int64, int) {}

// selfWriteBytes is write_bytes of /proc/self/io (Linux only).
func selfWriteBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("write_bytes: ")); ok {
			return strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/io: no write_bytes")
}
