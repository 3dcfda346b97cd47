//go:build unix

package wsapi

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// BenchmarkConsume reads 20,000 ~1 KiB records (produced as JSON, so
// JSON pushes embed their values unchecked) from earliest over one
// connection per iteration, with JSON and with binary pushes; cpu-us/rec
// is the process's CPU time (server and client together) per record.
func BenchmarkConsume(b *testing.B) {
	ts := startServer(b, DefaultOptions())
	ctx := context.Background()
	admin := dialClient(b, ts.addr)
	if _, err := admin.CreateTopic(ctx, "bench", wire.TopicConfig{Codec: "none", SyncMode: "interval"}); err != nil {
		b.Fatal(err)
	}
	const n = 20000
	recs := benchRecords(n)
	for i := 0; i < n; i += 500 {
		if _, err := admin.Produce(ctx, "bench", 0, recs[i:i+500]); err != nil {
			b.Fatal(err)
		}
	}
	for _, binary := range []bool{false, true} {
		b.Run(map[bool]string{false: "json", true: "binary"}[binary], func(b *testing.B) {
			c := dialClient(b, ts.addr)
			b.ReportAllocs()
			cpu0 := processCPU(b)
			for b.Loop() {
				sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "bench", Partition: -1, From: "earliest", Binary: binary, Buffer: 64})
				if err != nil {
					b.Fatal(err)
				}
				for got := 0; got < n; {
					p := <-sub.C()
					if p.Err != nil {
						b.Fatal(p.Err)
					}
					got += len(p.Records)
				}
				if err := sub.Unsubscribe(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N*n), "cpu-us/rec")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rec")
		})
	}
}

// processCPU is the user and system CPU time the process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
