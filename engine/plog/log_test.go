package plog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		crashChild()
		return
	}
	goleak.VerifyTestMain(m)
}

func testOptions() Options {
	o := DefaultOptions()
	o.SegmentMaxBytes = 64 << 10
	o.IndexIntervalBytes = 512
	return o
}

func openLog(t testing.TB, dir string, o Options) *Log {
	t.Helper()
	l, err := Open(dir, o)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, recs ...codec.Record) int64 {
	t.Helper()
	base, _, err := l.Append(context.Background(), recs)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return base
}

// readAll reads every visible record of l.
func readAll(t testing.TB, l *Log) []codec.Record {
	t.Helper()
	var out []codec.Record
	from := int64(0)
	for {
		r, err := l.Read(from, 100, 64<<10)
		if err != nil {
			t.Fatalf("read from %d: %v", from, err)
		}
		if len(r.Records) == 0 {
			return out
		}
		out = append(out, r.Records...)
		from = r.Next
	}
}

func sameRecord(a, b codec.Record) error {
	switch {
	case (a.Key == nil) != (b.Key == nil) || !bytes.Equal(a.Key, b.Key):
		return fmt.Errorf("key %q (nil %v) != %q (nil %v)", a.Key, a.Key == nil, b.Key, b.Key == nil)
	case (a.Value == nil) != (b.Value == nil) || !bytes.Equal(a.Value, b.Value):
		return fmt.Errorf("value of %d bytes (nil %v) != %d bytes (nil %v)", len(a.Value), a.Value == nil, len(b.Value), b.Value == nil)
	case len(a.Headers) != len(b.Headers):
		return fmt.Errorf("%d headers != %d", len(a.Headers), len(b.Headers))
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return fmt.Errorf("header %d differs", i)
		}
	}
	return nil
}

func TestRoundTripEveryRecordShape(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	shapes := []codec.Record{
		{Key: nil, Value: []byte("keyless")},
		{Key: []byte{}, Value: []byte("empty key")},
		{Key: []byte("user-1"), Value: nil}, // tombstone
		{Key: []byte("user-2"), Value: []byte{}},
		{Key: []byte("h"), Value: []byte(`{"a":1}`), Headers: []codec.Header{{Key: "trace", Value: []byte("abc")}, {Key: "empty", Value: []byte{}}}},
		{Key: []byte("big"), Value: big},
	}
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions()
			o.Codec = c
			o.SegmentMaxBytes = 4 << 20
			l := openLog(t, dir, o)
			for _, r := range shapes {
				mustAppend(t, l, r)
			}
			check := func(l *Log) {
				got := readAll(t, l)
				if len(got) != len(shapes) {
					t.Fatalf("read %d records, want %d", len(got), len(shapes))
				}
				var last int64
				for i, r := range got {
					if r.Offset != int64(i) {
						t.Fatalf("record %d has offset %d", i, r.Offset)
					}
					if r.Timestamp < last {
						t.Fatalf("timestamp went back at offset %d", i)
					}
					last = r.Timestamp
					if err := sameRecord(r, shapes[i]); err != nil {
						t.Fatalf("offset %d: %v", i, err)
					}
				}
			}
			check(l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, o)
			defer l.Close()
			check(l)
		})
	}
}

func TestRotationAndLookupsAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.Codec = codec.CodecNone
	l := openLog(t, dir, o)
	const n = 3000
	for i := 0; i < n; i += 10 {
		recs := make([]codec.Record, 10)
		for j := range recs {
			recs[j] = codec.Record{Key: fmt.Appendf(nil, "k%d", i+j), Value: bytes.Repeat([]byte{byte(i + j)}, 200)}
		}
		mustAppend(t, l, recs...)
	}
	segs, err := l.Segments()
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 5 {
		t.Fatalf("only %d segments for %d records of 200 bytes with 64 KiB segments", len(segs), n)
	}
	for i, s := range segs {
		if s.Bytes > o.SegmentMaxBytes {
			t.Errorf("segment %d is %d bytes, limit %d", i, s.Bytes, o.SegmentMaxBytes)
		}
		if i > 0 && s.Base != segs[i-1].Next {
			t.Errorf("segment %d starts at %d, previous ends at %d", i, s.Base, segs[i-1].Next)
		}
		if want := fmt.Sprintf("%020d.log", s.Base); filepath.Base(s.Path) != want {
			t.Errorf("segment file %s, want %s", s.Path, want)
		}
	}
	check := func(l *Log) {
		// Random lookups land exactly, including on segment boundaries.
		for _, off := range []int64{0, 1, segs[1].Base - 1, segs[1].Base, segs[2].Base + 7, n - 1} {
			r, err := l.Read(off, 1, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Records) != 1 || r.Records[0].Offset != off || string(r.Records[0].Key) != fmt.Sprint("k", off) {
				t.Fatalf("read at %d gave %+v", off, r.Records)
			}
		}
		if got := len(readAll(t, l)); got != n {
			t.Fatalf("read %d records, want %d", got, n)
		}
	}
	check(l)
	l.Close()
	l = openLog(t, dir, o)
	defer l.Close()
	check(l)
	if l.HWM() != n || l.LEO() != n {
		t.Fatalf("after reopen HWM %d LEO %d, want %d", l.HWM(), l.LEO(), n)
	}
	if _, err := l.Read(n+1, 1, 0); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past the end: %v, want ErrOffsetOutOfRange", err)
	}
}

// In interval mode appends are acked once written, but nothing is visible
// before it is fsynced and verified.
func TestHWMNeverAheadOfFsyncedData(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.SyncMode = SyncInterval
	o.SyncInterval = time.Hour
	o.SyncBytes = 1 << 40
	l := openLog(t, dir, o)
	defer l.Close()
	for i := range 50 {
		mustAppend(t, l, codec.Record{Value: fmt.Appendf(nil, "v%d", i)})
	}
	if l.LEO() != 50 {
		t.Fatalf("LEO %d after 50 acked appends", l.LEO())
	}
	if h := l.HWM(); h != 0 {
		t.Fatalf("HWM %d before any fsync", h)
	}
	if r, _ := l.Read(0, 100, 0); len(r.Records) != 0 {
		t.Fatalf("read %d unsynced records", len(r.Records))
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if h := l.HWM(); h != 50 {
		t.Fatalf("HWM %d after Sync, want 50", h)
	}

	// Under concurrent every-write appends the HWM never passes the
	// durable end.
	l2 := openLog(t, t.TempDir(), testOptions())
	defer l2.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					mustAppend(t, l2, codec.Record{Value: []byte("x")})
				}
			}
		}()
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		h := l2.HWM()
		if d := l2.durable.Load(); h > d {
			t.Fatalf("HWM %d ahead of durable end %d", h, d)
		}
	}
	close(stop)
	wg.Wait()
}

// Every parked reader wakes at every advance: no missed wakeups.
func TestLongPollWakesEveryParkedReader(t *testing.T) {
	l := openLog(t, t.TempDir(), testOptions())
	defer l.Close()
	const readers, rounds = 16, 50
	var wg sync.WaitGroup
	got := make([]int, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := int64(0)
			for next < rounds {
				ch := l.NotifyC()
				res, err := l.Read(next, 1000, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if len(res.Records) > 0 {
					got[r] += len(res.Records)
					next = res.Next
					continue
				}
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Errorf("reader %d parked at %d missed a wakeup", r, next)
					return
				}
			}
		}()
	}
	for i := range rounds {
		mustAppend(t, l, codec.Record{Value: fmt.Appendf(nil, "%d", i)})
	}
	wg.Wait()
	for r, n := range got {
		if n != rounds {
			t.Errorf("reader %d saw %d records, want %d", r, n, rounds)
		}
	}
}

func TestConcurrentProducersGetDistinctIncreasingOffsets(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, testOptions())
	const producers, each = 16, 100
	offsets := make([][]int64, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := 1 + i%3
				recs := make([]codec.Record, n)
				for j := range recs {
					recs[j] = codec.Record{Key: fmt.Appendf(nil, "p%d", p), Value: fmt.Appendf(nil, "p%d-%d-%d", p, i, j)}
				}
				base, _, err := l.Append(context.Background(), recs)
				if err != nil {
					t.Error(err)
					return
				}
				for j := range n {
					offsets[p] = append(offsets[p], base+int64(j))
				}
			}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for p, offs := range offsets {
		for i, o := range offs {
			if seen[o] {
				t.Fatalf("offset %d given twice", o)
			}
			seen[o] = true
			if i > 0 && o <= offs[i-1] {
				t.Fatalf("producer %d got offset %d after %d", p, o, offs[i-1])
			}
		}
	}
	recs := readAll(t, l)
	if len(recs) != len(seen) {
		t.Fatalf("read %d records, acked %d", len(recs), len(seen))
	}
	for i, r := range recs {
		if r.Offset != int64(i) {
			t.Fatalf("record %d at offset %d: offsets not contiguous", i, r.Offset)
		}
	}
	l.Close()
}

// Many producers share fsyncs: the number of sync passes stays well below
// the number of appends.
func TestGroupCommitCoalescesProducers(t *testing.T) {
	l := openLog(t, t.TempDir(), testOptions())
	defer l.Close()
	const producers, each = 64, 20
	var wg sync.WaitGroup
	for range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				mustAppend(t, l, codec.Record{Value: []byte("v")})
			}
		}()
	}
	wg.Wait()
	passes := l.syncPasses.Load()
	if passes == 0 || passes > producers*each/2 {
		t.Fatalf("%d sync passes for %d appends from %d producers", passes, producers*each, producers)
	}
	t.Logf("%d appends, %d sync passes", producers*each, passes)
}

func TestAppendRejectsAndFailsCleanly(t *testing.T) {
	o := testOptions()
	o.MaxRecordBytes = 1000
	l := openLog(t, t.TempDir(), o)
	if _, _, err := l.Append(context.Background(), []codec.Record{{Value: make([]byte, 2000)}}); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("oversized record: %v", err)
	}
	if _, _, err := l.Append(context.Background(), nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty append: %v", err)
	}
	if l.LEO() != 0 {
		t.Fatalf("rejected appends moved LEO to %d", l.LEO())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Append(context.Background(), []codec.Record{{Value: []byte("x")}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	o := testOptions()
	o.Codec = codec.CodecNone
	l := openLog(t, t.TempDir(), o)
	defer l.Close()
	var stamps []int64
	for i := range 400 {
		_, ts, err := l.Append(context.Background(), []codec.Record{{Value: bytes.Repeat([]byte{'x'}, 300)}})
		if err != nil {
			t.Fatal(err)
		}
		stamps = append(stamps, ts)
		if i%100 == 99 {
			time.Sleep(3 * time.Millisecond)
		}
	}
	for _, i := range []int{0, 99, 100, 250, 399} {
		got, err := l.OffsetForTimestamp(stamps[i])
		if err != nil {
			t.Fatal(err)
		}
		// The answer is the first offset with that timestamp.
		want := i
		for want > 0 && stamps[want-1] >= stamps[i] {
			want--
		}
		if got != int64(want) {
			t.Fatalf("OffsetForTimestamp(ts of %d) = %d, want %d", i, got, want)
		}
	}
	if got, _ := l.OffsetForTimestamp(stamps[399] + 1000); got != l.HWM() {
		t.Fatalf("timestamp past the end gave %d, want HWM %d", got, l.HWM())
	}
}

// A degraded log never leaves a snapshot behind, so every later open scans
// in full and reports the damage again, and reads keep skipping it.
func TestDegradedLogKeepsReportingCorruption(t *testing.T) {
	dir, o := corruptOffset1(t)
	for round := range 2 {
		l := openLog(t, dir, o)
		rep := l.Report()
		if !rep.Degraded || len(rep.Corrupt) != 1 || rep.Corrupt[0].FirstOffset != 1 {
			l.Close()
			t.Fatalf("open %d: report %+v, want one corrupt range starting at offset 1", round, rep.Corrupt)
		}
		recs := readAll(t, l)
		if len(recs) != 199+round || recs[0].Offset != 0 || recs[1].Offset != 2 {
			l.Close()
			t.Fatalf("open %d: read %d records, offsets %d, %d; want %d skipping offset 1", round, len(recs), recs[0].Offset, recs[1].Offset, 199+round)
		}
		if l.SkippedRecords() != 1 {
			t.Fatalf("open %d: skipped %d, want 1", round, l.SkippedRecords())
		}
		mustAppend(t, l, codec.Record{Value: []byte("after")})
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "snapshot")); !os.IsNotExist(err) {
			t.Fatalf("open %d: a degraded log left a snapshot (%v)", round, err)
		}
	}
}

// Closing the log wakes readers parked on NotifyC, and NotifyC after Close
// returns a closed channel, so no reader stays parked on a log that is gone.
func TestCloseWakesParkedReaders(t *testing.T) {
	l := openLog(t, t.TempDir(), testOptions())
	ch := l.NotifyC()
	woke := make(chan struct{})
	go func() {
		<-ch
		close(woke)
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(5 * time.Second):
		t.Fatal("a reader parked on NotifyC was not woken by Close")
	}
	select {
	case <-l.NotifyC():
	default:
		t.Fatal("NotifyC after Close returned an open channel")
	}
}

// With nobody reading, interval-mode data is still fsynced on the syncer's
// timer and the HWM is persisted to the hwm file: the timer arms itself
// whenever such work waits (and sleeps otherwise). The second append lands
// while the syncer sleeps and before a sync is due, so only the armed timer
// can ever make it visible.
func TestTimedSyncAndHWMPersistenceWithoutReaders(t *testing.T) {
	dir := t.TempDir()
	o := testOptions()
	o.SyncMode = SyncInterval
	o.SyncInterval = 300 * time.Millisecond
	o.HWMInterval = 10 * time.Millisecond
	l := openLog(t, dir, o)
	defer l.Close()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 10s: %s (HWM %d)", what, l.HWM())
			}
		}
	}
	time.Sleep(400 * time.Millisecond) // a sync is due: the first append syncs at once
	mustAppend(t, l, codec.Record{Value: []byte("first")})
	waitFor("first record visible", func() bool { return l.HWM() == 1 })
	waitFor("hwm 1 persisted", func() bool { h, err := recovery.ReadHWM(dir); return err == nil && h == 1 })
	time.Sleep(50 * time.Millisecond) // the syncer has nothing timed left and sleeps
	mustAppend(t, l, codec.Record{Value: []byte("second")})
	waitFor("second record visible", func() bool { return l.HWM() == 2 })
	waitFor("hwm 2 persisted", func() bool { h, err := recovery.ReadHWM(dir); return err == nil && h == 2 })
}
