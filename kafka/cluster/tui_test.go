package cluster

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/pulselog/pulse/tui"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`)

// waitScreen waits until the UI's output (escape sequences dropped)
// matches every regexp.
func waitScreen(t *testing.T, tm *teatest.TestModel, res ...*regexp.Regexp) {
	t.Helper()
	var seen []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen = ansi.ReplaceAll(b, nil)
		for _, re := range res {
			if !re.Match(seen) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(hangGuard), teatest.WithCheckInterval(20*time.Millisecond))
}

// cell matches s in a table column width runes wide: whole, or cut to
// width-1 runes and an ellipsis (the random suffixes of uniq make names
// longer on an external broker).
func cell(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return regexp.QuoteMeta(s)
	}
	return regexp.QuoteMeta(string(r[:width-1])) + "…"
}

func typeKeys(tm *teatest.TestModel, s string) {
	for _, r := range s {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// The UI on a cluster source: the partitions screen shows the HWMs and the
// consumer lag kadm reports and follows them live as a Kafka client
// produces and commits; the groups screen shows the same lag; the tail
// shows a new record; the segments screen needs a local data dir.
func TestUIShowsClusterWatermarksAndLag(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	addr := bootstrap(t)
	topic, group := uniq(t, "payments"), uniq(t, "ledger")
	kc, adm := kclient(t, addr)
	createTopic(t, adm, topic, 2)
	produce := func(p int32, n int, tag string) {
		t.Helper()
		var rs []*kgo.Record
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%s-%d", tag, i))})
		}
		if err := kc.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(p int32, at int64) {
		t.Helper()
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
		if r, err := adm.CommitOffsets(testCtx(t), group, os); err != nil || r.Error() != nil {
			t.Fatalf("commit: %v %v", err, r.Error())
		}
	}
	produce(0, 12, "a")
	produce(1, 7, "b")
	commit(0, 5)

	// kadm's own answers, which the screen must show.
	expect := func() (hwm [2]int64, lag int64) {
		t.Helper()
		ends, err := adm.ListEndOffsets(testCtx(t), topic)
		if err != nil {
			t.Fatal(err)
		}
		for p := range int32(2) {
			o, _ := ends.Lookup(topic, p)
			hwm[p] = o.Offset
		}
		lags, err := adm.Lag(testCtx(t), group)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := lags[group].Lag.Lookup(topic, 0)
		if !ok {
			t.Fatalf("kadm has no lag of %s on %s/0", group, topic)
		}
		return hwm, l.Lag
	}
	row := func(p int, hwm int64) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`p%d\s+0\s+%d\s+%d\s+n/a\s+n/a`, p, hwm, hwm))
	}
	consumer := func(committed, lag int64) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`%s\s+0\s+%d\s+%d`, regexp.QuoteMeta(group), committed, lag))
	}

	src := openSource(t, addr)
	m, err := tui.New(tui.Options{Source: src, StartTopic: topic, Refresh: 100 * time.Millisecond, Clipboard: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(130, 34))

	hwm, lag := expect()
	if hwm != [2]int64{12, 7} || lag != 7 {
		t.Fatalf("kadm: HWMs %v lag %d", hwm, lag)
	}
	waitScreen(t, tm, row(0, hwm[0]), row(1, hwm[1]), consumer(5, lag), regexp.MustCompile(`kafka 127\.0\.0\.1:`))

	// Live: more records and a new commit, from a Kafka client.
	produce(0, 30, "c")
	produce(1, 3, "d")
	commit(0, 20)
	hwm, lag = expect()
	waitScreen(t, tm, row(0, hwm[0]), row(1, hwm[1]), consumer(20, lag))

	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, regexp.MustCompile(`segments needs a local data dir`))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})

	typeKeys(tm, ":groups")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, regexp.MustCompile(fmt.Sprintf(`%s\s+Empty\s+0\s+%s\s+0\s+20\s+%d\s+%d`, regexp.QuoteMeta(group), cell(topic, 16), hwm[0], lag)))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc})

	typeKeys(tm, "t")
	waitScreen(t, tm, regexp.MustCompile(`c-29`))
	produce(0, 1, "live")
	waitScreen(t, tm, regexp.MustCompile(`live-0`))

	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangGuard))
}

// The UI on a cluster source: the merged tail follows a grow made by
// another Kafka client (a record produced to the new partition shows), and
// the edit form grows the topic and sets its segment size on the cluster,
// as kadm then reports.
func TestUIMergedTailAndEditOnCluster(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	addr := bootstrap(t)
	topic := uniq(t, "grows")
	kc, adm := kclient(t, addr)
	createTopic(t, adm, topic, 2)
	produce := func(p int32, v string) {
		t.Helper()
		kc.PurgeTopicsFromClient(topic) // the producer learns a new count
		if err := kc.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, "first-a")
	produce(1, "first-b")

	src := openSource(t, addr)
	m, err := tui.New(tui.Options{Source: src, Refresh: 100 * time.Millisecond, Clipboard: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(130, 34))
	waitScreen(t, tm, regexp.MustCompile(`kafka 127\.0\.0\.1:`))
	typeKeys(tm, ":tail "+topic)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, regexp.MustCompile(`first-a`), regexp.MustCompile(`first-b`))

	if _, err := adm.UpdatePartitions(testCtx(t), 3, topic); err != nil {
		t.Fatal(err)
	}
	produce(2, "on-the-new-partition")
	waitScreen(t, tm, regexp.MustCompile(`on-the-new-partition`))

	tm.Send(tea.KeyMsg{Type: tea.KeyEsc}) // Topics
	typeKeys(tm, "/"+topic)
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	typeKeys(tm, "e")
	// The codec is a data dir's: the form does not call the cluster's
	// compression.type fixed at creation (Kafka alters it), nor shows an
	// empty codec where the cluster reports none.
	waitScreen(t, tm, regexp.MustCompile(`Edit topic `+regexp.QuoteMeta(topic)),
		regexp.MustCompile(`(?m)(compression\.type \S+: not changed here · |^\s*)every change applies live`))
	clear := tea.KeyMsg{Type: tea.KeyCtrlU}
	for range 3 { // segment
		tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	}
	tm.Send(clear)
	typeKeys(tm, "8MiB")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tm.Send(tea.KeyMsg{Type: tea.KeyTab}) // partitions
	tm.Send(clear)
	typeKeys(tm, "4")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, regexp.MustCompile(`segment 8\.0 MiB, partitions 3→4`))

	kc.PurgeTopicsFromClient(topic) // kadm answers Metadata from kgo's cache
	md, err := adm.Metadata(testCtx(t), topic)
	if err != nil || len(md.Topics[topic].Partitions) != 4 {
		t.Fatalf("kadm sees %d partitions after the edit (%v), want 4", len(md.Topics[topic].Partitions), err)
	}
	if seg := topicConfigs(t, adm, topic)["segment.bytes"]; seg != "8388608" {
		t.Errorf("segment.bytes after the edit: %q, want 8388608", seg)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(hangGuard))
}

// After the edit form saves on a cluster, the topics list has the edited
// topic selected once the user goes back to it, not the first topic: the
// form opened from the partitions screen of a topic opened with :topic.
func TestUIEditKeepsTopicSelectedOnCluster(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	addr := bootstrap(t)
	_, adm := kclient(t, addr)
	names := []string{uniq(t, "edit-a"), uniq(t, "edit-b"), uniq(t, "edit-c")}
	for _, n := range names {
		createTopic(t, adm, n, 1)
	}
	src := openSource(t, addr)
	m, err := tui.New(tui.Options{Source: src, Refresh: 100 * time.Millisecond, Clipboard: func(string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(130, 34))
	waitScreen(t, tm, regexp.MustCompile(regexp.QuoteMeta(names[2])))
	typeKeys(tm, ":topic "+names[1])
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, regexp.MustCompile(`cluster topic · 1 partitions`))
	typeKeys(tm, "e")
	waitScreen(t, tm, regexp.MustCompile(`Edit topic `+regexp.QuoteMeta(names[1])))
	for range 3 { // segment
		tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	typeKeys(tm, "8MiB")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitScreen(t, tm, regexp.MustCompile(`applied live: segment 8\.0 MiB`))
	tm.Send(tea.KeyMsg{Type: tea.KeyEsc}) // the topics list
	waitScreen(t, tm, regexp.MustCompile(`n new topic`))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := ansi.ReplaceAllString(tm.FinalModel(t, teatest.WithFinalTimeout(hangGuard)).View(), "")
	if !regexp.MustCompile(`▸ ` + regexp.QuoteMeta(names[1]) + ` `).MatchString(final) {
		t.Errorf("after editing %s the topics list selects another topic:\n%s", names[1], final)
	}
}
