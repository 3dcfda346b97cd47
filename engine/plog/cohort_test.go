package plog

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// TestEveryWriteCohortThenLoneAppends: after sync passes that acked many
// producers at once (so the writer waits for that cohort before draining),
// the cohort stops and a lone producer appends: each of its appends is acked
// (the writer's wait is bounded and never needs the cohort back), and every
// record of both phases is stored once, in offset order, and readable after
// a reopen.
func TestEveryWriteCohortThenLoneAppends(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.SyncMode = SyncEveryWrite
	l := openLog(t, dir, o)
	const producers, rounds = 16, 20
	var wg sync.WaitGroup
	offsets := make(chan int64, producers*rounds)
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				off, _, err := l.Append(context.Background(), []codec.Record{{Value: []byte(fmt.Sprintf("p%d-%d", p, i))}})
				if err != nil {
					t.Error(err)
					return
				}
				offsets <- off
			}
		}()
	}
	wg.Wait()
	close(offsets)
	if t.Failed() {
		l.Close()
		return
	}
	seen := make([]bool, producers*rounds)
	for off := range offsets {
		if off < 0 || off >= int64(len(seen)) || seen[off] {
			t.Fatalf("offset %d handed out twice or out of range", off)
		}
		seen[off] = true
	}
	if n := l.lastAcked.Load(); n < 1 {
		t.Fatalf("last pass acked %d appends", n)
	}
	for i := range 50 {
		want := int64(producers*rounds + i)
		if off := mustAppend(t, l, codec.Record{Value: []byte(fmt.Sprint("lone", i))}); off != want {
			t.Fatalf("lone append %d at offset %d, want %d", i, off, want)
		}
		if l.HWM() <= want {
			t.Fatalf("lone append %d acked with HWM %d: not visible", i, l.HWM())
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, o)
	defer l.Close()
	total := int64(producers*rounds + 50)
	var got int64
	for from := int64(0); from < total; {
		r, err := l.Read(from, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) == 0 {
			t.Fatalf("read from %d after reopen: nothing, HWM %d, want %d records", from, r.HWM, total)
		}
		for _, rec := range r.Records {
			if rec.Offset != got {
				t.Fatalf("record at offset %d, want %d", rec.Offset, got)
			}
			got++
		}
		from = r.Next
	}
	if got != total || l.HWM() != total {
		t.Fatalf("%d records after reopen, HWM %d; want %d", got, l.HWM(), total)
	}
}
