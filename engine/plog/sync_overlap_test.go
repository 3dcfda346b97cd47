package plog

import (
	"context"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
)

// The writer keeps writing while a sync pass waits on the disk: an
// interval-mode append is acked once written, so it completes while a pass
// holds syncMu (here held by the test, as a pass on a slow disk holds it
// for its fsync and re-read). A writer that waited for the pass would write
// nothing until the disk answered, and a bulk producer would get only what
// fits between fsyncs.
func TestWriterWritesWhileASyncPassRuns(t *testing.T) {
	o := testOptions()
	o.SyncMode = SyncInterval
	l := openLog(t, t.TempDir(), o)
	defer l.Close()
	ctx := context.Background()
	if _, _, err := l.Append(ctx, []codec.Record{{Value: []byte("first")}}); err != nil {
		t.Fatal(err)
	}
	l.syncMu.Lock() // a sync pass under way
	done := make(chan error, 1)
	go func() {
		for i := range 100 {
			if _, _, err := l.Append(ctx, []codec.Record{{Value: []byte{byte(i)}}}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		l.syncMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // a liveness bound, not a timing check
		l.syncMu.Unlock()
		t.Fatal("100 interval-mode appends were not acked while a sync pass held syncMu: the writer waits for the syncer")
	}
	if got := l.LEO(); got != 101 {
		t.Fatalf("log end %d after 101 appends, want 101", got)
	}
}
