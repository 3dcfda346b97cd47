package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
)

// The tail of a topic shows every partition, merged in commit-time order,
// each row with its partition; ] and [ filter to one partition and back.
func TestTailMergesPartitions(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 3
	create(t, e, "ev", cfg)
	// Nine records, three per partition, committed round-robin one at a
	// time, so commit-time order interleaves the partitions.
	for i := 0; i < 9; i++ {
		produce(t, e, "ev", i%3, engine.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	s := newTestTail(t, testOptions(e), "ev", allPartitions)
	follow := s.Update(run(t, s.Init()))
	s.Update(run(t, follow))
	if n := len(s.recs); n != 9 {
		t.Fatalf("merged tail holds %d records, want all 9 of the 3 partitions", n)
	}
	seen := map[int]int{}
	for i, r := range s.recs {
		seen[r.P]++
		if i > 0 && r.Timestamp < s.recs[i-1].Timestamp {
			t.Fatalf("row %d (p%d@%d, ts %d) is older than row %d (ts %d)", i, r.P, r.Offset, r.Timestamp, i-1, s.recs[i-1].Timestamp)
		}
		if i > 0 && r.P == s.recs[i-1].P && r.Offset <= s.recs[i-1].Offset {
			t.Fatalf("row %d: p%d@%d after p%d@%d", i, r.P, r.Offset, s.recs[i-1].P, s.recs[i-1].Offset)
		}
	}
	if seen[0] != 3 || seen[1] != 3 || seen[2] != 3 {
		t.Fatalf("rows per partition %v, want 3 each", seen)
	}
	v := s.View()
	if !strings.Contains(v, "ev all 3 partitions") {
		t.Errorf("status line does not say the tail is merged:\n%s", v)
	}
	for _, p := range []string{"  0           0 ", "  1           0 ", "  2           0 "} {
		if !strings.Contains(v, p) {
			t.Errorf("no row of partition/offset %q in:\n%s", p, v)
		}
	}

	// A record produced while following arrives, whatever its partition.
	got := make(chan any, 1)
	next := s.follow()
	if next != nil {
		t.Fatal("a second follower started")
	}
	s.stop()
	next = s.follow()
	go func() { got <- next() }()
	produce(t, e, "ev", 2, engine.Record{Value: []byte("late")})
	s.Update((<-got).(tailRecordsMsg))
	if r := s.rowRecord(s.cursor); string(r.Value) != "late" || r.P != 2 || r.Offset != 3 {
		t.Fatalf("live cursor on p%d@%d %q, want p2@3 late", r.P, r.Offset, r.Value)
	}

	// ] filters to p0, then p1, p2 and back to all; [ goes the other way.
	s.Update(run(t, s.Update(run(t, s.Update(keys("]"))))))
	if s.part != 0 || len(s.recs) != 3 || s.Crumb() != "ev / p0 / tail" {
		t.Fatalf("after ]: part %d, %d records, crumb %q", s.part, len(s.recs), s.Crumb())
	}
	for _, r := range s.recs {
		if r.P != 0 {
			t.Fatalf("p0 filter shows a record of p%d", r.P)
		}
	}
	s.Update(keys("]"))
	s.Update(keys("]"))
	s.Update(run(t, s.Update(keys("]"))))
	if !s.merged() || s.Crumb() != "ev / tail" {
		t.Fatalf("after ] four times: part %d, want all", s.part)
	}
	s.Update(run(t, s.Update(keys("["))))
	if s.part != 2 {
		t.Fatalf("[ from all goes to p%d, want p2", s.part)
	}
}

// A merged tail opened at the earliest records pages forward through every
// partition.
func TestTailMergedEarliestPagesForward(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 3
	create(t, e, "ev", cfg)
	for p := 0; p < 3; p++ {
		produce(t, e, "ev", p, orderRecords(p*200, 200)...)
	}
	s := newTestTail(t, testOptions(e), "ev", allPartitions)
	s.Update(run(t, s.Update(run(t, s.jumpEarliest()))))
	if s.live || len(s.recs) == 0 || s.rowRecord(s.cursor).Offset != 0 {
		t.Fatalf("earliest: live %v, %d records", s.live, len(s.recs))
	}
	for len(s.recs) < 600 {
		before := len(s.recs)
		s.cursor = s.rowCount() - 1
		cmd := s.move(1)
		if cmd == nil {
			t.Fatalf("no forward read at %d records", before)
		}
		s.Update(run(t, cmd))
		if len(s.recs) == before {
			t.Fatalf("a forward page added nothing at %d records", before)
		}
	}
	per := map[int]int64{}
	for _, r := range s.recs {
		if r.Offset != per[r.P] {
			t.Fatalf("p%d: offset %d after %d: a gap or a repeat", r.P, r.Offset, per[r.P]-1)
		}
		per[r.P]++
	}
}

// Binary values and keys are shown escaped, text as text.
func TestOneLineEscapesBinary(t *testing.T) {
	for in, want := range map[string]string{
		"\xff\x00\x01":        `\xff\x00\x01`,
		"plain text":          "plain text",
		"two\nlines\tand tab": "two lines and tab",
		"héllo":               "héllo",
		"\x00\x00\x00\x07":    `\x00\x00\x00\a`,
	} {
		if got := oneLine([]byte(in), 40); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
	// A multi-byte rune cut by the width limit is still text.
	if got := oneLine([]byte(strings.Repeat("é", 10)), 2); strings.Contains(got, `\x`) {
		t.Errorf("cut text shown as binary: %q", got)
	}
}

// The default time format names its zone.
func TestDefaultTimeHasZone(t *testing.T) {
	e := openEngine(t)
	m, err := New(Options{Source: e})
	if err != nil {
		t.Fatal(err)
	}
	got := m.c.Opts.FormatTime(0)
	if zone := time.UnixMilli(0).Format("MST"); !strings.HasSuffix(got, " "+zone) {
		t.Fatalf("FormatTime(0) = %q, want it to end with the zone %q", got, zone)
	}
}

// The tail of a one-partition topic is that partition's (it pages back).
func TestTailOfOnePartitionTopic(t *testing.T) {
	e := openEngine(t)
	create(t, e, "solo", engine.DefaultTopicConfig())
	produce(t, e, "solo", 0, orderRecords(0, 300)...)
	s := newTestTail(t, testOptions(e), "solo", allPartitions)
	s.Update(run(t, s.Update(run(t, s.Init()))))
	if s.merged() || s.Crumb() != "solo / p0 / tail" || s.rowRecord(s.cursor).Offset != 299 {
		t.Fatalf("part %d, crumb %q", s.part, s.Crumb())
	}
	cmd := s.Update(keys("g"))
	if cmd == nil {
		t.Fatal("no page back on a one-partition tail")
	}
	if _, ok := cmd().(tailRecordsMsg); !ok {
		t.Fatal("g on a one-partition tail did not read the page before the buffer")
	}
}
