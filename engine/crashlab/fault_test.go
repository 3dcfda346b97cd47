package crashlab

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFault(t *testing.T) {
	good := []struct {
		in   string
		want Fault
	}{
		{"cut", Fault{Kind: Cut, Segment: -1, Pos: -1}},
		{"cut:1234", Fault{Kind: Cut, Segment: -1, Pos: 1234}},
		{"cut:SEGMENT=512:10", Fault{Kind: Cut, Segment: 512, Pos: 10}},
		{"flip", Fault{Kind: Flip, Segment: -1, Pos: -1}},
		{"flip:4096:3", Fault{Kind: Flip, Segment: -1, Pos: 4096, Bit: 3}},
		{"flip:segment=0:4096:7", Fault{Kind: Flip, Segment: 0, Pos: 4096, Bit: 7}},
		{"index:delete", Fault{Kind: IndexDelete, Segment: -1, Pos: -1}},
		{"INDEX:Corrupt:SEGMENT=42", Fault{Kind: IndexCorrupt, Segment: 42, Pos: -1}},
		{"snapshot:delete", Fault{Kind: SnapshotDelete, Segment: -1, Pos: -1}},
		{"snapshot:corrupt", Fault{Kind: SnapshotCorrupt, Segment: -1, Pos: -1}},
		{"hwm:delete", Fault{Kind: HWMDelete, Segment: -1, Pos: -1}},
		{"hwm:corrupt", Fault{Kind: HWMCorrupt, Segment: -1, Pos: -1}},
		{"hwm:ahead", Fault{Kind: HWMAhead, Segment: -1, Pos: -1}},
		{" orphan-tmp ", Fault{Kind: OrphanTmp, Segment: -1, Pos: -1}},
		{"compaction-crash", Fault{Kind: CompactionCrash, Segment: -1, Pos: -1}},
	}
	for _, g := range good {
		got, err := ParseFault(g.in)
		if err != nil || got != g.want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
			continue
		}
		// String round-trips.
		again, err := ParseFault(got.String())
		if err != nil || again != got {
			t.Errorf("ParseFault(%q.String() = %q) = %+v, %v", g.in, got.String(), again, err)
		}
	}
	bad := []struct{ in, says string }{
		{"", "empty fault"},
		{"melt", `unknown kind "melt"`},
		{"cut:abc", `"abc" is not a non-negative integer`},
		{"cut:-5", `"-5" is not`},
		{"cut:1:2", "cut takes one number"},
		{"flip:12", "flip takes a byte position and a bit"},
		{"flip:12:8", "bit 8 out of range 0..7"},
		{"index", "index needs an action (delete, corrupt)"},
		{"index:shred", `unknown kind "index:shred"`},
		{"hwm:ahead:5", "hwm:ahead takes no numbers"},
		{"snapshot:delete:SEGMENT=0", "does not act on one segment"},
		{"flip:SEGMENT=x:1:1", `segment "x" is not a base offset`},
		{"flip:SEGMENT=1:SEGMENT=2:1:1", "SEGMENT given twice"},
		{"cut:pos=3", `unknown element "pos=3"`},
	}
	for _, b := range bad {
		_, err := ParseFault(b.in)
		if !errors.Is(err, ErrBadFault) || !strings.Contains(err.Error(), b.says) {
			t.Errorf("ParseFault(%q) = %v; want ErrBadFault saying %q", b.in, err, b.says)
		}
	}
}

func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"cut:1234", "flip:4096:3", "index:delete:SEGMENT=0", "hwm:ahead", "flip:SEGMENT=9:1:7", "x:y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseFault(s)
		if err != nil {
			if !errors.Is(err, ErrBadFault) {
				t.Fatalf("ParseFault(%q): error %v does not match ErrBadFault", s, err)
			}
			return
		}
		again, err := ParseFault(got.String())
		if err != nil || again != got {
			t.Fatalf("ParseFault(%q) = %+v; its String %q parses to %+v, %v", s, got, got.String(), again, err)
		}
	})
}
