package tui

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/pulselog/pulse/engine"
)

func TestTopicsScreen(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders", "users", "clicks")
	m := finish(t, tm)
	if got := m.Breadcrumbs(); got != "Topics" {
		t.Errorf("breadcrumbs %q", got)
	}
	golden(t, m)
}

// Topics → orders → p0 → segments, and esc back up to Topics.
func TestNavigateToSegmentAndBack(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "clicks")
	tm.Send(down) // clicks, orders, users: orders is second
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders", "LOG START")

	tm.Send(down) // p1
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders / p1 / segments", "Retention")
	tm.Send(down)  // a second row does not exist: the cursor stays on the only segment
	tm.Send(enter) // a segment's frames
	waitFor(t, tm, "Topics / orders / p1 / segments / frames 00000000000000000000", "CRC")
	tm.Send(esc)
	waitFor(t, tm, "Retention")
	tm.Send(keys("t")) // the tail, paused at the segment's first offset
	waitFor(t, tm, "Topics / orders / p1 / segments / tail", "PAUSED", "at offset 0")
	tm.Send(esc)
	waitFor(t, tm, "Retention")
	tm.Send(esc)
	waitFor(t, tm, "p1   ")
	tm.Send(esc)
	tm.Send(keys("j")) // vi key: down to users
	tm.Send(enter)
	waitFor(t, tm, "Topics / users")
	m := finish(t, tm)
	if got := m.Breadcrumbs(); got != "Topics / users" {
		t.Fatalf("breadcrumbs after esc, esc, j, enter: %q", got)
	}
	golden(t, m)
}

func TestPartitionsScreen(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	opts := testOptions(e)
	opts.StartTopic = "orders"
	tm := startUI(t, opts)
	waitFor(t, tm, "Topics / orders", "p2")
	golden(t, finish(t, tm))
}

func TestSegmentsScreen(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "clicks")
	tm.Send(enter) // clicks
	waitFor(t, tm, "Topics / clicks")
	tm.Send(enter) // p0
	waitFor(t, tm, "Topics / clicks / p0 / segments", "Compaction")
	m := finish(t, tm)
	golden(t, m)
	if v := m.View(); !strings.Contains(v, "limits  1h") || !strings.Contains(v, "cleanup delete: not compacted") {
		t.Errorf("retention/compaction panels missing from:\n%s", v)
	}
}

func TestTailReceivesRecordsProducedWhileOpen(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("tail orders 2")
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders / p2 / tail", "LIVE", "waiting for records")

	// Produce while the tail is open: the long-poll wakes it.
	produce(t, e, "orders", 2, engine.Record{Key: []byte("live-1"), Value: []byte(`{"hello":"first"}`)})
	waitFor(t, tm, `{"hello":"first"}`)
	produce(t, e, "orders", 2, orderRecords(100, 5)...)
	waitFor(t, tm, `"order":104`)
	m := finish(t, tm)
	golden(t, m)
	ts := m.Top().(*tailScreen)
	if len(ts.recs) != 6 || ts.recs[0].Offset != 0 || ts.recs[5].Offset != 5 {
		t.Fatalf("tail buffer holds %d records (want offsets 0..5)", len(ts.recs))
	}
}

func TestTailDetailAndHex(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	var copied []string
	opts := testOptions(e)
	opts.Clipboard = func(s string) error { copied = append(copied, s); return nil }
	tm := startUI(t, opts)
	waitFor(t, tm, "orders")
	tm.Send(down)
	tm.Send(keys("t"))
	waitFor(t, tm, "Topics / orders / tail", `"order":64`)
	tm.Send(keys("]")) // all partitions → p0
	waitFor(t, tm, "Topics / orders / p0 / tail", "orders p0 of 3", `"order":39`)
	tm.Send(enter)
	waitFor(t, tm, "offset 39", `"customer": "cust-4"`)
	tm.Send(keys("c"))
	waitFor(t, tm, "copied 59 B")
	tm.Send(keys("x"))
	waitFor(t, tm, "00000000  7b 22 6f 72")
	m := finish(t, tm)
	golden(t, m)
	want := `{"order":39,"customer":"cust-4","total":49.39,"paid":false}`
	if len(copied) != 1 || copied[0] != want {
		t.Fatalf("copied %q, want %q", copied, want)
	}
}

func TestProduceFormAcks(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(down)
	tm.Send(keys("p"))
	waitFor(t, tm, "Produce to orders")
	tm.Type("ord-77")
	tm.Send(tab)
	tm.Type(`{"order":77,`)
	tm.Send(enter) // a new line in the value
	tm.Type(` "total":9.5}`)
	tm.Send(tab)
	tm.Type("trace=abc, source=ui")
	tm.Send(tab)
	tm.Type("2")
	tm.Send(altEnter)
	waitFor(t, tm, "acked: partition 2, offset 0")
	m := finish(t, tm)
	golden(t, m)

	got := readAll(t, e, "orders", 2)
	if len(got) != 1 {
		t.Fatalf("orders p2 holds %d records, want 1", len(got))
	}
	r := got[0]
	if string(r.Key) != "ord-77" || string(r.Value) != "{\"order\":77,\n \"total\":9.5}" {
		t.Errorf("stored key %q value %q", r.Key, r.Value)
	}
	if len(r.Headers) != 2 || r.Headers[0].Key != "trace" || string(r.Headers[1].Value) != "ui" {
		t.Errorf("stored headers %+v", r.Headers)
	}
}

func TestProduceFormRejectsBadInput(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("produce orders")
	tm.Send(enter)
	waitFor(t, tm, "Produce to orders")
	tm.Send(tab)
	tm.Send(tab)
	tm.Type("no-equals-sign")
	tm.Send(enter)
	waitFor(t, tm, `header "no-equals-sign" (want k=v)`)
	finish(t, tm)
	for p := 0; p < 3; p++ {
		if n := len(readAll(t, e, "orders", p)); n != []int{40, 25, 0}[p] {
			t.Errorf("orders p%d holds %d records after a rejected produce", p, n)
		}
	}
}

func TestFilterTopics(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys("/"))
	tm.Type("us")
	waitFor(t, tm, "/us")
	tm.Send(enter)
	m := finish(t, tm)
	golden(t, m)
	ts := m.Top().(*topicsScreen)
	if ts.table.Len() != 1 {
		t.Fatalf("filter /us shows %d topics, want 1 (users)", ts.table.Len())
	}
	if r, _ := ts.table.Selected(); r.Key != "users" {
		t.Fatalf("selected %q", r.Key)
	}
}

func TestFilterTail(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(down)
	tm.Send(keys("t"))
	waitFor(t, tm, `"order":39`)
	tm.Send(keys("/"))
	tm.Type("cust-3")
	tm.Send(enter)
	// enter searches the whole log: 6 matches in p0, 3 in p1.
	waitFor(t, tm, "/cust-3: 9 shown", "whole log: 9 matches in 65 offsets")
	m := finish(t, tm)
	golden(t, m)
	ts := m.Top().(*tailScreen)
	for i := 0; i < ts.rowCount(); i++ {
		if r := ts.rowRecord(i); !bytes.Contains(r.Key, []byte("cust-3")) {
			t.Errorf("row %d (offset %d) does not match the filter", i, r.Offset)
		}
	}
}

func TestThemeSwitch(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "theme dark")
	tm.Send(keys(":"))
	tm.Type("theme light")
	tm.Send(enter)
	waitFor(t, tm, "theme light")
	tm.Send(keys(":"))
	tm.Type("theme solarized")
	tm.Send(enter)
	waitFor(t, tm, `unknown theme "solarized"`)
	m := finish(t, tm)
	golden(t, m)
	if m.Common().Styles.Name != "light" {
		t.Fatalf("theme %q after :theme light and a bad :theme", m.Common().Styles.Name)
	}
}

func TestHelpScreen(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys("?"))
	waitFor(t, tm, "Commands")
	golden(t, finish(t, tm))
}

func TestCreateAndDeleteTopic(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys("n"))
	waitFor(t, tm, "New topic")
	tm.Type("events")
	tm.Send(tab)
	tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	tm.Type("2")
	tm.Send(tab)
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	tm.Type("compact")
	tm.Send(enter)
	waitFor(t, tm, "created topic events")
	info, err := e.Describe("events")
	if err != nil {
		t.Fatalf("describe events after create: %v", err)
	}
	if len(info.Partitions) != 2 || info.Config.Cleanup != engine.CleanupCompact {
		t.Fatalf("events created with %d partitions, cleanup %s", len(info.Partitions), info.Config.Cleanup)
	}

	// The new topic is selected.
	tm.Send(keys("d"))
	waitFor(t, tm, "Delete topic events and its 0 records?")
	tm.Send(keys("n"))
	waitFor(t, tm, "cancelled")
	if _, err := e.Describe("events"); err != nil {
		t.Fatalf("events gone after answering no: %v", err)
	}
	tm.Send(keys("d"))
	waitFor(t, tm, "This cannot be undone")
	tm.Send(keys("y"))
	waitFor(t, tm, "deleted topic events")
	m := finish(t, tm)
	golden(t, m)
	if _, err := e.Describe("events"); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("describe events after delete: %v, want ErrTopicNotFound", err)
	}
}

func TestCreateTopicRejectsBadName(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys("n"))
	waitFor(t, tm, "New topic")
	tm.Type("../etc")
	tm.Send(enter)
	waitFor(t, tm, "invalid topic name")
	finish(t, tm)
	infos, err := e.Topics()
	if err != nil || len(infos) != 3 {
		t.Fatalf("topics after a rejected create: %d, %v", len(infos), err)
	}
}

func TestCommandLine(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("bogus")
	tm.Send(enter)
	waitFor(t, tm, `unknown command "bogus"`)
	tm.Send(keys(":"))
	tm.Type("topic users")
	tm.Send(enter)
	waitFor(t, tm, "Topics / users")
	tm.Send(keys(":"))
	tm.Type("q")
	tm.Send(enter)
	tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
}

func TestTailJumps(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "orders")
	tm.Send(keys(":"))
	tm.Type("tail orders 0")
	tm.Send(enter)
	waitFor(t, tm, "LIVE", `"order":39`)
	tm.Send(keys("o"))
	waitFor(t, tm, "offset:")
	tm.Type("7")
	tm.Send(enter)
	waitFor(t, tm, "PAUSED", "at offset 7")
	m := finish(t, tm)
	golden(t, m)
	ts := m.Top().(*tailScreen)
	if ts.live || ts.rowRecord(ts.cursor).Offset != 7 {
		t.Fatalf("after jump to 7: live=%v cursor at offset %d", ts.live, ts.rowRecord(ts.cursor).Offset)
	}
}

// The topic list's ratio is raw over stored bytes of every segment, as the
// engine reports them.
func TestCompressionRatio(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	create(t, e, "zipped", cfg)
	produce(t, e, "zipped", 0, orderRecords(0, 300)...)
	produce(t, e, "zipped", 1, orderRecords(300, 200)...)
	var raw, stored int64
	for p := 0; p < 2; p++ {
		segs, err := e.Segments("zipped", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range segs {
			raw += s.RawBytes
			stored += s.Bytes
		}
	}
	want := ratio(raw, stored)
	if float64(raw)/float64(stored) < 1.5 {
		t.Fatalf("zstd stored %d of %d raw bytes: the data should compress", stored, raw)
	}
	tm := startUI(t, testOptions(e))
	waitFor(t, tm, "zipped", want)
	m := finish(t, tm)
	ts := m.Top().(*topicsScreen)
	r, _ := ts.table.Selected()
	if r.Cells[5] != want {
		t.Fatalf("ratio cell %q, want %q (raw %d, stored %d)", r.Cells[5], want, raw, stored)
	}
}

// The produce form's result line is about the last send: a refused input
// replaces an earlier engine error there, not only on the status line.
func TestProduceFormResultIsTheLastAttempt(t *testing.T) {
	e := openEngine(t)
	create(t, e, "one", engine.DefaultTopicConfig())
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	s := newProduceScreen(m.c, "one", -1)
	s.SetSize(m.c.Width, m.c.Height)
	s.form.fields[3].line.SetValue("9")
	s.Update(run(t, s.submit()))
	if v := s.View(); !strings.Contains(v, "partition out of range") {
		t.Fatalf("partition 9 of a one-partition topic:\n%s", v)
	}
	for _, c := range []struct {
		field       int
		value, want string
	}{
		{3, "-1", `partition "-1" is not a non-negative number`},
		{2, "no-equals", `header "no-equals" (want k=v)`},
	} {
		s.form.fields[3].line.SetValue("")
		s.form.fields[c.field].line.SetValue(c.value)
		if msg := run(t, s.submit()); msg == nil {
			t.Fatalf("%q: no message", c.value)
		}
		v := s.View()
		if strings.Contains(v, "out of range") || !strings.Contains(v, c.want) {
			t.Errorf("after %q the form shows:\n%s", c.value, v)
		}
		s.form.fields[c.field].line.SetValue("")
	}
	if n := len(readAll(t, e, "one", 0)); n != 0 {
		t.Errorf("one holds %d records after refused produces", n)
	}
}

// A value's long lines wrap in the record view, text and JSON alike: every
// byte of the value is on some line, no line wider than the screen.
func TestDetailWrapsLongLines(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value string
		want  int // 'x' cells to find
	}{
		{strings.Repeat("x", 1000), 1000},
		{"short\n" + strings.Repeat("x", 333) + "\tend", 333},
		{`{"a":"` + strings.Repeat("x", 500) + `"}`, 500},
	} {
		d := newDetailScreen(m.c, "t", 0, engine.Record{Value: []byte(c.value)})
		d.SetSize(80, 2000)
		got, body := 0, false
		for _, l := range strings.Split(d.View(), "\n") {
			if w := lipgloss.Width(l); w > 80 {
				t.Fatalf("line %d cells wide: %q", w, l)
			}
			if body {
				got += strings.Count(l, "x")
			}
			body = body || strings.TrimSpace(l) == "" // the value follows the first blank line
		}
		if got != c.want {
			t.Errorf("value of %d bytes: %d of its %d x's on screen", len(c.value), got, c.want)
		}
	}
}

// Wrong arguments of a ":" command get an error that says what is wrong
// with them, and open nothing.
func TestCommandArgumentErrors(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for line, want := range map[string]string{
		"tail orders -1":       `partition "-1" is not a non-negative number`,
		"tail orders x":        `partition "x" is not a non-negative number`,
		"tail":                 "usage :tail NAME [PARTITION]",
		"tail a b c":           "usage :tail NAME [PARTITION]",
		"topic ../x":           `invalid topic name: "../x"`,
		"tail ../../etc":       `invalid topic name: "../../etc"`,
		"produce ../x":         `invalid topic name: "../x"`,
		"crashlab ../orders 0": `invalid topic name: "../orders"`,
		"recovery ../x":        `invalid topic name: "../x"`,
		"recovery orders 1x":   `partition "1x" is not a non-negative number`,
		"crashlab orders -1":   `partition "-1" is not a non-negative number`,
		"produce":              "usage :produce NAME",
		"topic":                "usage :topic NAME",
		"theme":                "usage :theme",
		"theme purple":         `unknown theme "purple"`,
		"nosuch":               `unknown command "nosuch" (try :help)`,
	} {
		msg := run(t, m.runCommand(line))
		st, ok := msg.(statusMsg)
		if !ok || !st.err || !strings.Contains(st.text, want) {
			t.Errorf(":%s: %#v, want an error with %q", line, msg, want)
		}
		if len(m.stack) != 1 {
			t.Errorf(":%s opened a screen", line)
		}
	}
}

// A long header value wraps in the record view like the value does.
func TestDetailWrapsLongHeaders(t *testing.T) {
	e := openEngine(t)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	r := engine.Record{Value: []byte("v"), Headers: []engine.Header{{Key: "baggage", Value: []byte(strings.Repeat("x", 300))}}}
	d := newDetailScreen(m.c, "t", 0, r)
	d.SetSize(80, 100)
	got := 0
	for _, l := range strings.Split(d.View(), "\n") {
		if w := lipgloss.Width(l); w > 80 {
			t.Fatalf("line %d cells wide: %q", w, l)
		}
		got += strings.Count(l, "x") // the header's and those of "x: hex view" and "text"
	}
	if got < 300 {
		t.Errorf("%d of the header's 300 x's on screen", got)
	}
}

// A topic just created is selected once the list has it, also when the
// first list read after the creation does not have it yet (a cluster's
// metadata can lag its CreateTopics answer).
func TestCreatedTopicSelectedOnceListed(t *testing.T) {
	e := openEngine(t)
	seed(t, e)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Update(tea.WindowSizeMsg{Width: testWidth, Height: testHeight})
	s := m.stack[0].(*topicsScreen)
	s.Update(run(t, s.Init()))
	// The list read right after the creation answer comes before the
	// topic is there.
	s.Update(run(t, s.Update(topicCreatedMsg{to: to{s.id}, name: "late"})))
	create(t, e, "late", engine.DefaultTopicConfig())
	s.Update(run(t, s.load()))
	if r, _ := s.table.Selected(); r.Key != "late" {
		t.Fatalf("once listed, the created topic is not selected: %q is", r.Key)
	}
}
