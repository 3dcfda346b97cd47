package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
)

type segmentsMsg struct {
	to
	segs []engine.SegmentInfo
	info engine.TopicInfo
	err  error
}

type maintenanceMsg struct {
	to
	m   engine.MaintenanceStatus
	err error
}

type snapshotMsg struct {
	to
	snap   engine.Snapshot
	err    error
	report *engine.RecoveryReport // the last open's recovery, nil: not reported
}

type passDoneMsg struct {
	to
	what string
	took time.Duration
	err  error
}

// segmentsScreen shows one partition's segments with the snapshot, retention
// and compaction panels.
type segmentsScreen struct {
	c       *Common
	id      int
	topic   string
	part    int
	table   *table
	segs    []engine.SegmentInfo
	info    engine.TopicInfo
	maint   *engine.MaintenanceStatus
	maintEr error
	snap    *snapshotMsg
	running string // "compaction" or "retention" while a pass runs
	loaded  bool
	err     error
	w, h    int
}

// panelLines is the height of the panels under the segments table.
const panelLines = 10

func newSegmentsScreen(c *Common, topic string, p int) *segmentsScreen {
	s := &segmentsScreen{c: c, id: c.newID(), topic: topic, part: p}
	s.table = newTable(c, []column{
		{Title: "BASE", Width: 10, Right: true},
		{Title: "NEXT", Width: 10, Right: true},
		{Title: "SIZE", Width: 10, Right: true, Drop: 3},
		{Title: "RECORDS", Width: 8, Right: true},
		{Title: "BATCHES", Width: 7, Right: true, Drop: 6},
		{Title: "TIME RANGE", Width: 12, Flex: true},
		{Title: "CODEC", Width: 5, Drop: 4},
		{Title: "RATIO", Width: 6, Right: true, Drop: 5},
		{Title: "STATE", Width: 6},
		{Title: "SPARSE", Width: 6},
	}, "no segments")
	return s
}

func (s *segmentsScreen) ID() int          { return s.id }
func (s *segmentsScreen) Crumb() string    { return fmt.Sprintf("%s / p%d / segments", s.topic, s.part) }
func (s *segmentsScreen) Init() tea.Cmd    { return s.load() }
func (s *segmentsScreen) Refresh() tea.Cmd { return s.load() }

func (s *segmentsScreen) SetFilter(f string) { s.table.SetFilter(f) }
func (s *segmentsScreen) Filter() string     { return s.table.Filter() }

func (s *segmentsScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	th := h - panelLines
	if th < 4 {
		th = h
	}
	s.table.SetSize(w, th)
}

func (s *segmentsScreen) load() tea.Cmd {
	src, id, topic, p := s.c.Src, s.id, s.topic, s.part
	cmds := []tea.Cmd{func() tea.Msg {
		info, err := src.Describe(topic)
		if err != nil {
			return segmentsMsg{to: to{id}, err: err}
		}
		segs, err := segmentsOf(src, topic, p)
		return segmentsMsg{to: to{id}, segs: segs, info: info, err: err}
	}}
	if mr, ok := src.(MaintenanceReporter); ok {
		cmds = append(cmds, func() tea.Msg {
			m, err := mr.MaintenanceStatus(topic, p)
			return maintenanceMsg{to: to{id}, m: m, err: err}
		})
	}
	cmds = append(cmds, func() tea.Msg {
		msg := snapshotMsg{to: to{id}}
		if sr, ok := src.(SnapshotReader); ok {
			msg.snap, msg.err = sr.Snapshot(topic, p)
		} else {
			msg.err = fmt.Errorf("snapshot: %w", ErrNeedsDataDir)
		}
		if rr, ok := src.(recoveryReporter); ok {
			for _, r := range rr.RecoveryReports() {
				if r.Topic == topic && r.Partition == p {
					msg.report = &r
					break
				}
			}
		}
		return msg
	})
	return tea.Batch(cmds...)
}

func (s *segmentsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case segmentsMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.segs, s.info = msg.segs, msg.info
			s.rebuild()
		}
		return nil
	case snapshotMsg:
		s.snap = &msg
		return nil
	case maintenanceMsg:
		s.maintEr = msg.err
		if msg.err == nil {
			m := msg.m
			s.maint = &m
		}
		return nil
	case passDoneMsg:
		s.running = ""
		if msg.err != nil {
			return tea.Batch(errStatus(fmt.Errorf("%s pass on %s: %w", msg.what, s.topic, msg.err)), s.load())
		}
		return tea.Batch(status("%s pass on %s done in %s", msg.what, s.topic, s.c.Opts.FormatDuration(msg.took)), s.load())
	case tea.KeyMsg:
		return s.key(msg)
	}
	s.table.Update(msg)
	return nil
}

func (s *segmentsScreen) key(msg tea.KeyMsg) tea.Cmd {
	k := s.c.Keys
	if s.table.Update(msg) {
		return nil
	}
	switch {
	case key.Matches(msg, k.CompactNow):
		return s.runPass("compaction")
	case key.Matches(msg, k.RetainNow):
		return s.runPass("retention")
	case key.Matches(msg, k.Tail):
		// The partition's tail, paused at the selected segment's first
		// offset.
		r, ok := s.table.Selected()
		if !ok {
			return push(newTailScreen(s.c, s.topic, s.part))
		}
		var base int64
		fmt.Sscan(r.Key, &base)
		return push(newTailScreenAt(s.c, s.topic, s.part, base))
	case key.Matches(msg, k.Enter, k.Frames):
		r, ok := s.table.Selected()
		if !ok {
			return nil
		}
		var base int64
		fmt.Sscan(r.Key, &base)
		return push(newFramesScreen(s.c, s.topic, s.part, base, 0))
	case key.Matches(msg, k.Recovery):
		return push(newRecoveryScreen(s.c, s.topic, s.part))
	}
	return nil
}

func (s *segmentsScreen) runPass(what string) tea.Cmd {
	mt, ok := s.c.Src.(MaintenanceTrigger)
	if !ok {
		return errStatus(fmt.Errorf("%s pass: %w", what, ErrNotAvailable))
	}
	if s.running != "" {
		return status("a %s pass is already running", s.running)
	}
	s.running = what
	id, topic, now := s.id, s.topic, s.c.Opts.Now
	return func() tea.Msg {
		start := now()
		var err error
		if what == "compaction" {
			err = mt.RunCompaction(topic)
		} else {
			err = mt.RunRetention(topic)
		}
		return passDoneMsg{to: to{id}, what: what, took: now().Sub(start), err: err}
	}
}

func (s *segmentsScreen) rebuild() {
	ft := s.c.Opts.FormatTime
	rows := make([]row, 0, len(s.segs))
	for _, sg := range s.segs {
		state, stStyle := "active", func(c *Common) lipgloss.Style { return c.Styles.BadgeActive }
		if sg.Sealed {
			state, stStyle = "sealed", func(c *Common) lipgloss.Style { return c.Styles.BadgeSealed }
		}
		sparse := ""
		if sg.Sparse {
			sparse = "sparse"
		}
		tr := "-"
		if sg.Records > 0 {
			tr = timeRange(ft(sg.FirstTimestamp), ft(sg.LastTimestamp))
		}
		rows = append(rows, row{
			Key: fmt.Sprint(sg.Base),
			Cells: []string{
				humanCount(sg.Base), humanCount(sg.Next), humanBytes(sg.Bytes),
				humanCount(sg.Records), humanCount(sg.Batches), tr, sg.Codec,
				ratio(sg.RawBytes, sg.Bytes), state, sparse,
			},
			Styles: map[int]func(*Common) lipgloss.Style{
				8: stStyle,
				9: func(c *Common) lipgloss.Style { return c.Styles.BadgeSparse },
			},
		})
	}
	s.table.SetRows(rows)
}

// timeRange shows "first → last", dropping last's date when it is first's.
func timeRange(first, last string) string {
	if i := strings.IndexByte(first, ' '); i > 0 && strings.HasPrefix(last, first[:i+1]) {
		last = last[i+1:]
	}
	return first + " → " + last
}

func (s *segmentsScreen) View() string {
	st := s.c.Styles
	if s.err != nil {
		return wrapIndented(st.StatusError, s.err.Error(), s.c.Width)
	}
	if !s.loaded {
		return st.Muted.Render(fmt.Sprintf("  loading %s p%d…", s.topic, s.part))
	}
	tbl := fit(s.table.View(), s.w, s.table.height+1)
	if s.running != "" {
		tbl = fit(s.table.View(), s.w, s.table.height) + "\n" + st.Warn.Render(fmt.Sprintf("  running a %s pass on %s…", s.running, s.topic))
	}
	pw := (s.w - 2) / 3
	if pw < 24 {
		return tbl
	}
	panels := lipgloss.JoinHorizontal(lipgloss.Top,
		s.panel("Snapshot", s.snapshotLines(), pw),
		s.panel("Retention", s.retentionLines(), pw),
		s.panel("Compaction", s.compactionLines(), pw))
	return tbl + "\n" + panels
}

func (s *segmentsScreen) panel(title string, lines []string, w int) string {
	st := s.c.Styles
	inner := w - 4 // border and padding
	out := []string{st.PanelTitle.Render(title)}
	for _, l := range lines {
		out = append(out, truncate(l, inner))
	}
	for len(out) < panelLines-2 {
		out = append(out, "")
	}
	return st.Panel.Width(w - 2).Render(strings.Join(out[:panelLines-2], "\n"))
}

func (s *segmentsScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Frames, k.Tail, k.Recovery, k.CompactNow, k.RetainNow, k.Back}
}

func (s *segmentsScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Enter, k.Frames, k.Tail, k.CompactNow, k.RetainNow, k.Recovery, k.Back}}
}
