package plog

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
)

// TestIntervalModeVisibleSoonAfterAck: in interval mode an acked record
// becomes visible (fsynced, verified, under the HWM) without any reader
// waiting and without the 1 s sync interval passing, and a watched log does
// not fsync once per write: appends made within one visibility window share
// one fsync. The delays are logged (figures, not assertions).
func TestIntervalModeVisibleSoonAfterAck(t *testing.T) {
	for _, watched := range []bool{false, true} {
		t.Run(fmt.Sprintf("watched=%v", watched), func(t *testing.T) {
			o := testOptions()
			o.SyncMode = SyncInterval
			o.SyncInterval = time.Hour // only the visibility window can make records visible
			o.HWMInterval = time.Hour
			l := openLog(t, t.TempDir(), o)
			defer l.Close()
			var delays []time.Duration
			for i := range 200 {
				if watched {
					l.NotifyC()
				}
				off := mustAppend(t, l, codec.Record{Value: []byte(fmt.Sprint(i))})
				acked := time.Now()
				for l.HWM() <= off {
					runtime.Gosched()
				}
				delays = append(delays, time.Since(acked))
			}
			slices.Sort(delays)
			t.Logf("ack to visible over %d appends: p50 %s p99 %s max %s (fsync passes %d)", len(delays),
				delays[len(delays)/2].Round(time.Microsecond), delays[len(delays)*99/100].Round(time.Microsecond),
				delays[len(delays)-1].Round(time.Microsecond), l.syncPasses.Load())

			// A burst: 100 appends back to back while a reader watches.
			before := l.syncPasses.Load()
			l.NotifyC()
			var last int64
			for i := range 100 {
				last = mustAppend(t, l, codec.Record{Value: []byte(fmt.Sprint("burst", i))})
			}
			for l.HWM() <= last {
				runtime.Gosched()
			}
			t.Logf("burst of 100 appends: %d fsync passes", l.syncPasses.Load()-before)
			if n := l.syncPasses.Load() - before; n >= 100 {
				t.Fatalf("a burst of 100 appends cost %d fsync passes: one per write", n)
			}
		})
	}
	_ = context.Background
}
