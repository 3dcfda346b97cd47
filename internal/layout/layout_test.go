package layout

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestPartitionNames(t *testing.T) {
	for _, p := range []int{0, 3, 99999, 100000, 1 << 30} {
		name := PartitionName(p)
		got, ok := ParsePartitionName(name)
		if !ok || got != p {
			t.Errorf("ParsePartitionName(%q) = %d, %v; want %d", name, got, ok, p)
		}
	}
	if PartitionName(3) != "p00003" {
		t.Errorf("PartitionName(3) = %q", PartitionName(3))
	}
	for _, name := range []string{"p3", "p0003", "p+0003", "p-0003", "p000003", "p 0003", "P00003", "p", "", "00003", "p00003x", "p99999999999999999999"} {
		if p, ok := ParsePartitionName(name); ok {
			t.Errorf("ParsePartitionName(%q) = %d, true; want no partition", name, p)
		}
	}
	if got, want := PartitionDir("/d", "orders", 3), filepath.Join("/d", "topics", "orders", "p00003"); got != want {
		t.Errorf("PartitionDir = %q, want %q", got, want)
	}
}

func TestSegmentNames(t *testing.T) {
	for _, base := range []int64{0, 42, 1<<63 - 1} {
		for _, name := range []string{LogFile(base), IndexFile(base)} {
			got, ext, err := ParseSegmentFile(name)
			if err != nil || got != base || ext != filepath.Ext(name) {
				t.Errorf("ParseSegmentFile(%q) = %d, %q, %v", name, got, ext, err)
			}
		}
	}
	if LogFile(42) != "00000000000000000042.log" {
		t.Errorf("LogFile(42) = %q", LogFile(42))
	}
	for _, name := range []string{"42.log", "00000000000000000042.idx", "0000000000000000004x.log", "99999999999999999999.log", ".tmp-00000000000000000042.log", "00000000000000000042"} {
		if _, _, err := ParseSegmentFile(name); !errors.Is(err, ErrBadName) {
			t.Errorf("ParseSegmentFile(%q): err %v, want ErrBadName", name, err)
		}
	}
}
