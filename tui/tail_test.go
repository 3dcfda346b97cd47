package tui

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// run executes cmd synchronously and returns the first message for a
// screen (expanding batches). Only for commands known not to block.
func run(t testing.TB, cmd tea.Cmd) tea.Msg {
	t.Helper()
	if cmd == nil {
		t.Fatal("no command to run")
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			if c == nil {
				continue
			}
			if m := c(); m != nil {
				if _, ok := m.(targeted); ok {
					return m
				}
			}
		}
		t.Fatal("batch without a screen message")
	}
	return msg
}

// newTestTail builds a tail screen on a model of the test size.
func newTestTail(t testing.TB, opts Options, topic string, p int) *tailScreen {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: testWidth, Height: testHeight})
	s := newTailScreen(m.c, topic, p)
	s.SetSize(m.c.Width, m.c.Height)
	t.Cleanup(s.Close)
	return s
}

// catchUp feeds the tail its follower's reads until it has read to hwm.
func catchUp(t testing.TB, s *tailScreen, cmd tea.Cmd, hwm int64) {
	t.Helper()
	for s.next < hwm {
		cmd = s.Update(run(t, cmd))
	}
}

func bigValue(i int) []byte {
	return []byte(fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("x"), 200)))
}

// The tail keeps a bounded window, whatever the size of the log, and pages
// older records back in from the engine.
func TestTailBufferStaysBounded(t *testing.T) {
	e := openEngine(t)
	create(t, e, "big", engine.DefaultTopicConfig())
	const total = 12000
	for i := 0; i < total; i += 1000 {
		recs := make([]engine.Record, 1000)
		for j := range recs {
			recs[j] = engine.Record{Key: []byte(fmt.Sprint(i + j)), Value: bigValue(i + j)}
		}
		produce(t, e, "big", 0, recs...)
	}
	opts := testOptions(e)
	opts.TailRecords = 1000
	opts.TailBatch = 700
	s := newTestTail(t, opts, "big", 0)

	// Start at the earliest offset, live: the follower reads everything.
	cmd := s.restartFromStart()
	catchUp(t, s, cmd, total)
	if n := len(s.recs); n != 1000 {
		t.Fatalf("buffer holds %d records, want the cap 1000", n)
	}
	if first, last := s.recs[0].Offset, s.recs[len(s.recs)-1].Offset; first != total-1000 || last != total-1 {
		t.Fatalf("buffer holds offsets %d..%d, want %d..%d", first, last, total-1000, total-1)
	}
	if got := s.rowRecord(s.cursor).Offset; got != total-1 {
		t.Fatalf("live cursor on offset %d, want the newest %d", got, total-1)
	}

	// Scrolling up pauses; going to the top reads the page before the buffer.
	if cmd := s.Update(keys("k")); cmd != nil || s.live {
		t.Fatalf("k: live=%v, cmd=%v; want paused without a read", s.live, cmd != nil)
	}
	cmd = s.Update(keys("g"))
	s.Update(run(t, cmd))
	if n := len(s.recs); n != 1000 {
		t.Fatalf("after paging back the buffer holds %d records", n)
	}
	first := s.recs[0].Offset
	if first >= total-1000 || s.rowRecord(s.cursor).Offset != total-1000 {
		t.Fatalf("after paging back: first %d, cursor on %d", first, s.rowRecord(s.cursor).Offset)
	}
	for i := 1; i < len(s.recs); i++ {
		if s.recs[i].Offset != s.recs[i-1].Offset+1 {
			t.Fatalf("gap in the buffer: %d then %d", s.recs[i-1].Offset, s.recs[i].Offset)
		}
	}
	if string(s.recs[0].Value) != string(bigValue(int(first))) {
		t.Fatalf("record %d has value %q", first, s.recs[0].Value)
	}

	// A jump replaces the buffer and starts at the offset.
	cmd = s.jump(5, "offset 5")
	s.Update(run(t, s.Update(run(t, cmd))))
	if s.recs[0].Offset != 5 || s.rowRecord(s.cursor).Offset != 5 || s.live {
		t.Fatalf("after jump to 5: first %d, cursor %d, live %v", s.recs[0].Offset, s.rowRecord(s.cursor).Offset, s.live)
	}
}

func TestTailByteCap(t *testing.T) {
	e := openEngine(t)
	create(t, e, "wide", engine.DefaultTopicConfig())
	recs := make([]engine.Record, 500)
	for i := range recs {
		recs[i] = engine.Record{Value: bytes.Repeat([]byte{'v'}, 4096)}
	}
	produce(t, e, "wide", 0, recs...)
	opts := testOptions(e)
	opts.TailBytes = 256 << 10
	s := newTestTail(t, opts, "wide", 0)
	catchUp(t, s, s.restartFromStart(), 500)
	if s.bytes > opts.TailBytes {
		t.Fatalf("buffer holds %d bytes, cap %d", s.bytes, opts.TailBytes)
	}
	if n := len(s.recs); n < 50 || n > (256<<10)/4096 {
		t.Fatalf("buffer holds %d records of 4 KiB under a 256 KiB cap", n)
	}
	if s.recs[len(s.recs)-1].Offset != 499 {
		t.Fatalf("newest buffered offset %d, want 499", s.recs[len(s.recs)-1].Offset)
	}
}

// The follower parks on the long-poll and wakes when a produce commits.
func TestTailFollowerWakesOnCommit(t *testing.T) {
	e := openEngine(t)
	create(t, e, "live", engine.DefaultTopicConfig())
	s := newTestTail(t, testOptions(e), "live", 0)
	follow := s.Update(run(t, s.Init())) // start message: hwm 0, follow
	got := make(chan tea.Msg, 1)
	go func() { got <- follow() }()
	produce(t, e, "live", 0, engine.Record{Key: []byte("k"), Value: []byte("woke")})
	s.Update(<-got)
	if len(s.recs) != 1 || string(s.recs[0].Value) != "woke" {
		t.Fatalf("after one commit the tail holds %d records", len(s.recs))
	}
	// Closing the screen releases a parked follower.
	next := s.follow()
	if next != nil {
		t.Fatal("a second follower started while one is armed")
	}
	s.Close()
}

func TestParseWhen(t *testing.T) {
	now := testClock
	cases := map[string]int64{
		"2026-01-02 03:00:00": testClock.Add(-4*60e9 - 5e9).UnixMilli(),
		"03:04":               testClock.Add(-5e9).UnixMilli(),
		"-5m":                 testClock.Add(-5 * 60e9).UnixMilli(),
		"90s":                 testClock.Add(-90e9).UnixMilli(),
		"1767323045000":       1767323045000,
	}
	for in, want := range cases {
		got, err := parseWhen(in, now)
		if err != nil || got != want {
			t.Errorf("parseWhen(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-1x", "12:99"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("parseWhen(%q) accepted", bad)
		}
	}
}

// Jumps by time, to the earliest and to the latest record.
func TestTailJumpKeys(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	produce(t, e, "ev", 0, orderRecords(0, 30)...)
	acks := produce(t, e, "ev", 0, orderRecords(30, 30)...)
	ts := acks[0].Timestamp
	s := newTestTail(t, testOptions(e), "ev", 0)

	// A jump to a time lands on the first record committed at or after it.
	s.Update(run(t, s.Update(run(t, s.jumpTime(ts, "time")))))
	first := s.rowRecord(s.cursor)
	if first.Timestamp < ts || s.live {
		t.Fatalf("jump to %d landed on offset %d at %d (live %v)", ts, first.Offset, first.Timestamp, s.live)
	}
	if first.Offset > 0 {
		res, err := e.Read("ev", 0, first.Offset-1, 1, 1<<20)
		if err != nil || len(res.Records) != 1 || res.Records[0].Timestamp >= ts {
			t.Fatalf("the record before offset %d is at or after %d: %+v, %v", first.Offset, ts, res.Records, err)
		}
	}

	// e: the earliest record, paused.
	s.Update(run(t, s.Update(run(t, s.Update(keys("e"))))))
	if r := s.rowRecord(s.cursor); r.Offset != 0 || s.live {
		t.Fatalf("after e: cursor on offset %d, live %v", r.Offset, s.live)
	}

	// l: live again, on the newest record.
	catchUp(t, s, s.Update(run(t, s.Update(keys("l")))), 60)
	if r := s.rowRecord(s.cursor); r.Offset != 59 || !s.live {
		t.Fatalf("after l: cursor on offset %d, live %v", r.Offset, s.live)
	}

	// space pauses, and resumes from where the buffer ends.
	s.Update(keys(" "))
	if s.live {
		t.Fatal("space did not pause")
	}
	produce(t, e, "ev", 0, orderRecords(60, 5)...)
	catchUp(t, s, s.Update(keys(" ")), 65)
	if r := s.rowRecord(s.cursor); r.Offset != 64 || !s.live {
		t.Fatalf("after resuming: cursor on offset %d, live %v", r.Offset, s.live)
	}
}

// Paging back through a compacted log, whose offsets have gaps, joins the
// buffer without a hole and reaches the oldest survivors.
func TestTailPagesBackThroughCompactedGaps(t *testing.T) {
	e := manualMaintenance(t)
	createCompacted(t, e, "state")
	produce(t, e, "state", 0, kib("old", 0, 50, 50)...)         // 0..49 survive
	produce(t, e, "state", 0, kib("user", 50, 500, 50)...)      // 50..549 superseded
	produce(t, e, "state", 0, kib("user", 550, 500, 50)...)     // 1000..1049 survive
	produce(t, e, "state", 0, kib("device", 1050, 500, 500)...) // the active segment
	if err := e.RunCompaction("state"); err != nil {
		t.Fatal(err)
	}
	all := readAll(t, e, "state", 0)
	if all[49].Offset != 49 || all[50].Offset != 1000 {
		t.Fatalf("setup: compaction left offsets %d, %d around the gap", all[49].Offset, all[50].Offset)
	}
	s := newTestTail(t, testOptions(e), "state", 0)
	s.Update(run(t, s.Update(run(t, s.jump(1050, "offset 1050")))))
	for i := 0; i < 2; i++ {
		s.Update(run(t, s.Update(keys("g"))))
	}
	if got := s.recs[0].Offset; got != 0 {
		t.Fatalf("after paging back twice the buffer starts at %d, want 0", got)
	}
	for i := range s.recs {
		if s.recs[i].Offset != all[i].Offset {
			t.Fatalf("buffer record %d is offset %d, the log's is %d", i, s.recs[i].Offset, all[i].Offset)
		}
	}
}

// A filter typed on a tail that had none, matching nothing or not parsing,
// shows no rows: not the whole buffer under a "0 shown" header.
func TestTailFilterMatchingNothingShowsNoRows(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	produce(t, e, "ev", 0, orderRecords(0, 30)...)
	s := newTestTail(t, testOptions(e), "ev", 0)
	catchUp(t, s, s.restartFromStart(), 30)
	if s.rowCount() != 30 {
		t.Fatalf("%d rows before any filter, want 30", s.rowCount())
	}
	for _, f := range []string{"zzzz", `.id < "x"`} {
		s.SetFilter("")
		s.SetFilter(f)
		if n := s.rowCount(); n != 0 {
			t.Errorf("filter %q: %d rows, want 0", f, n)
		}
		if v := s.View(); bytes.Contains([]byte(v), []byte("cust-")) {
			t.Errorf("filter %q: the view still shows records:\n%s", f, v)
		}
	}
}

// o takes an offset, digits with optional thousands commas, and nothing
// else: "5abc" is refused, not read as 5.
func TestTailJumpOffsetInput(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	produce(t, e, "ev", 0, orderRecords(0, 30)...)
	s := newTestTail(t, testOptions(e), "ev", 0)
	submit := func(v string) tea.Msg {
		a, ok := run(t, s.Update(keys("o"))).(askMsg)
		if !ok {
			t.Fatal("o asked for nothing")
		}
		return run(t, a.onSubmit(v))
	}
	for _, bad := range []string{"5abc", "1 2", "-1", "", "x", "99999999999999999999", "0x10", "+3"} {
		msg := submit(bad)
		if st, ok := msg.(statusMsg); !ok || !st.err || !strings.Contains(st.text, "offset") {
			t.Errorf("o %q: %#v, want an error naming the offset", bad, msg)
		}
	}
	for in, want := range map[string]int64{"12": 12, " 7 ": 7, "1,0": 10, "0": 0} {
		if msg := submit(in); msg == nil {
			t.Errorf("o %q: no jump", in)
		} else if st, ok := msg.(statusMsg); ok && st.err {
			t.Errorf("o %q refused: %s", in, st.text)
		} else if st, ok := msg.(tailStartMsg); !ok || st.from != want {
			t.Errorf("o %q: %#v, want a jump to %d", in, msg, want)
		}
	}
}

// A tail of a topic that does not exist, or of a partition it does not
// have, says so and does not claim to be following it.
func TestTailOfAMissingTopicOrPartition(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	for _, c := range []struct {
		topic string
		p     int
		want  string
	}{{"nope", allPartitions, "topic not found"}, {"ev", 7, "partition out of range"}} {
		s := newTestTail(t, testOptions(e), c.topic, c.p)
		s.Update(run(t, s.Init()))
		v := s.View()
		if !strings.Contains(v, c.want) || strings.Contains(v, "LIVE") {
			t.Errorf("tail of %s p%d:\n%s", c.topic, c.p, v)
		}
	}
}

// The live rate counts records that arrived while following, not the
// screenful read back from before the tail opened or switched partition.
func TestTailRateCountsOnlyArrivals(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	create(t, e, "ev", cfg)
	produce(t, e, "ev", 0, orderRecords(0, 30)...)
	produce(t, e, "ev", 1, orderRecords(30, 30)...)
	for _, p := range []int{0, allPartitions} {
		s := newTestTail(t, testOptions(e), "ev", p)
		cmd := s.Update(run(t, s.toLatest()))
		for s.rowCount() < 30 {
			cmd = s.Update(run(t, cmd))
		}
		if s.rateN != 0 {
			t.Errorf("p%d: %d records counted for the rate before any arrived", p, s.rateN)
		}
		produce(t, e, "ev", 0, orderRecords(100, 5)...)
		for s.rateN < 5 && cmd != nil {
			cmd = s.Update(run(t, cmd))
		}
		if s.rateN != 5 {
			t.Errorf("p%d: %d records counted for the rate after 5 arrived", p, s.rateN)
		}
		s.Close()
	}
}

// An offset past the HWM (or before the log start) says where the tail
// really is, instead of claiming to be at the offset asked for.
func TestTailJumpPastTheEndSaysSo(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	produce(t, e, "ev", 0, orderRecords(0, 30)...)
	s := newTestTail(t, testOptions(e), "ev", 0)
	s.Update(run(t, s.jump(999, "offset 999")))
	if !strings.Contains(s.statusLine(), "past the HWM 30") {
		t.Errorf("after a jump to 999 of 30: %s", s.statusLine())
	}
}

// The live rate falls back to 0 once records stop arriving, instead of
// showing the last second's figure for ever.
func TestTailRateFallsWhenRecordsStop(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	now := testClock
	opts := testOptions(e)
	opts.Now = func() time.Time { return now }
	s := newTestTail(t, opts, "ev", 0)
	s.live = true
	s.countRate(10)
	now = now.Add(time.Second)
	s.countRate(10)
	if !strings.Contains(s.statusLine(), "20 rec/s") {
		t.Fatalf("while records arrive: %s", s.statusLine())
	}
	now = now.Add(10 * time.Second)
	if !strings.Contains(s.statusLine(), " 0 rec/s") {
		t.Errorf("10 s after the last record: %s", s.statusLine())
	}
}

// A filter that does not parse says why in full at 80 columns, under the
// column titles, where it has room to wrap.
func TestTailFilterErrorInFullAt80Columns(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	produce(t, e, "ev", 0, orderRecords(0, 30)...)
	m, err := New(testOptions(e))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	s := newTailScreen(m.c, "ev", 0)
	t.Cleanup(s.Close)
	m.stack = append(m.stack, s)
	s.SetSize(m.c.Width, m.c.Height)
	catchUp(t, s, s.restartFromStart(), 30)
	s.SetFilter(`.customer.name == nope`)
	if s.filterErr == nil {
		t.Fatal("the filter parsed")
	}
	v := m.View()
	for _, w := range strings.Fields(s.filterErr.Error()) {
		if !strings.Contains(v, w) {
			t.Errorf("%q of %q is not on screen:\n%s", w, s.filterErr, v)
		}
	}
}

// A tombstone and a record whose value is the text "tombstone" look
// different in the tail, colours or not.
func TestTailTellsTombstoneFromItsName(t *testing.T) {
	e := openEngine(t)
	create(t, e, "kv", engine.DefaultTopicConfig())
	produce(t, e, "kv", 0, engine.Record{Key: []byte("a"), Value: []byte("tombstone")}, engine.Record{Key: []byte("b")})
	opts := testOptions(e)
	opts.NoColor = true
	s := newTestTail(t, opts, "kv", 0)
	catchUp(t, s, s.restartFromStart(), 2)
	var rowA, rowB string
	for _, l := range strings.Split(s.View(), "\n") {
		f := strings.Fields(l)
		for i, w := range f {
			if i > 0 && w == "a" {
				rowA = strings.Join(f[i+1:], " ")
			} else if i > 0 && w == "b" {
				rowB = strings.Join(f[i+1:], " ")
			}
		}
	}
	if rowA == "" || rowB == "" || rowA == rowB {
		t.Fatalf("the text value reads %q and the tombstone %q: they must differ\n%s", rowA, rowB, s.View())
	}
}

// "paused: space resumes following" goes from the status line when the
// tail follows again, by space or by l.
func TestTailResumingClearsThePausedMessage(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	produce(t, e, "ev", 0, orderRecords(0, 5)...)
	s := newTestTail(t, testOptions(e), "ev", 0)
	catchUp(t, s, s.Init(), 5)
	for i, resume := range []string{" ", "l"} {
		paused := statusesOf(t, s.Update(keys(" ")))
		if s.live || len(paused) != 1 || paused[0].text != "paused: space resumes following" {
			t.Fatalf("space: live %v, status %+v", s.live, paused)
		}
		produce(t, e, "ev", 0, orderRecords(5+i, 1)...) // the follower's read returns at once
		got := statusesOf(t, s.Update(keys(resume)))
		if !s.live || len(got) != 1 || got[0] != (statusMsg{}) {
			t.Errorf("%q after the pause: live %v, status messages %+v, want the status cleared", resume, s.live, got)
		}
	}
}

// [ and ] follow the partition they switch to live, so a pause's "paused:
// space resumes following" goes from the status line with them.
func TestTailSwitchingPartitionClearsThePausedMessage(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	create(t, e, "ev", cfg)
	produce(t, e, "ev", 0, orderRecords(0, 5)...)
	produce(t, e, "ev", 1, orderRecords(0, 5)...)
	s := newTestTail(t, testOptions(e), "ev", 0)
	catchUp(t, s, s.Init(), 5)
	for _, sw := range []string{"]", "["} {
		paused := statusesOf(t, s.Update(keys(" ")))
		if s.live || len(paused) != 1 || paused[0].text != "paused: space resumes following" {
			t.Fatalf("space: live %v, status %+v", s.live, paused)
		}
		got := statusesOf(t, s.Update(keys(sw)))
		if !s.live || len(got) != 1 || got[0] != (statusMsg{}) {
			t.Errorf("%q after the pause: live %v, status messages %+v, want the status cleared", sw, s.live, got)
		}
	}
}

// statusesOf runs cmd and the commands of its batch, none of which may
// block, and returns the status messages among their messages.
func statusesOf(t testing.TB, cmd tea.Cmd) []statusMsg {
	t.Helper()
	if cmd == nil {
		return nil
	}
	var out []statusMsg
	switch msg := cmd().(type) {
	case statusMsg:
		out = append(out, msg)
	case tea.BatchMsg:
		for _, c := range msg {
			out = append(out, statusesOf(t, c)...)
		}
	}
	return out
}

// One G on a paused tail lands on the last record: of the page it reads
// past the buffer, and of the log when that page does not reach the HWM;
// on one partition and on the merged tail.
func TestTailBottomLandsOnTheLastRecord(t *testing.T) {
	e := openEngine(t)
	create(t, e, "ev", engine.DefaultTopicConfig())
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	create(t, e, "two", cfg)
	produce(t, e, "ev", 0, orderRecords(0, 150)...)
	for p := 0; p < 2; p++ {
		produce(t, e, "two", p, orderRecords(0, 150)...)
	}
	last := func(s *tailScreen) tailRec { return s.rowRecord(s.cursor) }
	settle := func(s *tailScreen, cmd tea.Cmd) {
		for cmd != nil {
			cmd = s.Update(run(t, cmd))
		}
	}

	// One partition, 150 records, paused at 0 with a page of 100: one G
	// reads the 50 after it and lands on offset 149.
	s := newTestTail(t, testOptions(e), "ev", 0)
	settle(s, s.jump(0, "offset 0"))
	if s.next != 100 {
		t.Fatalf("setup: the first page ends at %d, want 100", s.next)
	}
	settle(s, s.Update(keys("G")))
	if r := last(s); r.Offset != 149 || s.cursor != s.rowCount()-1 || s.live {
		t.Fatalf("after one G: cursor on offset %d (row %d of %d), live %v; want offset 149, the last row", r.Offset, s.cursor, s.rowCount(), s.live)
	}

	// More than a page behind: one G still reaches the last record.
	produce(t, e, "ev", 0, orderRecords(150, 400)...)
	settle(s, s.Update(keys("G")))
	if r := last(s); r.Offset != 549 || s.cursor != s.rowCount()-1 || s.live {
		t.Fatalf("after one G, 400 records behind: cursor on offset %d (row %d of %d), live %v; want offset 549", r.Offset, s.cursor, s.rowCount(), s.live)
	}

	// The merged tail: both partitions' last records are read, the cursor
	// on the last row.
	m := newTestTail(t, testOptions(e), "two", allPartitions)
	settle(m, m.jumpEarliest())
	settle(m, m.Update(keys("G")))
	if m.cursor != m.rowCount()-1 {
		t.Fatalf("merged, after one G: cursor on row %d of %d", m.cursor, m.rowCount())
	}
	for p, next := range m.nexts {
		if next != 150 {
			t.Fatalf("merged, after one G: p%d read to %d, want its HWM 150", p, next)
		}
	}
}

// The @ prompt's error names every form it accepts, as the prompt does.
func TestTailJumpTimeErrorNamesEveryForm(t *testing.T) {
	_, err := parseWhen("yesterday", testClock)
	if err == nil || !errors.Is(err, ErrBadInput) {
		t.Fatalf("parseWhen(yesterday) = %v, want ErrBadInput", err)
	}
	for _, form := range []string{"2006-01-02 15:04:05", "a date (2006-01-02)", "15:04 today", "-5m or 5m ago", "unix milliseconds"} {
		if !strings.Contains(err.Error(), form) {
			t.Errorf("the error %q does not name %q", err, form)
		}
	}
}
