package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/themes"
)

// :theme recolours a crash lab result already on screen.
func TestCrashLabResultFollowsTheme(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	data, part := crashDataDir(t, "none", 3)
	e := reopen(t, data, false)
	segs, err := crashlab.Layout(part)
	if err != nil {
		t.Fatal(err)
	}
	last := segs[0].Batches[len(segs[0].Batches)-1]
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("crashlab orders 0"))
	tm.Send(enter)
	want := (crashlab.Fault{Kind: crashlab.Cut, Segment: 0, Pos: last.Pos + last.Size/2}).String()
	waitFor(t, tm, want)
	tm.Send(enter)
	waitFor(t, tm, "What changed")
	m := finish(t, tm)
	verdict := func() string {
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.Contains(l, "verdict:") {
				return l
			}
		}
		t.Fatalf("no verdict on screen:\n%s", m.View())
		return ""
	}
	dark := verdict()
	st, err := themes.New(themes.Options{Name: "light"})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(themeMsg{st})
	if light := verdict(); light == dark {
		t.Fatalf("the verdict kept its dark colours after :theme light: %q", light)
	}
}

// The default cut applied to a partition that grew after it was shown
// still tears only the last batch: it is resolved against the copy.
func TestCrashLabDefaultCutOnBusyPartition(t *testing.T) {
	data, _ := crashDataDir(t, "none", 3)
	e := reopen(t, data, false)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Send(keys("crashlab orders 0"))
	tm.Send(enter)
	waitFor(t, tm, "cut:SEGMENT=0:")
	// Busy: six more batches of 10 records commit before enter.
	for b := 3; b < 9; b++ {
		produce(t, e, "orders", 0, orderRecords(b*10, 10)...)
	}
	tm.Send(enter)
	waitFor(t, tm, "What changed")
	m := finish(t, tm)
	if v := m.View(); !strings.Contains(v, "torn tail truncated") || !strings.Contains(v, " 10 records lost") {
		t.Fatalf("the default cut on a grown partition:\n%s", v)
	}
}
