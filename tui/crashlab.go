package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/internal/textcol"
)

type labPartitionsMsg struct {
	to
	rows []row
	err  error
}

// labDefaultMsg is a fault kind resolved against the partition: the
// segment and position it would hit by default.
type labDefaultMsg struct {
	to
	kind  engine.CrashKind
	fault engine.CrashFault
	err   error
}

type labResultMsg struct {
	to
	res *engine.CrashResult
	err error
}

// crashLabScreen applies one fault to a scratch copy of a partition and
// shows the recovery report of the damaged copy beside the healthy one,
// with what survives, what was truncated and what is now skipped or hidden.
// The partition's own files are only read (copied); all disk work runs in
// commands.
type crashLabScreen struct {
	c     *Common
	id    int
	topic string // "" until a partition is picked
	part  int

	parts *table // partition picker
	kinds *table // fault kinds
	input textinput.Model
	edit  bool // the fault line has the keyboard

	running bool
	res     *engine.CrashResult
	err     error
	lines   []string // rendered result
	// shownDefault is the resolved default fault on the fault line (of
	// defaultKind). Applied unedited, the kind's default is resolved again
	// against the copy: a busy partition has grown since it was shown.
	shownDefault string
	defaultKind  engine.CrashKind
	offset       int
	w, h         int
}

func newCrashLabScreen(c *Common, topic string, p int) *crashLabScreen {
	s := &crashLabScreen{c: c, id: c.newID(), topic: topic, part: p, input: textinput.New()}
	s.input.Prompt = ""
	s.parts = newTable(c, []column{{Title: "PARTITION", Width: 20, Flex: true}}, "no partitions")
	s.kinds = newTable(c, []column{{Title: "FAULT", Width: 18}, {Title: "WHAT IT DOES", Width: 20, Flex: true}}, "")
	rows := make([]row, 0, len(engine.CrashKinds()))
	for _, k := range engine.CrashKinds() {
		rows = append(rows, row{Key: string(k), Cells: []string{string(k), k.Describe()}})
	}
	s.kinds.SetRows(rows)
	return s
}

func (s *crashLabScreen) ID() int { return s.id }

func (s *crashLabScreen) Crumb() string {
	if s.topic == "" {
		return "crash lab"
	}
	return fmt.Sprintf("%s / p%d / crash lab", s.topic, s.part)
}

// Capturing: while the fault line is edited, typed keys are the fault's.
func (s *crashLabScreen) Capturing() bool { return s.edit }

func (s *crashLabScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.parts.SetSize(w, h-2)
	s.kinds.SetSize(w, min(len(engine.CrashKinds())+1, max(h-6, 3)))
	s.input.Width = max(w-12, 10)
	if s.res != nil || s.err != nil {
		s.render() // the result wraps to the width, in the current theme
	}
	s.clamp()
}

func (s *crashLabScreen) Init() tea.Cmd {
	if s.topic == "" {
		return s.loadPartitions()
	}
	return s.resolve()
}

// rel is the partition's directory relative to the data dir.
func (s *crashLabScreen) rel() string { return layout.PartitionDir("", s.topic, s.part) }

// CrashLab applies faults to scratch copies of a partition's files and
// compares recovery of the healthy and the faulted copy (*engine.Engine
// implements it; the partition's own files are only read).
type CrashLab interface {
	// ResolveCrashFault fills the defaults of f (segment, position) from
	// the partition's files.
	ResolveCrashFault(topic string, partition int, f engine.CrashFault) (engine.CrashFault, error)
	// RunCrashLab applies f to a scratch copy of the partition.
	RunCrashLab(topic string, partition int, f engine.CrashFault) (*engine.CrashResult, error)
}

// crashLab returns the source's crash lab, or an error saying it has none.
func crashLab(src Source) (CrashLab, error) {
	if cl, ok := src.(CrashLab); ok {
		return cl, nil
	}
	return nil, fmt.Errorf("crash lab: %w", ErrNeedsDataDir)
}

func (s *crashLabScreen) loadPartitions() tea.Cmd {
	src, id := s.c.Src, s.id
	return func() tea.Msg {
		topics, err := src.Topics()
		if err != nil {
			return labPartitionsMsg{to: to{id}, err: err}
		}
		var rows []row
		for _, t := range topics {
			for p := 0; p < t.Config.Partitions; p++ {
				rows = append(rows, row{Key: fmt.Sprintf("%d/%s", p, t.Name), Cells: []string{fmt.Sprintf("%s/p%d", t.Name, p)}})
			}
		}
		return labPartitionsMsg{to: to{id}, rows: rows}
	}
}

// resolve fills the fault line with the selected kind's defaults, resolved
// against the partition's files (headers only, read-only).
func (s *crashLabScreen) resolve() tea.Cmd {
	r, ok := s.kinds.Selected()
	if !ok {
		return nil
	}
	kind := engine.CrashKind(r.Key)
	src, topic, p, id := s.c.Src, s.topic, s.part, s.id
	return func() tea.Msg {
		cl, err := crashLab(src)
		if err != nil {
			return labDefaultMsg{to: to{id}, kind: kind, err: err}
		}
		f, err := cl.ResolveCrashFault(topic, p, engine.CrashFault{Kind: kind, Segment: -1, Pos: -1})
		return labDefaultMsg{to: to{id}, kind: kind, fault: f, err: err}
	}
}

func (s *crashLabScreen) apply() tea.Cmd {
	f, err := engine.ParseCrashFault(s.input.Value())
	if err != nil {
		return errStatus(err)
	}
	if s.input.Value() == s.shownDefault && f.Kind == s.defaultKind {
		f = engine.CrashFault{Kind: s.defaultKind, Segment: -1, Pos: -1}
	}
	if s.running {
		return status("a fault is already being applied")
	}
	s.running, s.err = true, nil
	src, topic, p, id := s.c.Src, s.topic, s.part, s.id
	return func() tea.Msg {
		cl, err := crashLab(src)
		if err != nil {
			return labResultMsg{to: to{id}, err: err}
		}
		res, err := cl.RunCrashLab(topic, p, f)
		return labResultMsg{to: to{id}, res: res, err: err}
	}
}

func (s *crashLabScreen) Update(msg tea.Msg) tea.Cmd {
	k := s.c.Keys
	switch msg := msg.(type) {
	case labPartitionsMsg:
		s.err = msg.err
		s.parts.SetRows(msg.rows)
		return nil
	case labDefaultMsg:
		if r, ok := s.kinds.Selected(); !ok || r.Key != string(msg.kind) || s.edit {
			return nil // the selection moved on, or the user is typing
		}
		if msg.err != nil {
			s.input.SetValue(string(msg.kind))
			return errStatus(msg.err)
		}
		s.input.SetValue(msg.fault.String())
		s.shownDefault, s.defaultKind = msg.fault.String(), msg.kind
		return nil
	case labResultMsg:
		s.running = false
		s.res, s.err, s.offset = msg.res, msg.err, 0
		s.render()
		if msg.err != nil {
			return errStatus(msg.err)
		}
		return status("%s applied to a scratch copy; the original is unchanged", msg.res.FaultSpec)
	case tea.KeyMsg:
		switch {
		case s.topic == "":
			if s.parts.Update(msg) {
				return nil
			}
			if key.Matches(msg, k.Enter) {
				r, ok := s.parts.Selected()
				if !ok {
					return nil
				}
				p, topic, _ := strings.Cut(r.Key, "/")
				fmt.Sscan(p, &s.part)
				s.topic = topic
				return s.resolve()
			}
			return nil
		case s.edit:
			switch {
			case key.Matches(msg, k.Enter):
				s.edit = false
				s.input.Blur()
				return s.apply()
			case key.Matches(msg, k.NextField):
				s.edit = false
				s.input.Blur()
				return nil
			}
			var cmd tea.Cmd
			s.input, cmd = s.input.Update(msg)
			return cmd
		case s.res != nil || s.err != nil:
			// The result is shown: scroll it; enter or tab go back to
			// picking a fault.
			switch {
			case key.Matches(msg, k.Enter, k.NextField):
				s.res, s.err, s.lines = nil, nil, nil
				return s.resolve()
			}
			s.scroll(msg)
			return nil
		}
		switch {
		case key.Matches(msg, k.NextField):
			s.edit = true
			s.input.CursorEnd()
			return s.input.Focus()
		case key.Matches(msg, k.Enter):
			return s.apply()
		}
		if s.kinds.Update(msg) {
			return s.resolve()
		}
		return nil
	}
	if s.edit {
		var cmd tea.Cmd
		s.input, cmd = s.input.Update(msg)
		return cmd
	}
	return nil
}

func (s *crashLabScreen) scroll(msg tea.KeyMsg) {
	k := s.c.Keys
	switch {
	case key.Matches(msg, k.Up):
		s.offset--
	case key.Matches(msg, k.Down):
		s.offset++
	case key.Matches(msg, k.PageUp):
		s.offset -= s.h - 1
	case key.Matches(msg, k.PageDown):
		s.offset += s.h - 1
	case key.Matches(msg, k.Top):
		s.offset = 0
	case key.Matches(msg, k.Bottom):
		s.offset = len(s.lines)
	}
	s.clamp()
}

func (s *crashLabScreen) clamp() {
	s.offset = max(min(s.offset, len(s.lines)-s.h), 0)
}

// render lays the result out: fault, verdict, the two reports side by side
// (Report.Lines, as `pulse inspect` prints them), what changed.
func (s *crashLabScreen) render() {
	st := s.c.Styles
	s.lines = nil
	if s.err != nil {
		s.lines = append(strings.Split(wrapIndented(st.StatusError, s.err.Error(), s.w), "\n"), "", st.Muted.Render("  enter: pick another fault"))
		return
	}
	r := s.res
	add := func(l ...string) { s.lines = append(s.lines, l...) }
	add(st.Bold.Render("  "+r.Partition+" · fault "+r.FaultSpec), st.Muted.Render("  applied to a scratch copy: "+r.Applied))
	vs := st.Good
	switch {
	case r.Faulted.Degraded || len(r.FoundOnRead) > 0 || len(r.Changed) > 0:
		vs = st.Bad
	case len(r.Lost) > 0 || r.Faulted.NeedsWork():
		vs = st.Warn
	}
	for _, l := range wrapWords(strings.Fields("verdict: "+r.Verdict), max(s.w-2, 20), "  ") {
		add(vs.Render(l))
	}
	add("")
	colW := max((s.w-5)/2, 20)
	side := textcol.SideBySide("HEALTHY COPY", reportLines(s.c, r.Healthy), "FAULTED COPY", reportLines(s.c, r.Faulted), colW)
	for i, l := range side {
		if i == 0 {
			add(st.PanelTitle.Render(" " + l))
			continue
		}
		add(" " + truncate(l, s.w-1))
	}
	add("", st.PanelTitle.Render("  What changed"))
	for _, f := range r.Findings {
		ls := wrapWords(strings.Fields(f), max(s.w-2, 20), "    ")
		ls[0] = "  - " + strings.TrimPrefix(ls[0], "    ")
		add(ls...)
	}
	add("", st.Muted.Render("  enter: pick another fault"))
}

func (s *crashLabScreen) View() string {
	st := s.c.Styles
	if s.topic == "" {
		if s.err != nil {
			return wrapIndented(st.StatusError, s.err.Error(), s.c.Width)
		}
		return st.Muted.Render("  pick a partition to damage (a scratch copy of it):") + "\n\n" + s.parts.View()
	}
	if s.res != nil || s.err != nil {
		end := min(s.offset+s.h, len(s.lines))
		return strings.Join(s.lines[s.offset:end], "\n")
	}
	rel := s.rel()
	var b strings.Builder
	b.WriteString(st.Muted.Render(fmt.Sprintf("  %s p%d (%s): faults go to a scratch copy; the partition's files are only read", s.topic, s.part, rel)) + "\n\n")
	b.WriteString(fit(s.kinds.View(), s.w, s.kinds.height+1) + "\n\n")
	label := st.FormLabel.Render("  fault  ")
	if s.edit {
		label = st.FormFocused.Render("  fault  ")
	}
	b.WriteString(label + s.input.View() + "\n")
	hint := "tab: edit N / POS / BIT · enter: apply to a scratch copy"
	if s.edit {
		hint = "enter: apply · tab: back to the list"
	}
	if s.running {
		hint = "applying the fault and running recovery on the copies…"
	}
	b.WriteString(st.FormHint.Render("         " + hint))
	return b.String()
}

func (s *crashLabScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Up, k.Down, k.NextField, k.Enter, k.Back}
}

func (s *crashLabScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown}, {k.NextField, k.Enter, k.Back}}
}
