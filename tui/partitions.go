package tui

import (
	"errors"
	"fmt"
	"sort"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
)

type describeMsg struct {
	to
	info engine.TopicInfo
	err  error
}

type consumersMsg struct {
	to
	cursors []engine.ConsumerInfo
	err     error
}

// partitionsScreen shows one topic's partitions (log start, HWM, LEO, hidden
// tail, segments, size) and the consumers' cursors and lag.
type partitionsScreen struct {
	c         *Common
	id        int
	topic     string
	table     *table
	consumers *table
	info      engine.TopicInfo
	cursors   []engine.ConsumerInfo
	consErr   error
	loaded    bool
	err       error
	w, h      int
}

func newPartitionsScreen(c *Common, topic string) *partitionsScreen {
	s := &partitionsScreen{c: c, id: c.newID(), topic: topic}
	s.table = newTable(c, []column{
		{Title: "P", Width: 4, Right: true},
		{Title: "LOG START", Width: 11, Right: true, Drop: 3},
		{Title: "HWM", Width: 11, Right: true},
		{Title: "LEO", Width: 11, Right: true, Drop: 5},
		{Title: "HIDDEN", Width: 7, Right: true},
		{Title: "SEGS", Width: 5, Right: true, Drop: 6},
		{Title: "SIZE", Width: 10, Right: true, Drop: 4},
		{Title: "CONSUMERS", Width: 9, Right: true, Drop: 2},
		{Title: "MAX LAG", Width: 9, Right: true},
		{Title: "STATUS", Width: 10, Flex: true},
	}, "no partitions")
	s.consumers = newTable(c, []column{
		{Title: "CONSUMER", Width: 24},
		{Title: "P", Width: 4, Right: true},
		{Title: "CURSOR", Width: 11, Right: true},
		{Title: "LAG", Width: 11, Right: true},
	}, "no consumer has committed a cursor on this topic")
	s.consumers.passive = true
	return s
}

func (s *partitionsScreen) ID() int          { return s.id }
func (s *partitionsScreen) Crumb() string    { return s.topic }
func (s *partitionsScreen) Init() tea.Cmd    { return s.load() }
func (s *partitionsScreen) Refresh() tea.Cmd { return s.load() }

func (s *partitionsScreen) SetFilter(f string) { s.table.SetFilter(f) }
func (s *partitionsScreen) Filter() string     { return s.table.Filter() }

func (s *partitionsScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	top := h - h/3 - 1
	if top < 3 {
		top = h
	}
	s.table.SetSize(w, top)
	s.consumers.SetSize(w, h-top-2)
}

func (s *partitionsScreen) load() tea.Cmd {
	src, id, topic := s.c.Src, s.id, s.topic
	cmds := []tea.Cmd{func() tea.Msg {
		info, err := src.Describe(topic)
		return describeMsg{to: to{id}, info: info, err: err}
	}}
	if cl, ok := src.(ConsumerLister); ok {
		cmds = append(cmds, func() tea.Msg {
			cur, err := cl.Consumers(topic)
			return consumersMsg{to: to{id}, cursors: cur, err: err}
		})
	}
	return tea.Batch(cmds...)
}

func (s *partitionsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case describeMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.info = msg.info
			s.rebuild()
		}
		return nil
	case consumersMsg:
		s.consErr = msg.err
		if msg.err == nil {
			s.cursors = msg.cursors
			s.rebuild()
		}
		return nil
	case tea.KeyMsg:
		return s.key(msg)
	}
	s.table.Update(msg)
	return nil
}

func (s *partitionsScreen) key(msg tea.KeyMsg) tea.Cmd {
	k := s.c.Keys
	if s.table.Update(msg) {
		return nil
	}
	r, ok := s.table.Selected()
	if !ok {
		return nil
	}
	var p int
	fmt.Sscan(r.Key, &p)
	switch {
	case key.Matches(msg, k.Enter):
		return push(needsLocal(s.c, "segments", func() Screen { return newSegmentsScreen(s.c, s.topic, p) }))
	case key.Matches(msg, k.Tail):
		return push(newTailScreen(s.c, s.topic, p))
	case key.Matches(msg, k.Produce):
		return push(newProduceScreen(s.c, s.topic, p))
	case key.Matches(msg, k.Recovery):
		return push(needsLocal(s.c, "recovery", func() Screen { return newRecoveryScreen(s.c, s.topic, p) }))
	case key.Matches(msg, k.CrashLab):
		return push(needsLocal(s.c, "crash lab", func() Screen { return newCrashLabScreen(s.c, s.topic, p) }))
	case key.Matches(msg, k.Edit):
		return push(newAlterTopicScreen(s.c, s.info))
	}
	return nil
}

func (s *partitionsScreen) hwm(p int) (int64, bool) {
	for _, pi := range s.info.Partitions {
		if pi.Partition == p {
			return pi.HWM, true
		}
	}
	return 0, false
}

func (s *partitionsScreen) rebuild() {
	type agg struct {
		n      int
		maxLag int64
	}
	byPart := map[int]*agg{}
	crow := make([]row, 0, len(s.cursors))
	cur := append([]engine.ConsumerInfo(nil), s.cursors...)
	sort.Slice(cur, func(i, j int) bool {
		if cur[i].Consumer != cur[j].Consumer {
			return cur[i].Consumer < cur[j].Consumer
		}
		return cur[i].Partition < cur[j].Partition
	})
	for _, cc := range cur {
		lag := "-"
		if _, ok := s.hwm(cc.Partition); ok {
			l := max(cc.Lag, 0)
			lag = humanCount(l)
			a := byPart[cc.Partition]
			if a == nil {
				a = &agg{}
				byPart[cc.Partition] = a
			}
			a.n++
			if l > a.maxLag {
				a.maxLag = l
			}
		}
		crow = append(crow, row{
			Key:   fmt.Sprintf("%s/%d", cc.Consumer, cc.Partition),
			Cells: []string{cc.Consumer, fmt.Sprint(cc.Partition), humanCount(cc.Offset), lag},
		})
	}
	s.consumers.SetRows(crow)

	rows := make([]row, 0, len(s.info.Partitions))
	_, local := localFiles(s.c.Src)
	for _, p := range s.info.Partitions {
		cons, lag := "0", "-"
		if a := byPart[p.Partition]; a != nil {
			cons, lag = fmt.Sprint(a.n), humanCount(a.maxLag)
		}
		if _, ok := s.c.Src.(ConsumerLister); !ok {
			cons = "n/a"
		}
		stat, stStyle := "ok", func(c *Common) lipgloss.Style { return c.Styles.Good }
		switch {
		case p.Failed != "":
			stat, stStyle = "failed ("+p.Failed+")", func(c *Common) lipgloss.Style { return c.Styles.Bad }
		case p.Degraded:
			stat = fmt.Sprintf("degraded (%s skipped)", humanCount(p.SkippedRecords))
			stStyle = func(c *Common) lipgloss.Style { return c.Styles.BadgeDegraded }
		case p.Compacting:
			stat, stStyle = "compacting", func(c *Common) lipgloss.Style { return c.Styles.BadgeCompacting }
		case p.HiddenTail > 0:
			stat, stStyle = "hidden tail", func(c *Common) lipgloss.Style { return c.Styles.Warn }
		}
		rows = append(rows, row{
			Key: fmt.Sprint(p.Partition),
			Cells: []string{
				fmt.Sprintf("p%d", p.Partition),
				humanCount(p.LogStart),
				humanCount(p.HWM),
				humanCount(p.LEO),
				orNA(local, func() string { return humanCount(p.HiddenTail) }),
				orNA(p.Segments >= 0, func() string { return fmt.Sprint(p.Segments) }),
				orNA(p.Bytes >= 0, func() string { return humanBytes(p.Bytes) }),
				cons,
				lag,
				stat,
			},
			Styles: map[int]func(*Common) lipgloss.Style{9: stStyle},
		})
	}
	s.table.SetRows(rows)
}

func (s *partitionsScreen) View() string {
	st := s.c.Styles
	if s.err != nil {
		if errors.Is(s.err, engine.ErrTopicNotFound) {
			return wrapIndented(st.StatusError, fmt.Sprintf("topic %q not found", s.topic), s.c.Width)
		}
		return wrapIndented(st.StatusError, s.err.Error(), s.c.Width)
	}
	if !s.loaded {
		return st.Muted.Render("  loading " + s.topic + "…")
	}
	cfg := s.info.Config
	// Most telling first: a narrow terminal leaves out the segment size,
	// shown on the edit form too.
	summary := st.Muted.Render(fieldsLine([]string{"codec " + cfg.Codec, "sync " + string(cfg.SyncMode),
		"cleanup " + string(cfg.Cleanup), "retention " + retention(cfg), "segments up to " + humanBytes(cfg.SegmentMaxBytes)}, s.w))
	if _, local := localFiles(s.c.Src); !local {
		summary = clusterSummary(s.c, s.info, s.w)
	}
	out := s.table.View()
	out = fit(out, s.w, s.table.height+1)
	var bottom string
	switch _, ok := s.c.Src.(ConsumerLister); {
	case !ok:
		bottom = st.PanelTitle.Render("  Consumers") + "\n" + st.Muted.Render("  consumer cursors: "+ErrNotAvailable.Error())
	case s.consErr != nil:
		bottom = st.PanelTitle.Render("  Consumers") + "\n" + st.StatusError.Render("  "+s.consErr.Error())
	default:
		bottom = st.PanelTitle.Render("  Consumers") + "\n" + s.consumers.View()
	}
	return out + "\n" + summary + "\n" + bottom
}

func (s *partitionsScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Enter, k.Tail, k.Produce, k.Recovery, k.CrashLab, k.Filter, k.Back}
}

func (s *partitionsScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Enter, k.Tail, k.Produce, k.Recovery, k.CrashLab, k.Edit, k.Back}}
}
