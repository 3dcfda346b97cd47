package plog

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
)

// fsyncClock is an Observer that keeps when the last data sync returned
// and how long it took.
type fsyncClock struct {
	end atomic.Int64 // UnixNano
	dur atomic.Int64 // ns
}

func (c *fsyncClock) ObserveFsync(_ string, _ int, d time.Duration) {
	c.dur.Store(int64(d))
	c.end.Store(time.Now().UnixNano())
}

func (c *fsyncClock) ObserveCommit(string, int, int64, int) {}

// BenchmarkEveryWriteLatency is one producer appending one 256-byte record
// at a time to an every-write log at about 2,000 appends/s while a reader
// waits for each record the way engine.LongPoll does (NotifyC, Read, wait).
// It reports percentiles (µs) of the whole append-to-ack and
// append-to-reader-wake times and of their parts: append to the start of
// the fsync that covers it (pre_fsync), the fdatasync itself, and the fsync's
// return to the ack (fsync_to_ack) and to the reader holding the record
// (fsync_to_wake). b.N is the number of appends.
func BenchmarkEveryWriteLatency(b *testing.B) {
	clock := &fsyncClock{}
	o := DefaultOptions()
	o.Codec = codec.CodecNone
	o.SyncMode = SyncEveryWrite
	o.Observer = clock
	l, err := Open(b.TempDir(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	n := b.N
	woken := make([]int64, n) // UnixNano at which the reader held offset i
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the reader: engine.LongPoll's pattern
		defer wg.Done()
		for from := int64(0); from < int64(n); {
			c := l.NotifyC()
			r, err := l.Read(from, 0, 0)
			if err != nil {
				b.Error(err)
				return
			}
			if len(r.Records) == 0 {
				<-c
				continue
			}
			now := time.Now().UnixNano()
			for _, rec := range r.Records {
				if rec.Offset < int64(n) {
					woken[rec.Offset] = now
				}
			}
			from = r.Next
		}
	}()
	rec := []codec.Record{{Value: bytes.Repeat([]byte{'v'}, 256)}}
	var ack, wake, pre, fsync, toAck, toWake []float64
	starts := make([]int64, n)
	ends, durs, acks := make([]int64, n), make([]int64, n), make([]int64, n)
	const period = 500 * time.Microsecond // 2,000 appends/s
	b.ResetTimer()
	next := time.Now()
	for i := range n {
		// Sleep, not spin: a spinning producer would hold a core the
		// reader needs to wake on (as no real producer does).
		time.Sleep(time.Until(next))
		next = next.Add(period)
		t0 := time.Now()
		off, _, err := l.Append(context.Background(), rec)
		t1 := time.Now().UnixNano()
		if err != nil {
			b.Fatal(err)
		}
		if off != int64(i) {
			b.Fatalf("append %d got offset %d", i, off)
		}
		starts[i], acks[i], ends[i], durs[i] = t0.UnixNano(), t1, clock.end.Load(), clock.dur.Load()
	}
	wg.Wait()
	b.StopTimer()
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	for i := range n {
		if woken[i] == 0 {
			b.Fatalf("the reader never held offset %d", i)
		}
		ack = append(ack, us(acks[i]-starts[i]))
		wake = append(wake, us(woken[i]-starts[i]))
		fsync = append(fsync, us(durs[i]))
		pre = append(pre, us(ends[i]-durs[i]-starts[i]))
		toAck = append(toAck, us(acks[i]-ends[i]))
		toWake = append(toWake, us(woken[i]-ends[i]))
	}
	for _, m := range []struct {
		name string
		xs   []float64
	}{{"ack", ack}, {"wake", wake}, {"pre_fsync", pre}, {"fsync", fsync}, {"fsync_to_ack", toAck}, {"fsync_to_wake", toWake}} {
		slices.Sort(m.xs)
		b.ReportMetric(m.xs[len(m.xs)/2], m.name+"_p50_us")
		b.ReportMetric(m.xs[len(m.xs)*99/100], m.name+"_p99_us")
	}
}
