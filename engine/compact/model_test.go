package compact

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(sigkillChildEnv); dir != "" {
		sigkillChild(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

// model is the reference: every record ever appended, by offset.
type model struct {
	recs    map[int64]codec.Record
	newest  map[string]int64 // key → offset of its newest record
	keyless int
	cutoff  int64 // the largest tombstone cutoff any pass used (Unix ms)
}

func newModel() *model {
	return &model{recs: map[int64]codec.Record{}, newest: map[string]int64{}, cutoff: -1 << 62}
}

func (m *model) note(base, ts int64, recs []codec.Record) {
	for i, r := range recs {
		r.Offset, r.Timestamp = base+int64(i), ts
		m.recs[r.Offset] = r
		if r.Key == nil {
			m.keyless++
		} else {
			m.newest[string(r.Key)] = r.Offset
		}
	}
}

func logOptions(c codec.Codec) plog.Options {
	o := plog.DefaultOptions()
	o.SegmentMaxBytes = 16 << 10
	o.IndexIntervalBytes = 512
	o.Codec = c
	return o
}

func openLog(t testing.TB, dir string, o plog.Options) *plog.Log {
	t.Helper()
	l, err := plog.Open(dir, o)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

// appendRandom appends n records in a few batches: keys from a space of
// keys, some tombstones, some keyless.
func appendRandom(t testing.TB, l *plog.Log, m *model, rng *rand.Rand, n, keys int) {
	t.Helper()
	for n > 0 {
		k := min(n, 1+rng.IntN(40))
		n -= k
		recs := make([]codec.Record, k)
		for i := range recs {
			switch x := rng.IntN(100); {
			case x < 8:
				recs[i] = codec.Record{Value: []byte(fmt.Sprintf("keyless-%d", rng.Int()))}
			case x < 23:
				recs[i] = codec.Record{Key: []byte(fmt.Sprintf("key-%03d", rng.IntN(keys)))} // tombstone
			default:
				v := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, 20+rng.IntN(120))
				recs[i] = codec.Record{Key: []byte(fmt.Sprintf("key-%03d", rng.IntN(keys))), Value: v}
				if rng.IntN(10) == 0 {
					recs[i].Headers = []codec.Header{{Key: "h", Value: []byte("hv")}}
				}
			}
		}
		base, ts, err := l.Append(context.Background(), recs)
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		m.note(base, ts, recs)
	}
}

func readAll(t testing.TB, l *plog.Log) []codec.Record {
	t.Helper()
	var out []codec.Record
	from := l.LogStart()
	for {
		r, err := l.Read(from, 200, 256<<10)
		if err != nil {
			t.Fatalf("read from %d: %v", from, err)
		}
		if len(r.Records) == 0 {
			return out
		}
		for _, rec := range r.Records {
			rec.Key, rec.Value = bytes.Clone(rec.Key), bytes.Clone(rec.Value)
			out = append(out, rec)
		}
		from = r.Next
	}
}

func sameRecord(a, b codec.Record) bool {
	if (a.Key == nil) != (b.Key == nil) || !bytes.Equal(a.Key, b.Key) ||
		(a.Value == nil) != (b.Value == nil) || !bytes.Equal(a.Value, b.Value) ||
		a.Timestamp != b.Timestamp || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

// verify reads the whole log and checks it against the model: every record
// read is the model's record at its offset, offsets strictly increase, every
// keyless record is there, the last record read for every key is its newest
// one, and a newest record is missing only when it is a tombstone some pass
// was allowed to expire. It returns the records read.
func verify(t testing.TB, l *plog.Log, m *model) []codec.Record {
	t.Helper()
	recs := readAll(t, l)
	last := map[string]codec.Record{}
	keyless := 0
	prev := int64(-1)
	for _, r := range recs {
		if r.Offset <= prev {
			t.Fatalf("offset %d after %d", r.Offset, prev)
		}
		prev = r.Offset
		want, ok := m.recs[r.Offset]
		if !ok || !sameRecord(r, want) {
			t.Fatalf("offset %d: read key %q value %q, the model has key %q value %q (present %v)", r.Offset, r.Key, r.Value, want.Key, want.Value, ok)
		}
		if r.Key == nil {
			keyless++
		} else {
			last[string(r.Key)] = r
		}
	}
	if keyless != m.keyless {
		t.Fatalf("read %d keyless records, appended %d", keyless, m.keyless)
	}
	for k, off := range m.newest {
		want := m.recs[off]
		got, ok := last[k]
		switch {
		case ok && got.Offset != off:
			t.Fatalf("key %s: last record read is offset %d (tombstone %v), the newest is %d (tombstone %v): resurrected or lost", k, got.Offset, got.Value == nil, off, want.Value == nil)
		case !ok && want.Value != nil:
			t.Fatalf("key %s: newest value at offset %d is missing", k, off)
		case !ok && want.Timestamp > m.cutoff:
			t.Fatalf("key %s: tombstone at offset %d dropped before its retention passed", k, off)
		}
	}
	return recs
}

// compactOnce runs one pass with the clock shifted by shift.
func compactOnce(t testing.TB, l *plog.Log, m *model, o Options, shift time.Duration) Result {
	t.Helper()
	o.Now = func() time.Time { return time.Now().Add(shift) }
	now := time.Now()
	res, err := Run(context.Background(), l, o)
	if err != nil {
		t.Fatalf("compact: %v (%+v)", err, res)
	}
	if c := now.Add(shift).Add(time.Second).UnixMilli() - o.withDefaults().TombstoneRetention.Milliseconds(); c > m.cutoff {
		m.cutoff = c
	}
	return res
}

func TestCompactionMatchesReferenceModel(t *testing.T) {
	seeds := uint64(3)
	if os.Getenv("PULSE_LONG") != "" {
		seeds = 40
	}
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		for seed := uint64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", c, seed), func(t *testing.T) {
				t.Logf("seed %d", seed)
				rng := rand.New(rand.NewPCG(seed, seed*7919))
				dir := t.TempDir()
				lo := logOptions(c)
				l := openLog(t, dir, lo)
				defer func() { l.Close() }()
				m := newModel()
				o := Options{MinGainRatio: []float64{1e-9, 0.1, 0.5}[rng.IntN(3)]}
				compacted := 0
				for round := 0; round < 12; round++ {
					appendRandom(t, l, m, rng, 150+rng.IntN(250), 60)
					shift := time.Duration(0)
					if rng.IntN(3) == 0 {
						shift = 48 * time.Hour // every tombstone so far has expired
					}
					for k := rng.IntN(3); k >= 0; k-- {
						if compactOnce(t, l, m, o, shift).Outcome == OutcomeCompacted {
							compacted++
						}
					}
					verify(t, l, m)
					if rng.IntN(3) == 0 {
						if err := l.Close(); err != nil {
							t.Fatal(err)
						}
						l = openLog(t, dir, lo)
						verify(t, l, m)
					}
				}
				if compacted == 0 {
					t.Fatal("no pass compacted anything")
				}
				converge(t, l, m, o)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l = openLog(t, dir, lo)
				verify(t, l, m)
			})
		}
	}
}

// converge seals everything with keyless filler, runs passes with every
// tombstone expired until nothing changes, and checks the sealed segments
// hold no key's newest tombstone (all expired), and with the gate off one
// record per key.
func converge(t *testing.T, l *plog.Log, m *model, o Options) {
	t.Helper()
	segs, _ := l.Segments()
	for s, _ := l.Segments(); len(s) == len(segs); s, _ = l.Segments() {
		base, ts, err := l.Append(context.Background(), []codec.Record{{Value: bytes.Repeat([]byte("f"), 1000)}})
		if err != nil {
			t.Fatal(err)
		}
		m.note(base, ts, []codec.Record{{Value: bytes.Repeat([]byte("f"), 1000)}})
	}
	for i := 0; ; i++ {
		if i == 100 {
			t.Fatal("compaction does not converge")
		}
		if compactOnce(t, l, m, o, 48*time.Hour).Outcome != OutcomeCompacted {
			break
		}
	}
	recs := verify(t, l, m)
	segs, _ = l.Segments()
	activeBase := segs[len(segs)-1].Base
	seen := map[string]int{}
	for _, r := range recs {
		if r.Offset >= activeBase || r.Key == nil {
			continue
		}
		if r.Value == nil && m.newest[string(r.Key)] == r.Offset {
			t.Fatalf("expired tombstone for %s at offset %d still in a sealed segment", r.Key, r.Offset)
		}
		seen[string(r.Key)]++
		if o.MinGainRatio < 1e-6 && seen[string(r.Key)] > 1 {
			t.Fatalf("key %s twice in the sealed segments with the gain gate off", r.Key)
		}
	}
}

func TestCompactionKeepsTombstonesUntilTheirRetention(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, logOptions(codec.CodecNone))
	defer l.Close()
	m := newModel()
	app := func(recs ...codec.Record) {
		base, ts, err := l.Append(context.Background(), recs)
		if err != nil {
			t.Fatal(err)
		}
		m.note(base, ts, recs)
	}
	// The doomed key's value sits in the first segment among 150 distinct
	// keys, so rewriting that segment alone would never pass the gain gate.
	// Batches of 100 records, so that a rewrite cannot gain by merging
	// small batches either.
	for b := 0; b < 4; b++ {
		var recs []codec.Record
		if b == 0 {
			recs = append(recs, codec.Record{Key: []byte("doomed"), Value: []byte("old value")})
		}
		for i := len(recs); i < 100; i++ {
			recs = append(recs, codec.Record{Key: []byte(fmt.Sprintf("unique-%d-%d", b, i)), Value: bytes.Repeat([]byte("u"), 100)})
		}
		app(recs...)
	}
	app(codec.Record{Key: []byte("doomed")}) // the tombstone
	for b := 0; b < 4; b++ {
		recs := make([]codec.Record, 50)
		for i := range recs {
			recs[i] = codec.Record{Value: bytes.Repeat([]byte("k"), 100)}
		}
		app(recs...)
	}
	o := Options{}
	res := compactOnce(t, l, m, o, 0)
	if res.TombstonesDropped != 0 {
		t.Fatalf("fresh tombstone: %+v", res)
	}
	recs := verify(t, l, m)
	if !hasTombstone(recs, "doomed") {
		t.Fatal("a tombstone younger than its retention was dropped")
	}
	res = compactOnce(t, l, m, o, 23*time.Hour)
	if recs := verify(t, l, m); !hasTombstone(recs, "doomed") {
		t.Fatalf("tombstone dropped after 23h of a 24h retention: %+v", res)
	}
	res = compactOnce(t, l, m, o, 25*time.Hour)
	if res.TombstonesDropped != 1 {
		t.Fatalf("expired tombstone not dropped: %+v", res)
	}
	for _, r := range verify(t, l, m) {
		if string(r.Key) == "doomed" {
			t.Fatalf("key doomed still readable at offset %d after its tombstone expired", r.Offset)
		}
	}
}

func hasTombstone(recs []codec.Record, key string) bool {
	for _, r := range recs {
		if string(r.Key) == key && r.Value == nil {
			return true
		}
	}
	return false
}

func TestCompactionAbortsAtKeyCapAndChangesNothing(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, logOptions(codec.CodecZstd))
	defer l.Close()
	m := newModel()
	appendRandom(t, l, m, rand.New(rand.NewPCG(9, 9)), 1500, 200)
	before := dirState(t, dir)
	res := compactOnce(t, l, m, Options{MaxKeys: 50}, 48*time.Hour)
	if res.Outcome != OutcomeKeyCap || res.Keys != 50 {
		t.Fatalf("pass over 200 keys with a cap of 50: %+v", res)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("an aborted pass changed the directory:\n%s\nbecame\n%s", before, after)
	}
	verify(t, l, m)
	if res := compactOnce(t, l, m, Options{MaxKeys: 200}, 48*time.Hour); res.Outcome != OutcomeCompacted {
		t.Fatalf("pass with room for every key: %+v", res)
	}
	verify(t, l, m)
}

func TestCompactionGainGate(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, logOptions(codec.CodecNone))
	defer l.Close()
	m := newModel()
	app := func(recs ...codec.Record) {
		base, ts, err := l.Append(context.Background(), recs)
		if err != nil {
			t.Fatal(err)
		}
		m.note(base, ts, recs)
	}
	// One duplicate per segment's worth of unique keys: about 1% gain.
	for i := 0; i < 600; i++ {
		key := fmt.Sprintf("u%d", i)
		if i%100 == 99 {
			key = fmt.Sprintf("u%d", i-1)
		}
		app(codec.Record{Key: []byte(key), Value: bytes.Repeat([]byte("v"), 100)})
	}
	before := dirState(t, dir)
	res := compactOnce(t, l, m, Options{}, 0)
	if res.Outcome != OutcomeSkipped || res.SegmentsSkipped == 0 || res.BytesAfter != res.BytesBefore {
		t.Fatalf("1%% gain pass: %+v", res)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("a gated pass changed the directory:\n%s\nbecame\n%s", before, after)
	}
	res = compactOnce(t, l, m, Options{MinGainRatio: 0.001}, 0)
	if res.Outcome != OutcomeCompacted || res.BytesAfter >= res.BytesBefore || res.RecordsDropped == 0 {
		t.Fatalf("pass with a 0.1%% gate: %+v", res)
	}
	verify(t, l, m)
}

func TestCompactionDeletesEmptiedSegments(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, logOptions(codec.CodecNone))
	defer l.Close()
	m := newModel()
	// The same 20 keys over and over: every early segment empties.
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 2000; i++ {
		recs := []codec.Record{{Key: []byte(fmt.Sprintf("k%d", i%20)), Value: bytes.Repeat([]byte{byte(rng.IntN(256))}, 60)}}
		base, ts, err := l.Append(context.Background(), recs)
		if err != nil {
			t.Fatal(err)
		}
		m.note(base, ts, recs)
	}
	segsBefore, _ := l.Segments()
	res := compactOnce(t, l, m, Options{}, 0)
	if res.SegmentsDeleted == 0 || res.SegmentsDeleted+res.SegmentsRewritten > 4 {
		t.Fatalf("pass over a log of superseded segments: %+v", res)
	}
	segsAfter, _ := l.Segments()
	if len(segsAfter) != len(segsBefore)-res.SegmentsDeleted {
		t.Fatalf("%d segments before, %d after, %d deleted", len(segsBefore), len(segsAfter), res.SegmentsDeleted)
	}
	if l.LogStart() != segsAfter[0].Base || segsAfter[0].Base == segsBefore[0].Base {
		t.Fatalf("log start %d, first segment %d (was %d)", l.LogStart(), segsAfter[0].Base, segsBefore[0].Base)
	}
	verify(t, l, m)
}

// dirState lists the partition directory's files with sizes and contents'
// lengths, to see whether anything changed.
func dirState(t testing.TB, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "hwm" || e.Name() == "snapshot" {
			continue
		}
		fmt.Fprintf(&b, "%s %d %s\n", e.Name(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	}
	return b.String()
}

// Compaction passes run while a producer appends and readers read the
// whole log over and over: every read stays consistent (offsets increase,
// every record is intact, nothing skipped as corrupt), and the final state
// matches the model.
func TestCompactionConcurrentWithReadersAndWriters(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir, logOptions(codec.CodecZstd))
	defer l.Close()
	m := newModel()
	rng := rand.New(rand.NewPCG(5, 5))
	appendRandom(t, l, m, rng, 1500, 50)

	stop := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				from, prev := int64(0), int64(-1)
				for {
					res, err := l.Read(from, 1+rand.IntN(300), 64<<10)
					if err != nil {
						errs <- err
						return
					}
					if res.Skipped != 0 {
						errs <- fmt.Errorf("read from %d skipped %d offsets as corrupt", from, res.Skipped)
						return
					}
					if len(res.Records) == 0 {
						break
					}
					for _, rec := range res.Records {
						if rec.Offset <= prev {
							errs <- fmt.Errorf("offset %d after %d", rec.Offset, prev)
							return
						}
						prev = rec.Offset
						if rec.Key != nil && rec.Value != nil && !bytes.Equal(rec.Value, bytes.Repeat(rec.Value[:1], len(rec.Value))) {
							errs <- fmt.Errorf("offset %d: mangled value %q", rec.Offset, rec.Value)
							return
						}
					}
					from = res.Next
				}
			}
		}()
	}
	// The producer owns m until the readers stop.
	for i := 0; i < 20; i++ {
		appendRandom(t, l, m, rng, 100, 50)
		shift := time.Duration(0)
		if i%3 == 2 {
			shift = 48 * time.Hour
		}
		compactOnce(t, l, m, Options{MinGainRatio: 1e-9}, shift)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if l.Degraded() {
		t.Fatalf("log degraded: %v", l.CorruptRanges())
	}
	verify(t, l, m)
}
