package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// Mirror in process (run under -race too): every record of a two-partition
// local topic reaches the same partition number on the cluster in order,
// the lag reaches 0, and a second run copies nothing again.
func TestMirrorInProcess(t *testing.T) {
	addr := bootstrap(t)
	dstTopic := uniq(t, "copy")
	e, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("local", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		var recs []engine.Record
		for i := range 1500 {
			recs = append(recs, engine.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("%d-%d", p, i))})
		}
		if _, err := e.Produce(context.Background(), "local", p, recs); err != nil {
			t.Fatal(err)
		}
	}
	dst := openSource(t, addr)
	run := func() MirrorStatus {
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		var mu sync.Mutex
		var last MirrorStatus
		caught := make(chan struct{})
		var once sync.Once
		done := make(chan error, 1)
		go func() {
			done <- Mirror(ctx, e, dst, MirrorOptions{Topic: "local", ToTopic: dstTopic, BatchRecords: 200, Progress: func(st MirrorStatus) {
				mu.Lock()
				last = st
				mu.Unlock()
				if st.Partitions[0].Next == 1500 && st.Partitions[1].Next == 1500 && st.Lag() == 0 {
					once.Do(func() { close(caught) })
				}
			}})
		}()
		select {
		case <-caught:
		case err := <-done:
			t.Fatalf("Mirror returned before catching up: %v", err)
		case <-ctx.Done():
			t.Fatal("the mirror never caught up")
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return last
	}
	first := run()
	if first.Partitions[0].Copied+first.Partitions[1].Copied != 3000 {
		t.Fatalf("first run copied %+v", first.Partitions)
	}
	for p := range 2 {
		res, err := dst.Read(dstTopic, p, 0, 2000, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) != 1500 {
			t.Fatalf("cluster partition %d holds %d records", p, len(res.Records))
		}
		for i, r := range res.Records {
			if string(r.Value) != fmt.Sprintf("%d-%d", p, i) {
				t.Fatalf("cluster %d/%d: %q", p, i, r.Value)
			}
			if off, ok := mirroredOffset(r, p); !ok || off != int64(i) {
				t.Fatalf("cluster %d/%d: mirror headers say %d %v", p, i, off, ok)
			}
		}
	}
	second := run()
	if second.Partitions[0].Copied+second.Partitions[1].Copied != 0 || second.Partitions[0].Resumed != 1500 {
		t.Fatalf("second run %+v, want nothing copied, resumed at 1500", second.Partitions)
	}
	if off, ok, err := e.Cursor("mirror."+dstTopic, "local", 1); err != nil || !ok || off != 1500 {
		t.Fatalf("local cursor %d %v %v", off, ok, err)
	}
}

// MirrorFromServer reads through a Pulse's websocket API and commits its
// cursor there: a second run resumes from it. Each partition holds many
// pushes' worth of records (a push carries at most 500), so the pushes
// queue up on the connection while the mirror waits for its commits.
func TestMirrorFromServerInProcess(t *testing.T) {
	const mirrorServerRecords = 30000
	addr := bootstrap(t)
	dstTopic := uniq(t, "wscopy")
	e, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("local", engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	var recs []engine.Record
	for i := range mirrorServerRecords {
		recs = append(recs, engine.Record{Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprint(i))})
	}
	acks, err := e.Produce(context.Background(), "local", -1, recs)
	if err != nil {
		t.Fatal(err)
	}
	hwm := [3]int64{}
	for _, a := range acks {
		hwm[a.Partition] = max(hwm[a.Partition], a.Offset+1)
	}
	ws, _ := serve(t, e)
	c, stream := dialWS(t, ws), dialWS(t, ws)
	dst := openSource(t, addr)
	run := func() MirrorStatus {
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		var last MirrorStatus
		var mu sync.Mutex
		caught := make(chan struct{})
		var once sync.Once
		done := make(chan error, 1)
		go func() {
			done <- MirrorFromServer(ctx, c, stream, dst, MirrorOptions{Topic: "local", ToTopic: dstTopic, Progress: func(st MirrorStatus) {
				mu.Lock()
				last = st
				mu.Unlock()
				ok := true
				for p, mp := range st.Partitions {
					ok = ok && mp.Next == hwm[p]
				}
				if ok {
					once.Do(func() { close(caught) })
				}
			}})
		}()
		select {
		case <-caught:
		case err := <-done:
			t.Fatalf("MirrorFromServer returned before catching up: %v", err)
		case <-ctx.Done():
			t.Fatal("the mirror never caught up")
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return last
	}
	first := run()
	var copied int64
	for _, mp := range first.Partitions {
		copied += mp.Copied
	}
	if copied != mirrorServerRecords {
		t.Fatalf("first run copied %d", copied)
	}
	for p := range 3 {
		if off, ok, err := e.Cursor("mirror."+dstTopic, "local", p); err != nil || !ok || off != hwm[p] {
			t.Fatalf("cursor on p%d: %d %v %v, want %d", p, off, ok, err, hwm[p])
		}
		if _, end, err := dst.offsets(dstTopic, p); err != nil || end != hwm[p] {
			t.Fatalf("cluster p%d ends at %d (%v), want %d", p, end, err, hwm[p])
		}
	}
	second := run()
	for p, mp := range second.Partitions {
		if mp.Copied != 0 || mp.Resumed != hwm[p] {
			t.Fatalf("second run p%d: %+v", p, mp)
		}
	}
}

// Through a running Pulse the mirror produces and commits at most
// BatchRecords records at a time, as from a data dir, though a push of
// the subscription may carry more; the batches follow each other without
// a gap and end at the HWM.
func TestMirrorFromServerBatches(t *testing.T) {
	e, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("local", engine.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	recs := make([]engine.Record, 300)
	for i := range recs {
		recs[i] = engine.Record{Value: []byte(fmt.Sprint(i))}
	}
	if _, err := e.Produce(context.Background(), "local", 0, recs); err != nil {
		t.Fatal(err)
	}
	ws, _ := serve(t, e)
	l := wsLocal{c: dialWS(t, ws), pushes: dialWS(t, ws)}
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	const batch = 7
	next := int64(0)
	err = l.stream(ctx, "local", 0, 0, batch, func(got []engine.Record, n, _ int64) error {
		if len(got) > batch {
			return fmt.Errorf("a batch of %d records, want at most %d", len(got), batch)
		}
		if len(got) > 0 && (got[0].Offset != next || n != got[len(got)-1].Offset+1) {
			return fmt.Errorf("batch [%d, %d) next %d after %d", got[0].Offset, got[len(got)-1].Offset+1, n, next)
		}
		next = n
		if next == int64(len(recs)) {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if next != int64(len(recs)) {
		t.Fatalf("stream stopped at %d of %d", next, len(recs))
	}
}
