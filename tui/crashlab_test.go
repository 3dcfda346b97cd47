package tui

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine/crashlab"
)

func sums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func sameSums(t *testing.T, before, after map[string][32]byte) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("partition files: %d before, %d after", len(before), len(after))
	}
	for n, s := range before {
		if after[n] != s {
			t.Errorf("partition file %s changed", n)
		}
	}
}

// The crash lab applies its default fault (a cut inside the last batch) to
// a scratch copy, shows both reports, and leaves the partition untouched.
func TestCrashLabTornTail(t *testing.T) {
	data, part := crashDataDir(t, "zstd", 3)
	e := reopen(t, data, false)
	segs, err := crashlab.Layout(part)
	if err != nil {
		t.Fatal(err)
	}
	last := segs[0].Batches[len(segs[0].Batches)-1]
	before := sums(t, part)

	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("crashlab orders 0"))
	tm.Send(enter)
	want := (crashlab.Fault{Kind: crashlab.Cut, Segment: 0, Pos: last.Pos + last.Size/2}).String()
	waitFor(t, tm, "Topics / orders / p0 / crash lab", "index:corrupt", want)
	tm.Send(enter)
	waitFor(t, tm, "verdict: "+want+": torn tail truncated", "HEALTHY COPY", "FAULTED COPY", "What changed")
	m := finish(t, tm)
	v := m.View()
	for _, s := range []string{"(healthy copy)", "(faulted copy)", "truncated at", "applied to a scratch copy"} {
		if !strings.Contains(v, s) {
			t.Errorf("crash lab result lacks %q:\n%s", s, v)
		}
	}
	golden(t, m)
	sameSums(t, before, sums(t, part))
}

// Picking a partition and a kind, editing the position, applying a flip.
func TestCrashLabPickAndEdit(t *testing.T) {
	data, part := crashDataDir(t, "none", 3)
	e := reopen(t, data, false)
	segs, err := crashlab.Layout(part)
	if err != nil {
		t.Fatal(err)
	}
	before := sums(t, part)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("crashlab"))
	tm.Send(enter)
	waitFor(t, tm, "pick a partition", "orders/p0")
	tm.Send(enter)
	waitFor(t, tm, "cut:SEGMENT=0:")
	tm.Send(keys("j")) // flip
	waitFor(t, tm, "flip:SEGMENT=0:")
	tm.Send(tab)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	// The CRC field of the second batch, bit 0.
	tm.Send(keys("flip:" + itoa(segs[0].Batches[1].Pos+4) + ":0"))
	tm.Send(enter)
	waitFor(t, tm, "verdict: flip:SEGMENT=0:"+itoa(segs[0].Batches[1].Pos+4)+":0", "header field crc32c", "first read")
	finish(t, tm)
	sameSums(t, before, sums(t, part))
}

func itoa(n int64) string { return strings.TrimSpace(strings.Replace(humanCount(n), ",", "", -1)) }

// A fault that does not apply to the partition says why in full at 80
// columns (it wraps), and the partition is unchanged.
func TestCrashLabNotApplicableWraps(t *testing.T) {
	data, part := crashDataDir(t, "none", 3)
	e := reopen(t, data, false)
	before := sums(t, part)
	tm, m := startUISized(t, testOptions(e), 80, 24)
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("crashlab orders 0"))
	tm.Send(enter)
	waitFor(t, tm, "cut:SEGMENT=0:")
	tm.Send(tab)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tm.Send(keys("cut:SEGMENT=0:99999999"))
	tm.Send(enter)
	waitFor(t, tm, "not applicable")
	finish(t, tm)
	s := m.Top().(*crashLabScreen)
	if s.err == nil {
		t.Fatal("no error for a cut past the segment's end")
	}
	view := m.View()
	for _, w := range strings.Fields(s.err.Error()) {
		if !strings.Contains(view, w) {
			t.Errorf("%q of %q is not on screen:\n%s", w, s.err, view)
		}
	}
	sameSums(t, before, sums(t, part))
}
