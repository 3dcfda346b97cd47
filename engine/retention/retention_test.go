package retention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/segment"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// segs builds descriptions: each segment holds 100 offsets and 1000 bytes,
// its newest record written at the given minute after t0; the last is
// active.
func segs(lastMinutes ...int) []Segment {
	out := make([]Segment, len(lastMinutes))
	for i, m := range lastMinutes {
		out[i] = Segment{
			Base: int64(i) * 100, Next: int64(i+1) * 100, Bytes: 1000, Records: 100,
			LastTimestamp: t0.Add(time.Duration(m) * time.Minute).UnixMilli(), Sealed: i < len(lastMinutes)-1,
		}
	}
	return out
}

func bases(ds []Deletion) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%d:%s", d.Base, d.Reason))
	}
	return out
}

func TestPlan(t *testing.T) {
	now := t0.Add(60 * time.Minute)
	cases := []struct {
		name      string
		segs      []Segment
		p         Policy
		want      []string
		protected bool
	}{
		{"no limits", segs(0, 10, 20, 30), Policy{}, nil, false},
		{"age: newest record older than the limit", segs(0, 10, 20, 59), Policy{MaxAge: 45 * time.Minute}, []string{"0:age", "100:age"}, false},
		{"age: exactly at the limit stays", segs(15, 20, 59), Policy{MaxAge: 45 * time.Minute}, nil, false},
		{"age never deletes the active segment", segs(0, 1, 2), Policy{MaxAge: time.Minute}, []string{"0:age", "100:age"}, false},
		{"size: until the whole log fits", segs(50, 51, 52, 53, 54), Policy{MaxBytes: 2500}, []string{"0:size", "100:size", "200:size"}, false},
		{"size counts the active segment", segs(50, 51), Policy{MaxBytes: 1999}, []string{"0:size"}, false},
		{"size never deletes the active segment", segs(50, 51), Policy{MaxBytes: 1}, []string{"0:size"}, false},
		{"both axes: age first, then size", segs(0, 50, 51, 52, 53), Policy{MaxAge: 30 * time.Minute, MaxBytes: 3000}, []string{"0:age", "100:size"}, false},
		{"stops at the first segment that may stay", segs(50, 0, 52), Policy{MaxAge: 30 * time.Minute}, nil, false},
		{"cursor protects its segment and what follows", segs(0, 1, 2, 3), Policy{MaxAge: time.Minute, Cursors: []int64{150}}, []string{"0:age"}, true},
		{"cursor in the active segment protects nothing sealed", segs(0, 1, 2), Policy{MaxAge: time.Minute, Cursors: []int64{250}}, []string{"0:age", "100:age"}, false},
		{"cursor below the log start protects nothing", segs(0, 1), Policy{MaxBytes: 1, Cursors: []int64{-5}}, []string{"0:size"}, false},
		{"cursor at a segment base", segs(0, 1, 2), Policy{MaxBytes: 1, Cursors: []int64{0}}, nil, true},
		{"nothing due: cursor irrelevant", segs(50, 51), Policy{MaxAge: time.Hour, Cursors: []int64{0}}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, protected := Plan(c.segs, c.p, now)
			if !slices.Equal(bases(got), c.want) || protected != c.protected {
				t.Fatalf("Plan = %v protected %v, want %v protected %v", bases(got), protected, c.want, c.protected)
			}
		})
	}
}

func openLog(t *testing.T, dir string) *plog.Log {
	t.Helper()
	o := plog.DefaultOptions()
	o.SegmentMaxBytes = 8 << 10
	o.IndexIntervalBytes = 512
	o.Codec = codec.CodecNone
	l, err := plog.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fill appends batches of 20 records of about 100 bytes until l has n
// segments, and returns the next offset.
func fill(t *testing.T, l *plog.Log, n int) int64 {
	t.Helper()
	next := l.LEO()
	for s, _ := l.Size(); s < n; s, _ = l.Size() {
		recs := make([]codec.Record, 20)
		for i := range recs {
			recs[i] = codec.Record{Key: []byte(fmt.Sprintf("k%d", next+int64(i))), Value: make([]byte, 80)}
		}
		base, _, err := l.Append(context.Background(), recs)
		if err != nil {
			t.Fatal(err)
		}
		next = base + int64(len(recs))
	}
	return next
}

// checkSuffix reads the whole log and checks it is exactly offsets
// [from, to), every record at its own offset.
func checkSuffix(t *testing.T, l *plog.Log, from, to int64) {
	t.Helper()
	off := from
	for {
		r, err := l.Read(0, 500, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if r.LogStart != from {
			t.Fatalf("log start %d, want %d", r.LogStart, from)
		}
		r, err = l.Read(off, 500, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Records) == 0 {
			break
		}
		for _, rec := range r.Records {
			if rec.Offset != off || string(rec.Key) != fmt.Sprintf("k%d", off) {
				t.Fatalf("read offset %d key %q, want offset %d", rec.Offset, rec.Key, off)
			}
			off++
		}
	}
	if off != to {
		t.Fatalf("read up to %d, want %d", off, to)
	}
}

func TestRunBySizeKeepsOffsetsAndSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	end := fill(t, l, 6)
	all, _ := l.Segments()
	var total int64
	for _, s := range all {
		total += s.Bytes
	}
	limit := total - all[0].Bytes - all[1].Bytes/2 // two segments must go
	res, err := Run(l, Policy{MaxBytes: limit}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != OutcomeTrimmed || len(res.Deleted) != 2 || res.BytesAfter > limit || res.BytesBefore != total {
		t.Fatalf("run: %+v", res)
	}
	c := res.ByReason()[ReasonSize]
	if c.Segments != 2 || c.Bytes != all[0].Bytes+all[1].Bytes || c.Records != all[0].Records+all[1].Records || c.Records != all[2].Base {
		t.Fatalf("size counters %+v for segments %+v %+v", c, all[0], all[1])
	}
	checkSuffix(t, l, all[2].Base, end)
	if res, _ := Run(l, Policy{MaxBytes: limit}, time.Now()); res.Outcome != OutcomeNothing {
		t.Fatalf("second run: %+v", res)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir)
	defer l.Close()
	checkSuffix(t, l, all[2].Base, end)
	base, _, err := l.Append(context.Background(), []codec.Record{{Key: []byte(fmt.Sprintf("k%d", end))}})
	if err != nil || base != end {
		t.Fatalf("append after trim: %d %v, want %d", base, err, end)
	}
}

func TestRunByAgeNeverDeletesTheActiveSegment(t *testing.T) {
	l := openLog(t, t.TempDir())
	defer l.Close()
	end := fill(t, l, 4)
	all, _ := l.Segments()
	res, err := Run(l, Policy{MaxAge: time.Hour}, time.Now().Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != len(all)-1 || res.ByReason()[ReasonAge].Segments != int64(len(all)-1) {
		t.Fatalf("run two hours later: %+v", res)
	}
	after, _ := l.Segments()
	if len(after) != 1 || after[0].Sealed || after[0].Base != all[len(all)-1].Base {
		t.Fatalf("segments left: %+v", after)
	}
	checkSuffix(t, l, after[0].Base, end)
	// Nothing is old yet at the real time.
	fill(t, l, 3)
	if res, _ := Run(l, Policy{MaxAge: time.Hour}, time.Now()); res.Outcome != OutcomeNothing {
		t.Fatalf("run at the real time: %+v", res)
	}
}

func TestRunProtectsCursorSegment(t *testing.T) {
	l := openLog(t, t.TempDir())
	defer l.Close()
	end := fill(t, l, 5)
	all, _ := l.Segments()
	cursor := all[2].Base + 3
	res, err := Run(l, Policy{MaxBytes: 1, Cursors: []int64{cursor}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 2 || res.LogStart != all[2].Base {
		t.Fatalf("run with a cursor in segment 2: %+v", res)
	}
	checkSuffix(t, l, all[2].Base, end)
	res, _ = Run(l, Policy{MaxBytes: 1, Cursors: []int64{cursor}}, time.Now())
	if res.Outcome != OutcomeProtected || len(res.Deleted) != 0 {
		t.Fatalf("second run: %+v", res)
	}
	res, _ = Run(l, Policy{MaxBytes: 1}, time.Now())
	if len(res.Deleted) != 2 {
		t.Fatalf("run without protection: %+v", res)
	}
}

// The crash windows of a trim, by file surgery: the manifest drops the
// segment (recording it as retired) before the .log is removed, so a crash
// before the .index removal leaves an orphan index, and a crash before the
// directory fsync may bring the last trimmed segment back (every earlier
// removal was made durable by the next manifest write's directory fsync).
// Either way the reopened log is consistent, finishes the recorded deletion
// and keeps every surviving offset.
func TestTrimCrashWindows(t *testing.T) {
	for _, window := range []string{"orphan index", "segment back"} {
		t.Run(window, func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir)
			end := fill(t, l, 4)
			all, _ := l.Segments()
			last := all[len(all)-2] // the last segment a trim removes
			logBytes, err := os.ReadFile(last.Path)
			if err != nil {
				t.Fatal(err)
			}
			idxPath := filepath.Join(dir, segment.IndexFile(last.Base))
			idxBytes, err := os.ReadFile(idxPath)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := Run(l, Policy{MaxBytes: 1}, time.Now()); err != nil || len(res.Deleted) != len(all)-1 {
				t.Fatalf("trim: %+v %v", res, err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			want := all[len(all)-1].Base
			if err := os.WriteFile(idxPath, idxBytes, 0o644); err != nil {
				t.Fatal(err)
			}
			if window == "segment back" {
				if err := os.WriteFile(last.Path, logBytes, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l = openLog(t, dir)
			defer l.Close()
			if rep := l.Report(); rep.Degraded {
				t.Fatalf("reopen after surgery: degraded: %s", rep.Summary())
			}
			if window == "segment back" {
				if _, err := os.Stat(last.Path); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("the recorded deletion of %s was not finished: %v", last.Path, err)
				}
			}
			checkSuffix(t, l, want, end)
		})
	}
}
