package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
)

// Every screen fills the terminal exactly, at any size, after a resize.
func TestResizeKeepsEveryScreenInside(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(tea.WindowSizeMsg{Width: 64, Height: 14})
	tm.Send(down)
	tm.Send(keys("t"))
	waitFor(t, tm, "orders / tail", "orders all 3 partitions", "1          24 ") // all partitions merged; p1@24 is the newest
	tm.Send(enter)
	waitFor(t, tm, "offset 24")
	m := finish(t, tm)
	for _, size := range []struct{ w, h int }{{64, 14}, {200, 50}, {40, 8}} {
		m.Update(tea.WindowSizeMsg{Width: size.w, Height: size.h})
		for depth := len(m.stack); depth >= 1; depth-- {
			m.stack = m.stack[:depth]
			lines := strings.Split(m.View(), "\n")
			if len(lines) != size.h {
				t.Errorf("%dx%d, %s: %d lines", size.w, size.h, m.Breadcrumbs(), len(lines))
			}
			for i, l := range lines {
				if w := lipgloss.Width(l); w > size.w {
					t.Errorf("%dx%d, %s: line %d is %d cells wide: %q", size.w, size.h, m.Breadcrumbs(), i, w, l)
				}
			}
		}
		m.stack = m.stack[:1]
	}
}

// The mouse wheel scrolls a table.
func TestMouseWheelScrolls(t *testing.T) {
	e := openEngine(t)
	for i := 0; i < 40; i++ {
		create(t, e, fmt.Sprintf("t%03d", i), engine.DefaultTopicConfig())
	}
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "t000")
	for i := 0; i < 4; i++ {
		tm.Send(tea.MouseMsg{Button: tea.MouseButtonWheelDown, Action: tea.MouseActionPress})
	}
	tm.Send(tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress})
	waitFor(t, tm, "▸ t009")
	m := finish(t, tm)
	if r, _ := m.Top().(*topicsScreen).table.Selected(); r.Key != "t009" {
		t.Fatalf("after wheel down ×4 and up ×1 the selection is %q, want t009", r.Key)
	}
}

// The rate sparkline samples the summed HWM of each refresh over the time
// between refreshes; the figure is the mean of the last three samples.
func TestTopicRateSamples(t *testing.T) {
	e := openEngine(t)
	now := testClock
	opts := testOptions(e)
	opts.Now = func() time.Time { return now }
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: testWidth, Height: testHeight})
	ts := m.stack[0].(*topicsScreen)
	info := func(hwm ...int64) topicsMsg {
		ti := engine.TopicInfo{Name: "orders", Config: engine.DefaultTopicConfig()}
		for p, h := range hwm {
			ti.Partitions = append(ti.Partitions, engine.PartitionInfo{Topic: "orders", Partition: p, HWM: h, LEO: h})
		}
		return topicsMsg{to: to{ts.id}, infos: []engine.TopicInfo{ti}}
	}
	ts.Update(info(0, 0))
	for _, hwm := range []int64{100, 300, 300, 700} { // +100, +200, 0, +400 per 2 s
		now = now.Add(2 * time.Second)
		ts.Update(info(hwm, hwm))
	}
	h := ts.rates["orders"]
	want := []float64{100, 200, 0, 400}
	if len(h.samples) != len(want) {
		t.Fatalf("samples %v, want %v", h.samples, want)
	}
	for i := range want {
		if h.samples[i] != want[i] {
			t.Fatalf("samples %v, want %v", h.samples, want)
		}
	}
	r, _ := ts.table.Selected()
	if got := r.Cells[6]; got != "    ▂▄▁█ 200/s" {
		t.Fatalf("rate cell %q", got)
	}
}

// Degraded and compacting partitions show on the topic's row.
func TestTopicBadges(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	ts := m.stack[0].(*topicsScreen)
	mk := func(name string, degraded, compacting bool) engine.TopicInfo {
		return engine.TopicInfo{Name: name, Config: engine.DefaultTopicConfig(), Partitions: []engine.PartitionInfo{
			{Partition: 0}, {Partition: 1, Degraded: degraded, Compacting: compacting},
		}}
	}
	ts.Update(topicsMsg{to: to{ts.id}, infos: []engine.TopicInfo{mk("a", true, false), mk("b", false, true), mk("c", false, false), mk("d", true, true)}})
	want := map[string]string{"a": "degraded", "b": "compacting", "c": "ok", "d": "degraded compacting"}
	for _, r := range ts.table.rows {
		if r.Cells[9] != want[r.Key] {
			t.Errorf("topic %s status %q, want %q", r.Key, r.Cells[9], want[r.Key])
		}
	}
}

// A click on a row selects it.
func TestMouseClickSelects(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "users")
	// Line 0 header, 1 breadcrumbs, 2 column titles, 3 clicks, 4 orders, 5 users.
	tm.Send(tea.MouseMsg{X: 10, Y: 5, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	waitFor(t, tm, "▸ users")
	tm.Send(tea.MouseMsg{X: 10, Y: 20, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress}) // below the rows: nothing
	tm.Send(enter)
	waitFor(t, tm, "Topics / users")
	finish(t, tm)
}

// A click on a tail row selects that record (and pauses a live tail).
func TestMouseClickOnTail(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("tail orders 1")
	tm.Send(enter)
	waitFor(t, tm, `"order":64`)
	// Body line 0 status, 1 titles, 2 the first record (offset 0).
	tm.Send(tea.MouseMsg{X: 10, Y: bodyTop + 2, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	waitFor(t, tm, "PAUSED")
	tm.Send(enter)
	waitFor(t, tm, "offset 0")
	m := finish(t, tm)
	if got := m.Breadcrumbs(); got != "Topics / orders / p1 / tail / offset 0" {
		t.Fatalf("breadcrumbs %q", got)
	}
}

// Cells come from outside (Kafka group ids, client ids): a control
// character in one is shown escaped, never written raw to the terminal.
func TestTableCellsShowControlCharactersEscaped(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	tb := newTable(m.c, []column{{Title: "GROUP", Width: 30, Flex: true}, {Title: "STATE", Width: 8}}, "")
	tb.SetSize(80, 5)
	tb.SetRows([]row{
		{Key: "a", Cells: []string{"evil\x1b[2J\x1b]0;x\agrp", "Empty"}},
		{Key: "b", Cells: []string{"tab\there\nnl\u009b31m", "Stable\r"}},
	})
	for _, l := range strings.Split(tb.View(), "\n") {
		noControls(t, "table", l)
		if w := lipgloss.Width(l); w > 80 {
			t.Errorf("table line is %d cells wide: %q", w, l)
		}
	}
	if v := tb.View(); !strings.Contains(v, `evil\x1b[2J\x1b]0;x\agrp`) {
		t.Errorf("the escaped group id is not shown:\n%s", v)
	}
}

// A form's error is the only place that says what was wrong: at 80 columns
// it wraps, every word of it on screen, instead of being cut at the edge.
func TestFormErrorsWrapAt80Columns(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s := newCreateTopicScreen(m.c, 0)
	s.SetSize(m.c.Width, m.c.Height)
	s.Init()
	s.form.fields[0].line.SetValue("tōpic☃")
	s.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if s.errText == "" {
		t.Fatal("a unicode topic name was not refused")
	}
	m.stack = append(m.stack, s)
	view := m.View()
	for _, w := range strings.Fields(s.errText) {
		if !strings.Contains(view, w) {
			t.Errorf("%q of the error %q is not on screen:\n%s", w, s.errText, view)
		}
	}
	for i, l := range strings.Split(view, "\n") {
		if lipgloss.Width(l) > 80 {
			t.Errorf("line %d is %d cells wide", i, lipgloss.Width(l))
		}
	}
	if entries, _ := e.Topics(); len(entries) != 0 {
		t.Errorf("topics after a refused create: %v", entries)
	}
}

// On a terminal too short for the whole form, the focused field is on
// screen: the form scrolls to it as tab moves down.
func TestFormScrollsToTheFocusedField(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	m.Update(pushMsg{s: []Screen{newCreateTopicScreen(m.c, 0)}})
	s := m.Top().(*createTopicScreen)
	for i, f := range s.form.fields {
		if i > 0 {
			m.Update(tea.KeyMsg{Type: tea.KeyTab})
		}
		view := m.View()
		if !strings.Contains(view, "▸ "+f.label) {
			t.Errorf("field %q focused but not on screen:\n%s", f.label, view)
		}
		if n := strings.Count(view, "\n") + 1; n != 10 {
			t.Errorf("the view is %d lines, want 10", n)
		}
	}
}

// A confirmation about a topic with a long name stays a whole box at 80
// columns: the question is cut to fit, the border is all there.
func TestConfirmDialogFitsALongTopicName(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(confirmMsg{question: "Delete topic " + strings.Repeat("a", 249) + " and all its records?"})
	view := m.View()
	for _, corner := range []string{"╗", "╝", "y: yes"} {
		if !strings.Contains(view, corner) {
			t.Errorf("%q is not on screen:\n%s", corner, view)
		}
	}
}

// What a screen says instead of its table (not available here, an error)
// is there in full at 80 columns: it wraps.
func TestScreenMessagesWrapAt80Columns(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	// The engine alone is neither a TopicPlacer nor a GroupLister.
	for _, s := range []Screen{newPlacementScreen(m.c, "orders"), newGroupsScreen(m.c)} {
		s.SetSize(m.c.Width, m.c.Height)
		v := s.View()
		for _, w := range []string{"not available", "partition"} {
			if !strings.Contains(v, w) {
				t.Errorf("%T: %q is not on screen:\n%s", s, w, v)
			}
		}
		for _, l := range strings.Split(v, "\n") {
			if lipgloss.Width(l) > 80 {
				t.Errorf("%T: line %d cells wide: %q", s, lipgloss.Width(l), l)
			}
		}
	}
}

// The header's Kafka address is whole or shortened, never cut in the
// middle of its port ("kafka 127.0.0.1:7" read as port 7).
func TestHeaderKafkaAddressNeverCut(t *testing.T) {
	e := openEngine(t)
	for _, w := range []int{60, 70, 80, 90, 100} {
		opts := testOptions(e)
		opts.DataDirName = "/tmp/tuiaudit/d1"
		opts.Listen = "127.0.0.1:7760"
		opts.KafkaListen = "127.0.0.1:7761"
		m, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		h := strings.SplitN(m.View(), "\n", 2)[0]
		if strings.Contains(h, "kafka") && !strings.Contains(h, ":7761") {
			t.Errorf("at %d columns the header cuts the Kafka address: %q", w, h)
		}
		if w >= 80 && !strings.Contains(h, "7761") {
			t.Errorf("at %d columns the header has no Kafka port: %q", w, h)
		}
	}
}

// The header's websocket address and theme are whole (the address may be
// ":PORT" on loopback) or left out, never cut ("ws 127.0.0.1" read as an
// address without its port).
func TestHeaderFieldsNeverCut(t *testing.T) {
	e := openEngine(t)
	for w := 30; w <= 100; w++ {
		opts := testOptions(e)
		opts.DataDirName = "/tmp/t8/data"
		opts.Listen = "127.0.0.1:7760"
		m, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		h := ansiStrip(strings.SplitN(m.View(), "\n", 2)[0])
		if strings.Contains(h, " ws ") && !strings.Contains(h, ":7760") {
			t.Errorf("at %d columns the header cuts the websocket address: %q", w, h)
		}
		if strings.Contains(h, " theme") && !strings.Contains(h, "theme dark") {
			t.Errorf("at %d columns the header cuts the theme: %q", w, h)
		}
		if w >= 80 && !strings.Contains(h, "ws 127.0.0.1:7760") {
			t.Errorf("at %d columns the header has no websocket address: %q", w, h)
		}
	}
}

// Text that arrives in one piece (typed fast, pasted without bracketed
// paste, sent by tmux) goes into the field as text, even when it spells a
// key name such as "delete" or "end".
func TestFieldsTakeTextThatSpellsAKeyName(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(pushMsg{s: []Screen{newCreateTopicScreen(m.c, 0)}})
	s := m.Top().(*createTopicScreen)
	m.Update(keys("end"))
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	s.form.fields[2].line.SetValue("")
	m.Update(keys("delete"))
	if got := s.form.fields[0].value(); got != "end" {
		t.Errorf("name field holds %q, want end", got)
	}
	if got := s.form.fields[2].value(); got != "delete" {
		t.Errorf("cleanup field holds %q, want delete", got)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	m.Update(keys(":"))
	m.Update(keys("home"))
	if got := m.input.Value(); got != "home" {
		t.Errorf("command line holds %q, want home", got)
	}
}

// A screen's error wraps on a narrow terminal: the tail's and the
// partitions screen's "not found" name the topic in full.
func TestScreenErrorsWrapOnANarrowTerminal(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 32, Height: 12})
	const name = "a-rather-long-topic-name"
	tail := newTailScreen(m.c, name, allPartitions)
	t.Cleanup(tail.Close)
	parts := newPartitionsScreen(m.c, name)
	for _, s := range []Screen{tail, parts} {
		s.SetSize(m.c.Width, m.c.Height)
		s.Update(run(t, s.Init()))
		v := s.View()
		if !strings.Contains(v, name) || !strings.Contains(v, "not") || !strings.Contains(v, "found") {
			t.Errorf("%T at 32 columns:\n%s", s, v)
		}
		for _, l := range strings.Split(v, "\n") {
			if lipgloss.Width(l) > 32 {
				t.Errorf("%T: line %d cells wide: %q", s, lipgloss.Width(l), l)
			}
		}
	}
}

// A Kafka listener that did not start (its default address was taken by
// another broker) shows in the header as off, with the reason, instead of
// leaving the field out as if none was asked for.
func TestHeaderSaysWhenKafkaIsOff(t *testing.T) {
	e := openEngine(t)
	opts := testOptions(e)
	opts.DataDirName = "/tmp/d"
	opts.Listen = "127.0.0.1:7450"
	opts.KafkaOff = "127.0.0.1:9092 in use"
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
	if h := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(h, "kafka off (127.0.0.1:9092 in use)") {
		t.Errorf("header %q does not say the Kafka listener is off", h)
	}
}

// An error wider than the terminal wraps onto up to three status lines
// (taken from the bottom of the body), so it is read whole; the screen
// still fills the terminal exactly, and a longer error ends in "…".
func TestLongErrorWrapsOnTheStatusLine(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(tea.WindowSizeMsg{Width: 40, Height: 14})
	tm.Send(keys(":"))
	tm.Type("tail orders x")
	tm.Send(enter)
	waitFor(t, tm, "non-negative")
	m := finish(t, tm)
	want := m.status
	if len("✗ "+want) <= 40 {
		t.Fatalf("the error %q fits one line of 40 cells: the test needs a longer one", want)
	}
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d lines on a terminal of 14", len(lines))
	}
	status := statusOf(t, lines)
	if got := strings.Join(status, " "); got != "✗ "+want {
		t.Fatalf("status lines read %q, want the whole error %q", got, "✗ "+want)
	}

	// An error of more than three lines keeps three, the last ending in "…".
	m.status = strings.Repeat("word ", 40)
	lines = strings.Split(m.View(), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d lines on a terminal of 14 with a long error", len(lines))
	}
	if status := statusOf(t, lines); len(status) != 3 || !strings.HasSuffix(status[2], "…") {
		t.Fatalf("a 200-cell error at 40 columns shows as %q", status)
	}
}

// statusOf returns the status lines of a view's lines, without colour:
// from the line starting with ✗ to the help line, the last.
func statusOf(t *testing.T, lines []string) []string {
	t.Helper()
	for i, l := range lines {
		if w := lipgloss.Width(l); w > 40 {
			t.Errorf("line %d, %q, is %d cells wide", i, l, w)
		}
	}
	for i, l := range lines[:len(lines)-1] {
		if plain := strings.TrimSpace(ansiStrip(l)); strings.HasPrefix(plain, "✗") {
			var out []string
			for _, s := range lines[i : len(lines)-1] {
				out = append(out, strings.TrimSpace(ansiStrip(s)))
			}
			return out
		}
	}
	t.Fatalf("no status line starts with ✗:\n%s", strings.Join(lines, "\n"))
	return nil
}

var ansiCodes = regexp.MustCompile("\x1b\\[[0-9;]*m")

// ansiStrip removes the colour codes of a rendered line.
func ansiStrip(s string) string { return ansiCodes.ReplaceAllString(s, "") }

// An error on more than one status line takes those lines from the body:
// the screen lays itself out in the lines that remain, so its selected row
// stays in sight and no row is hidden under the error; a click on the
// status lines (or the help line) selects nothing.
func TestLongErrorShrinksTheBody(t *testing.T) {
	e := openEngine(t)
	for i := 0; i < 30; i++ {
		create(t, e, fmt.Sprintf("t%03d", i), engine.DefaultTopicConfig())
	}
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "t000")
	tm.Send(tea.WindowSizeMsg{Width: 40, Height: 14})
	tm.Send(keys("G"))
	tm.Send(keys(":"))
	tm.Type("tail t029 x")
	tm.Send(enter)
	waitFor(t, tm, "non-negative")
	m := finish(t, tm)

	lines := strings.Split(m.View(), "\n")
	status := statusOf(t, lines)
	if len(status) < 2 {
		t.Fatalf("the error %q takes %d status line at 40 columns: the test needs a longer one", m.status, len(status))
	}
	body := lines[bodyTop : len(lines)-1-len(status)]
	if !strings.Contains(ansiStrip(body[len(body)-1]), "▸ t029") {
		t.Errorf("with %d status lines the selected t029 is not the body's last line:\n%s", len(status), strings.Join(lines, "\n"))
	}
	if screen := strings.Split(m.Top().View(), "\n"); len(screen) > len(body) {
		t.Errorf("the topics screen draws %d lines in a body of %d: its bottom lines are hidden", len(screen), len(body))
	}

	m.Update(keys("g"))
	if m.status == "" {
		t.Fatal("g cleared the error: the test needs it on screen")
	}
	for y := len(lines) - 1 - len(status); y < len(lines); y++ {
		m.Update(tea.MouseMsg{X: 10, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
		if r, _ := m.Top().(*topicsScreen).table.Selected(); r.Key != "t000" {
			t.Errorf("a click on line %d (status or help) selected %s", y, r.Key)
		}
	}
}

// On every screen, an error on three status lines leaves the screen's whole
// view in sight: each screen is laid out in the body that remains.
func TestLongErrorShrinksEveryScreen(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(tea.WindowSizeMsg{Width: 64, Height: 14})
	tm.Send(down)
	tm.Send(keys("t"))
	waitFor(t, tm, "orders / tail", "1          24 ")
	tm.Send(enter)
	waitFor(t, tm, "offset 24")
	m := finish(t, tm)
	long := "the error " + strings.Repeat("word ", 40)
	for depth := len(m.stack); depth >= 1; depth-- {
		m.stack = m.stack[:depth]
		m.Update(statusMsg{text: long, err: true})
		lines := strings.Split(m.View(), "\n")
		if len(lines) != 14 {
			t.Fatalf("%s: %d lines on a terminal of 14", m.Breadcrumbs(), len(lines))
		}
		status := 0
		for _, l := range lines {
			if strings.Contains(l, "word") || strings.Contains(l, "the error") {
				status++
			}
		}
		if status != maxStatusErrorLines {
			t.Fatalf("%s: the error takes %d lines, want %d", m.Breadcrumbs(), status, maxStatusErrorLines)
		}
		room := 14 - chrome - (status - 1)
		if screen := strings.Split(m.Top().View(), "\n"); len(screen) > room {
			t.Errorf("%s draws %d lines in a body of %d under a 3-line error", m.Breadcrumbs(), len(screen), room)
		}
	}
}

// A click on a row selects that row on screens that draw lines above their
// table: the recovery list (its summary) and the frames (the segment's
// line).
func TestMouseClickUnderAHead(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	for i := 0; i < 4; i++ {
		produce(t, e, "orders", 0, orderRecords(100+i, 3)...) // one batch each
	}
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("recovery")
	tm.Send(enter)
	waitFor(t, tm, "last open of", "users/p0")
	m := finish(t, tm)
	clickEachRow(t, m, m.Top().(*recoveryListScreen).table, 0)

	tm = startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("topic orders")
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders")
	tm.Send(enter)
	waitFor(t, tm, "segments")
	tm.Send(enter)
	waitFor(t, tm, "5 frames, 0 bad")
	m = finish(t, tm)
	clickEachRow(t, m, m.Top().(*framesScreen).table, 0)
}

// clickEachRow clicks, last first, the screen line each row of tb is drawn
// on (found by the row's cell col) and checks the click selects that row.
func clickEachRow(t *testing.T, m *Model, tb *table, col int) {
	t.Helper()
	if tb.Len() < 3 {
		t.Fatalf("%s: %d rows, the test needs 3 at least", m.Breadcrumbs(), tb.Len())
	}
	lines := strings.Split(m.View(), "\n")
	for k := tb.Len() - 1; k >= 0; k-- {
		want := tb.rows[tb.shown[k]]
		y := -1
		for i, l := range lines {
			if f := strings.Fields(strings.TrimLeft(ansiStrip(l), " ▸")); len(f) > col && f[col] == want.Cells[col] {
				y = i
				break
			}
		}
		if y < 0 {
			t.Fatalf("%s: row %q is not on screen:\n%s", m.Breadcrumbs(), want.Key, strings.Join(lines, "\n"))
		}
		m.Update(tea.MouseMsg{X: 10, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
		if got, _ := tb.Selected(); got.Key != want.Key {
			t.Errorf("%s: a click on line %d, row %q, selected %q", m.Breadcrumbs(), y, want.Key, got.Key)
		}
	}
}

// A click under a table's rows on screen, on the panel below it, selects
// no row of the table, not even one scrolled out of sight.
func TestMouseClickBelowATable(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 12
	create(t, e, "wide", cfg)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "wide")
	tm.Send(tea.WindowSizeMsg{Width: 100, Height: 20})
	tm.Send(enter)
	waitFor(t, tm, "Consumers")
	m := finish(t, tm)
	tb := m.Top().(*partitionsScreen).table
	if tb.Len() <= tb.height {
		t.Fatalf("all %d partitions fit the table's %d rows: the test needs more", tb.Len(), tb.height)
	}
	lines := strings.Split(m.View(), "\n")
	for y := bodyTop + tb.height + 1; y < len(lines)-1; y++ {
		m.Update(tea.MouseMsg{X: 10, Y: y, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
		if r, _ := tb.Selected(); r.Key != tb.rows[0].Key {
			t.Errorf("a click on line %d, %q, selected %s", y, strings.TrimSpace(ansiStrip(lines[y])), r.Key)
		}
	}
}

// On a screen that takes text (the forms, the crash lab's fault being
// edited) ? and q type into the field: the footer does not offer them as
// help and quit, it offers ctrl+c.
func TestFooterOfAScreenThatTakesText(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys("n"))
	waitFor(t, tm, "New topic")
	m := finish(t, tm)
	footer := func() string {
		lines := strings.Split(m.View(), "\n")
		return ansiStrip(lines[len(lines)-1])
	}
	for _, open := range []struct {
		name string
		s    Screen
	}{
		{"new topic", m.Top()},
		{"edit", newAlterTopicScreen(m.c, engine.TopicInfo{Name: "orders", Config: engine.DefaultTopicConfig()})},
		{"produce", newProduceScreen(m.c, "orders", -1)},
	} {
		m.stack = append(m.stack[:1], open.s)
		f := footer()
		if strings.Contains(f, "? help") || strings.Contains(f, "q quit") || !strings.Contains(f, "ctrl+c quit") {
			t.Errorf("%s: footer %q", open.name, f)
		}
	}
	m.stack = m.stack[:1]
	if f := footer(); !strings.Contains(f, "? help") || !strings.Contains(f, "q quit") {
		t.Errorf("topics: footer %q", f)
	}
}

// A form's hints line up in one column, whatever each field holds: a
// value, its placeholder, or the focus.
func TestFormHintsLineUp(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, s := range []Screen{
		newCreateTopicScreen(m.c, 0),
		newAlterTopicScreen(m.c, engine.TopicInfo{Name: "orders", Config: engine.DefaultTopicConfig()}),
		newProduceScreen(m.c, "orders", -1),
	} {
		m.Update(pushMsg{s: []Screen{s}})
		var f *form
		switch s := s.(type) {
		case *createTopicScreen:
			f = s.form
		case *alterTopicScreen:
			f = s.form
		case *produceScreen:
			f = s.form
		}
		view := ansiStrip(m.View())
		col := -1
		for _, fl := range f.fields {
			if fl.area != nil || fl.hint == "" {
				continue
			}
			for _, l := range strings.Split(view, "\n") {
				if i := strings.Index(l, "  "+fl.hint); i >= 0 && strings.Contains(l, fl.label) {
					if c := lipgloss.Width(l[:i]); col < 0 {
						col = c
					} else if c != col {
						t.Errorf("%s: the hint of %q starts at column %d, the first at %d:\n%s", m.Breadcrumbs(), fl.label, c, col, view)
					}
				}
			}
		}
		if col < 0 {
			t.Fatalf("%s: no hint found", m.Breadcrumbs())
		}
		m.Update(popMsg{})
	}
}

// At 40 columns the selected row ends in "…" only when text of it is cut,
// not when the padding of its last cell is: on the topics list and the
// tail, as the other rows.
func TestSelectedRowEllipsisOnlyForCutText(t *testing.T) {
	e := openEngine(t)
	create(t, e, "short", engine.DefaultTopicConfig())
	produce(t, e, "short", 0, engine.Record{Value: []byte("v1")}, engine.Record{Value: []byte("v2")})
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "short")
	tm.Send(tea.WindowSizeMsg{Width: 40, Height: 12})
	tm.Send(keys(":"))
	tm.Type("tail short")
	tm.Send(enter)
	waitFor(t, tm, "short p0", "v2")
	m := finish(t, tm)
	for depth := len(m.stack); depth >= 1; depth-- {
		m.stack = m.stack[:depth]
		found := false
		for _, l := range strings.Split(ansiStrip(m.View()), "\n") {
			if strings.HasPrefix(l, "▸") {
				found = true
				if strings.HasSuffix(strings.TrimRight(l, " "), "…") {
					t.Errorf("%s: the selected row %q ends in …", m.Breadcrumbs(), l)
				}
			}
		}
		if !found {
			t.Errorf("%s: no selected row", m.Breadcrumbs())
		}
	}
}

// A row cut at the right edge reads as cut the same way whether it is
// selected or not: each row, drawn unselected, is the text it shows when
// the cursor is on it, "…" included, on the tail and on the topics list,
// at widths where the tail's value and the list's columns do not fit.
func TestCutRowsReadTheSameSelectedOrNot(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	create(t, e, "a-topic-name-longer-than-its-column", engine.DefaultTopicConfig())
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("tail orders 0")
	tm.Send(enter)
	waitFor(t, tm, "orders p0", "cust-")
	m := finish(t, tm)
	rowText := func(l string) string { return string([]rune(strings.TrimRight(ansiStrip(l), " "))[2:]) }
	for w := 24; w <= 72; w += 4 {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 14})
		// The tail, on top.
		s := m.Top().(*tailScreen)
		for i := s.offset; i < min(s.offset+s.rowsHeight(), s.rowCount()); i++ {
			y := bodyTop + 2 + i - s.offset
			s.cursor = (i + 1) % s.rowCount()
			plain := strings.Split(m.View(), "\n")[y]
			s.cursor = i
			sel := strings.Split(m.View(), "\n")[y]
			if !strings.HasPrefix(ansiStrip(sel), "▸") {
				t.Fatalf("%d columns: line %d is not the selected row: %q", w, y, ansiStrip(sel))
			}
			if rowText(plain) != rowText(sel) {
				t.Errorf("%d columns, tail row %d: unselected %q, selected %q", w, i, rowText(plain), rowText(sel))
			}
		}
		// The topics list, under it.
		top := m.stack[0].(*topicsScreen)
		m.stack = m.stack[:1]
		for i := 0; i < len(top.table.shown); i++ {
			y := bodyTop + 1 + i
			top.table.cursor = (i + 1) % len(top.table.shown)
			plain := strings.Split(m.View(), "\n")[y]
			top.table.cursor = i
			sel := strings.Split(m.View(), "\n")[y]
			if rowText(plain) != rowText(sel) {
				t.Errorf("%d columns, topics row %d: unselected %q, selected %q", w, i, rowText(plain), rowText(sel))
			}
		}
		m.stack = append(m.stack, s)
	}
}

// The lines a cluster's screens add are never cut at the edge mid-word:
// the partitions summary leaves out whole fields, from the last, with "…";
// the "needs a local data dir" screen wraps.
func TestClusterLinesNeverCutAtTheEdge(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	info, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const need = "segments and recovery need a local data dir"
	for w := 30; w <= 140; w += 5 {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 20})
		line := ansiStrip(clusterSummary(m.c, info, w))
		if lw := lipgloss.Width(line); lw > w {
			t.Errorf("%d columns: the summary is %d cells: %q", w, lw, line)
		}
		if !strings.HasSuffix(line, need) && !strings.HasSuffix(line, " · …") {
			t.Errorf("%d columns: the summary ends mid-field: %q", w, line)
		}
		if full := ansiStrip(clusterSummary(m.c, info, 1000)); w >= lipgloss.Width(full) && line != full {
			t.Errorf("%d columns: the summary %q leaves out fields of %q", w, line, full)
		}

		s := &needsDataDirScreen{c: m.c, what: "segments"}
		v := ansiStrip(s.View())
		for _, l := range strings.Split(v, "\n") {
			if lw := lipgloss.Width(l); lw > w {
				t.Errorf("%d columns: a line of %q is %d cells: %q", w, s.what, lw, l)
			}
		}
		if !strings.Contains(strings.Join(strings.Fields(v), " "), "run pulse on a data dir (--data) for segments") {
			t.Errorf("%d columns: the needs-a-data-dir screen lost its words:\n%s", w, v)
		}
	}
}

// A form's hints wrap in their column instead of being clipped at the
// right edge: no line of the new topic, edit and produce forms is wider
// than the terminal, and every word of the longest hints is shown.
func TestFormHintsWrapInsteadOfBeingCut(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	info, err := e.Describe("orders")
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for w := 60; w <= 110; w += 10 {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 40})
		for _, c := range []struct {
			s     Screen
			words string
		}{
			{newCreateTopicScreen(m.c, m.stack[0].ID()), "every-write (ack after fsync) or interval (ack after write, fsync a few ms later)"},
			{newAlterTopicScreen(m.c, info), "enter saves (durable in meta.db); esc cancels"},
			{newProduceScreen(m.c, "orders", -1), "empty: by key hash, or round-robin"},
			{newProduceScreen(m.c, "orders", -1), "or enter on a one-line field sends; esc goes back"},
		} {
			c.s.SetSize(m.c.Width, m.c.Height)
			v := ansiStrip(c.s.View())
			for _, l := range strings.Split(v, "\n") {
				if lw := lipgloss.Width(l); lw > w {
					t.Errorf("%d columns, %s: a line is %d cells: %q", w, c.s.Crumb(), lw, l)
				}
			}
			if !strings.Contains(strings.Join(strings.Fields(v), " "), c.words) {
				t.Errorf("%d columns, %s: %q is not shown whole:\n%s", w, c.s.Crumb(), c.words, v)
			}
		}
	}
}

// The footer shows the keys that fit whole and "…" for the rest, never a
// key cut at the edge or a separator left dangling.
func TestFooterKeysWholeOrLeftOut(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for w := 30; w <= 130; w++ {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 20})
		lines := strings.Split(m.View(), "\n")
		foot := ansiStrip(lines[len(lines)-1])
		if lw := lipgloss.Width(foot); lw > w {
			t.Errorf("%d columns: the footer is %d cells: %q", w, lw, foot)
		}
		if !strings.HasSuffix(foot, "q quit") && !strings.HasSuffix(foot, " …") {
			t.Errorf("%d columns: the footer ends in a cut key: %q", w, foot)
		}
	}
}
