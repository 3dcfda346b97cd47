package engine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestDescriptorsStayBounded runs 120 partitions through a pool of 8 open
// segments: concurrent produces and reads on every partition, a restart, and
// more of both. The process's descriptors stay within the pool's bound
// (plus what it had before), and every acked record reads back.
func TestDescriptorsStayBounded(t *testing.T) {
	dir := t.TempDir()
	base := openFDs(t)
	o := DefaultOptions(dir)
	o.MaxOpenSegments = 8
	o.RetentionInterval, o.CompactionInterval = 0, 0
	const topics = 40
	bound := base + 2*o.MaxOpenSegments + 16 // meta.db, LOCK, and some slack for the runtime
	acks := map[string]Ack{}
	var mu sync.Mutex
	round := func(e *Engine, r int) {
		var wg sync.WaitGroup
		for i := range topics {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("t%02d", i)
				for j := range 5 {
					v := fmt.Sprintf("%s-r%d-%d", name, r, j)
					a, err := e.Produce(context.Background(), name, j%3, []Record{{Value: []byte(v)}})
					if err != nil {
						t.Errorf("produce %s: %v", v, err)
						return
					}
					mu.Lock()
					acks[v] = a[0]
					mu.Unlock()
					if _, err := e.Read(name, (j+1)%3, 0, 100, 1<<20); err != nil {
						t.Errorf("read %s: %v", name, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if n := openFDs(t); n > bound {
			t.Fatalf("round %d: %d descriptors open, the bound is %d", r, n, bound)
		}
	}
	check := func(e *Engine) {
		got := 0
		for i := range topics {
			name := fmt.Sprintf("t%02d", i)
			for p := range 3 {
				res, err := e.Read(name, p, 0, 10000, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range res.Records {
					a, ok := acks[string(rec.Value)]
					if !ok || a.Partition != p || a.Offset != rec.Offset {
						t.Fatalf("%s/%d offset %d: %q does not match its ack", name, p, rec.Offset, rec.Value)
					}
					got++
				}
			}
		}
		if got != len(acks) {
			t.Fatalf("read %d records, %d acked", got, len(acks))
		}
	}
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range topics {
		if err := e.CreateTopic(fmt.Sprintf("t%02d", i), TopicConfig{Partitions: 3, Codec: "none"}); err != nil {
			t.Fatal(err)
		}
	}
	round(e, 0)
	round(e, 1)
	check(e)
	if st := e.files.Stats(); st.Parked == 0 || st.Reopened == 0 {
		t.Fatalf("the pool never parked or reopened a segment: %+v", st)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n := openFDs(t); n > bound {
		t.Fatalf("after reopen: %d descriptors open, the bound is %d", n, bound)
	}
	check(e)
	round(e, 2)
	check(e)
}
