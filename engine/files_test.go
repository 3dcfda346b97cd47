package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/internal/layout"
)

// TestSegmentFilesCheckTheirInput: the UI's file methods take a topic name
// and partition, which are checked before they reach a path, and refuse a
// negative position; nothing is read then.
func TestSegmentFilesCheckTheirInput(t *testing.T) {
	e, err := Open(DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("orders", DefaultTopicConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Produce(context.Background(), "orders", 0, []Record{{Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		topic string
		p     int
		from  int64
		want  error
	}{
		{"../../etc", 0, 0, ErrInvalidTopic},
		{"nope", 0, 0, ErrTopicNotFound},
		{"orders", 1, 0, ErrPartitionOutOfRange},
		{"orders", -1, 0, ErrPartitionOutOfRange},
		{"orders", 0, -1, ErrBadPosition},
	}
	for _, c := range cases {
		if _, err := e.SegmentFrames(c.topic, c.p, 0, c.from, -1, 10); !errors.Is(err, c.want) {
			t.Errorf("SegmentFrames(%q, %d, from %d): %v, want %v", c.topic, c.p, c.from, err, c.want)
		}
		fr := SegmentFrame{Pos: c.from, Size: 10, HeaderOK: true}
		if _, err := e.SegmentBatch(c.topic, c.p, 0, fr, BatchViewLimits{Stored: 100, Damaged: 100, Section: 100, Records: 1}); !errors.Is(err, c.want) {
			t.Errorf("SegmentBatch(%q, %d, at %d): %v, want %v", c.topic, c.p, c.from, err, c.want)
		}
		if c.from == 0 {
			if _, err := e.Snapshot(c.topic, c.p); !errors.Is(err, c.want) {
				t.Errorf("Snapshot(%q, %d): %v, want %v", c.topic, c.p, err, c.want)
			}
			if _, err := e.ResolveCrashFault(c.topic, c.p, CrashFault{Kind: "cut", Segment: -1, Pos: -1}); !errors.Is(err, c.want) {
				t.Errorf("ResolveCrashFault(%q, %d): %v, want %v", c.topic, c.p, err, c.want)
			}
		}
	}
	pg, err := e.SegmentFrames("orders", 0, 0, 0, -1, 10)
	if err != nil || len(pg.Frames) != 1 || pg.Frames[0].Damaged || pg.Next != pg.Size || pg.NextOffset != 1 {
		t.Fatalf("frames of orders/p0: %+v, %v", pg, err)
	}
	v, err := e.SegmentBatch("orders", 0, 0, pg.Frames[0], BatchViewLimits{Stored: 1 << 20, Damaged: 100, Section: 1 << 10, Records: 10})
	if err != nil || int64(len(v.Raw)) != pg.Frames[0].Size || len(v.Records.Records) != 1 || string(v.Records.Records[0].Value) != "v" {
		t.Fatalf("batch view: %+v, %v", v, err)
	}
}

// TestSegmentFramesPagesCarryTheExpectedOffset: a page ends with the offset
// the next batch must reach, so a copy of an earlier batch that opens the
// next page is as BAD there as in one long listing (and as for recovery).
func TestSegmentFramesPagesCarryTheExpectedOffset(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("orders", DefaultTopicConfig()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := e.Produce(context.Background(), "orders", 0, []Record{{Value: []byte("a")}, {Value: []byte("b")}}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.SegmentFrames("orders", 0, 0, 0, -1, 10)
	if err != nil || len(all.Frames) != 3 {
		t.Fatalf("%+v, %v", all, err)
	}
	// The segment becomes b0 b1 b0 b2: the copy of b0 is the third frame.
	path := filepath.Join(layout.PartitionDir(dir, "orders", 0), layout.LogFile(0))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f0, f2 := all.Frames[0], all.Frames[2]
	mixed := append(append(append([]byte(nil), b[:f2.Pos]...), b[f0.Pos:f0.Pos+f0.Size]...), b[f2.Pos:]...)
	if err := os.WriteFile(path, mixed, 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := e.SegmentFrames("orders", 0, 0, 0, -1, 2)
	if err != nil || len(first.Frames) != 2 || first.NextOffset != 4 || first.Next != f2.Pos {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	second, err := e.SegmentFrames("orders", 0, 0, first.Next, first.NextOffset, 2)
	if err != nil || len(second.Frames) != 2 {
		t.Fatalf("second page: %+v, %v", second, err)
	}
	if c := second.Frames[0]; !c.Damaged || !strings.Contains(c.Err, "below the expected 4") || c.Size != f0.Size {
		t.Errorf("the copy opening the second page: %+v", c)
	}
	if b2 := second.Frames[1]; b2.Damaged || b2.Header.BaseOffset != 4 {
		t.Errorf("the batch after the copy: %+v", b2)
	}
}
