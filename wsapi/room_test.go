package wsapi

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestReserveSeesRoomMadeAsItChecks: a push waiting for room in the send
// budget is woken by the write pump taking bytes off it, even when the
// pump takes them while the push is checking the budget (a wakeup lost
// there leaves the push waiting for SlowConsumerWait, and a reader that
// reads everything is closed as a slow consumer). Each round fills the
// budget, then frees it from another goroutine, spinning on another core,
// just as a reserve starts; a lost wakeup makes a reserve wait out the
// hang guard and fail.
func TestReserveSeesRoomMadeAsItChecks(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two cores to race the two sides")
	}
	const budget = 1000
	c := &conn{
		srv:      &Server{opts: Options{SendBytes: budget, SlowConsumerWait: 2 * hangGuard}},
		roomC:    make(chan struct{}),
		closingC: make(chan struct{}),
	}
	// A reserve that misses its wakeup gives up when ctx ends (before its
	// slow-consumer timer, which would close a connection this bare conn
	// does not have).
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var turn atomic.Int64 // the round the pump side is to free, then -round when it did
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for round := int64(1); ; round++ {
			for turn.Load() != round {
				select {
				case <-stop:
					return
				default:
				}
			}
			c.taken(budget)
			turn.Store(-round)
		}
	}()
	for round := int64(1); round <= 50000; round++ {
		c.queued.Store(budget)
		turn.Store(round)
		if !c.reserve(ctx, budget/2) {
			t.Fatalf("round %d: reserve gave up with %d bytes queued of %d", round, c.queued.Load(), budget)
		}
		for turn.Load() != -round {
		}
		c.taken(budget / 2)
	}
}
