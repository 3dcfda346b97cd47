package textcol

import (
	"reflect"
	"testing"
)

func TestSideBySide(t *testing.T) {
	got := SideBySide("LEFT", []string{"a", "longer line"}, "RIGHT", []string{"x"}, 6)
	want := []string{"LEFT   │ RIGHT", "a      │ x", "longe… │"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	got = SideBySide("L", []string{"ab", "abcd"}, "R", []string{"1", "2", "3"}, 0)
	want = []string{"L    │ R", "ab   │ 1", "abcd │ 2", "     │ 3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
