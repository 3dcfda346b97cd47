package tui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/layout"
)

// reportsMsg carries the recovery reports of the last open.
type reportsMsg struct {
	to
	reports []engine.RecoveryReport
	ok      bool // the source reports recovery at all
}

// recoveryInfoMsg is the live state of the partition the recovery screen
// shows: degraded, skipped records, hidden tail now, and its segments.
type recoveryInfoMsg struct {
	to
	part engine.PartitionInfo
	segs []engine.SegmentInfo
	err  error
}

type exposedMsg struct {
	to
	err error
}

// loadReports fetches the reports in a command.
func loadReports(src Source, id int) tea.Cmd {
	return func() tea.Msg {
		rr, ok := src.(recoveryReporter)
		if !ok {
			return reportsMsg{to: to{id}}
		}
		return reportsMsg{to: to{id}, reports: rr.RecoveryReports(), ok: true}
	}
}

// relReport shows a report with its directory relative to the data dir, so
// the screen never shows a machine's temporary paths. Segment and index
// paths are shown as file names by Report.Lines already.
func relReport(r engine.RecoveryReport, dataDir string) engine.RecoveryReport {
	if rel, err := filepath.Rel(dataDir, r.Dir); err == nil && !strings.HasPrefix(rel, "..") {
		r.Dir = rel
	}
	return r
}

// reportLines is Report.Lines, the text `pulse inspect` prints, with the
// directory relative to the data dir and the duration through the UI's
// FormatDuration (so tests can pin it).
func reportLines(c *Common, r engine.RecoveryReport) []string {
	r = relReport(r, dataDir(c.Src))
	lines := r.Lines()
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "  duration "); ok {
			lines[i] = "  duration " + strings.Repeat(" ", len(rest)-len(strings.TrimLeft(rest, " "))) + c.Opts.FormatDuration(r.Duration)
		}
	}
	return lines
}

// reportState is the one-word state of a report, as Lines prints it.
func reportState(r *engine.RecoveryReport) (string, func(*Common) lipgloss.Style) {
	switch {
	case r.Degraded:
		return "DEGRADED", func(c *Common) lipgloss.Style { return c.Styles.BadgeDegraded }
	case r.NeedsWork():
		return "recovered", func(c *Common) lipgloss.Style { return c.Styles.Warn }
	}
	return "ok", func(c *Common) lipgloss.Style { return c.Styles.Good }
}

// styleReportLines colours the lines of Report.Lines (the text `pulse
// inspect` prints) without changing a character.
func styleReportLines(c *Common, lines []string) string {
	st := c.Styles
	out := make([]string, len(lines))
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case i == 0:
			s := st.Bold
			switch {
			case strings.Contains(l, "[DEGRADED]"):
				s = st.BadgeDegraded
			case strings.Contains(l, "[recovered]"):
				s = st.Warn
			case strings.Contains(l, "[ok]"):
				s = st.Good
			}
			out[i] = s.Render(l)
		case strings.HasPrefix(trimmed, "CORRUPT"):
			out[i] = st.Bad.Render(l)
		case strings.HasPrefix(trimmed, "truncation"):
			out[i] = st.Warn.Render(l)
		case strings.HasPrefix(trimmed, "note"):
			out[i] = st.Muted.Render(l)
		default:
			out[i] = st.Text.Render(l)
		}
	}
	return strings.Join(out, "\n")
}

// recoveryListScreen is the recovery report of every partition of the data
// dir, one row each; enter opens one.
type recoveryListScreen struct {
	c      *Common
	id     int
	table  *table
	loaded bool
	ok     bool
	n      int
	w, h   int
}

func newRecoveryListScreen(c *Common) *recoveryListScreen {
	s := &recoveryListScreen{c: c, id: c.newID()}
	s.table = newTable(c, []column{
		{Title: "PARTITION", Width: 16, Flex: true},
		{Title: "STATE", Width: 9},
		{Title: "PATH", Width: 9, Drop: 2},
		{Title: "TOOK", Width: 9, Right: true, Drop: 5},
		{Title: "SCANNED", Width: 10, Right: true, Drop: 4},
		{Title: "TRUNCATED", Width: 9, Right: true},
		{Title: "CORRUPT", Width: 7, Right: true},
		{Title: "OFFSETS", Width: 7, Right: true}, // offsets inside corrupt ranges
		{Title: "HIDDEN", Width: 7, Right: true},
		{Title: "INDEXES", Width: 7, Right: true, Drop: 3},
		{Title: "TEMPS", Width: 5, Right: true, Drop: 6},
	}, "no partitions were opened")
	return s
}

func (s *recoveryListScreen) ID() int            { return s.id }
func (s *recoveryListScreen) Crumb() string      { return "recovery" }
func (s *recoveryListScreen) Init() tea.Cmd      { return loadReports(s.c.Src, s.id) }
func (s *recoveryListScreen) Refresh() tea.Cmd   { return loadReports(s.c.Src, s.id) }
func (s *recoveryListScreen) SetFilter(f string) { s.table.SetFilter(f) }
func (s *recoveryListScreen) Filter() string     { return s.table.Filter() }

func (s *recoveryListScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.SetSize(w, h-2)
}

func (s *recoveryListScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case reportsMsg:
		s.loaded, s.ok, s.n = true, msg.ok, len(msg.reports)
		rows := make([]row, 0, len(msg.reports))
		for _, r := range msg.reports {
			state, style := reportState(&r)
			rows = append(rows, row{
				Key: fmt.Sprintf("%d/%s", r.Partition, r.Topic),
				Cells: []string{
					r.Name(), state, r.Path, s.c.Opts.FormatDuration(r.Duration),
					humanBytes(r.BytesScanned), humanBytes(r.TruncatedBytes()),
					fmt.Sprint(len(r.Corrupt)), humanCount(r.CorruptRecords()), humanCount(r.HiddenTail),
					fmt.Sprint(len(r.IndexesRebuilt)), fmt.Sprint(len(r.TempFilesRemoved)),
				},
				Styles: map[int]func(*Common) lipgloss.Style{1: style},
			})
		}
		s.table.SetRows(rows)
		return nil
	case tea.KeyMsg:
		if s.table.Update(msg) {
			return nil
		}
		if key.Matches(msg, s.c.Keys.Enter) {
			r, ok := s.table.Selected()
			if !ok {
				return nil
			}
			p, topic, _ := strings.Cut(r.Key, "/")
			var n int
			fmt.Sscan(p, &n)
			return push(newRecoveryScreen(s.c, topic, n))
		}
		return nil
	}
	s.table.Update(msg)
	return nil
}

func (s *recoveryListScreen) View() string {
	st := s.c.Styles
	switch {
	case !s.loaded:
		return st.Muted.Render("  loading recovery reports…")
	case !s.ok:
		return st.Muted.Render("  recovery reports: " + ErrNotAvailable.Error())
	}
	var degraded, worked int
	for _, r := range s.table.rows {
		switch r.Cells[1] {
		case "DEGRADED":
			degraded++
		case "recovered":
			worked++
		}
	}
	sum := st.Muted.Render(fmt.Sprintf("  last open of %s: %s, %d needed work, %d degraded · enter: report and frames",
		s.c.Opts.DataDirName, plural(int64(s.n), "partition", "partitions"), worked+degraded, degraded))
	return s.table.under(sum + "\n\n")
}

func (s *recoveryListScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Enter, k.Back, k.Filter}
}

func (s *recoveryListScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Enter, k.Back, k.Filter, k.Refresh}}
}

// recoveryScreen is the recovery report of one partition's last open (the
// same lines `pulse inspect` prints), its live state, and the places to
// jump into with the frame browser: corrupt ranges, truncation points and
// every segment.
type recoveryScreen struct {
	c      *Common
	id     int
	topic  string
	part   int
	report *engine.RecoveryReport
	ok     bool // the source reports recovery
	loaded bool
	info   *engine.PartitionInfo
	segs   []engine.SegmentInfo
	infoEr error
	table  *table
	moved  bool // the user moved the selection: reloads keep it
	w, h   int
}

func newRecoveryScreen(c *Common, topic string, p int) *recoveryScreen {
	s := &recoveryScreen{c: c, id: c.newID(), topic: topic, part: p}
	s.table = newTable(c, []column{
		{Title: "JUMP TO", Width: 10},
		{Title: "SEGMENT", Width: 24},
		{Title: "BYTES", Width: 20},
		{Title: "OFFSETS", Width: 18},
		{Title: "DETAIL", Width: 10, Flex: true},
	}, "no segments")
	return s
}

func (s *recoveryScreen) ID() int          { return s.id }
func (s *recoveryScreen) Crumb() string    { return fmt.Sprintf("%s / p%d / recovery", s.topic, s.part) }
func (s *recoveryScreen) Init() tea.Cmd    { return s.load() }
func (s *recoveryScreen) Refresh() tea.Cmd { return s.load() }

func (s *recoveryScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.SetSize(w, max(h-s.topLines(), 3))
}

func (s *recoveryScreen) load() tea.Cmd {
	src, id, topic, p := s.c.Src, s.id, s.topic, s.part
	return tea.Batch(loadReports(src, id), func() tea.Msg {
		info, err := src.Describe(topic)
		if err != nil {
			return recoveryInfoMsg{to: to{id}, err: err}
		}
		for _, pi := range info.Partitions {
			if pi.Partition == p {
				segs, err := segmentsOf(src, topic, p)
				return recoveryInfoMsg{to: to{id}, part: pi, segs: segs, err: err}
			}
		}
		return recoveryInfoMsg{to: to{id}, err: fmt.Errorf("topic %s has no partition %d", topic, p)}
	})
}

func (s *recoveryScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case reportsMsg:
		s.loaded, s.ok, s.report = true, msg.ok, nil
		for _, r := range msg.reports {
			if r.Topic == s.topic && r.Partition == s.part {
				r := r
				s.report = &r
			}
		}
		s.rebuild()
		return nil
	case recoveryInfoMsg:
		s.infoEr = msg.err
		if msg.err == nil {
			pi := msg.part
			s.info, s.segs = &pi, msg.segs
		}
		s.rebuild()
		return nil
	case exposedMsg:
		if msg.err != nil {
			return tea.Batch(errStatus(fmt.Errorf("expose hidden tail of %s p%d: %w", s.topic, s.part, msg.err)), s.load())
		}
		return tea.Batch(status("hidden tail of %s p%d exposed", s.topic, s.part), s.load())
	case tea.KeyMsg:
		return s.key(msg)
	}
	s.table.Update(msg)
	return nil
}

func (s *recoveryScreen) key(msg tea.KeyMsg) tea.Cmd {
	k := s.c.Keys
	if s.table.Update(msg) {
		s.moved = true
		return nil
	}
	switch {
	case key.Matches(msg, k.Enter):
		r, ok := s.table.Selected()
		if !ok {
			return nil
		}
		var base, pos int64
		fmt.Sscanf(r.Key, "%d@%d", &base, &pos)
		return push(newFramesScreen(s.c, s.topic, s.part, base, pos))
	case key.Matches(msg, k.Expose):
		return s.expose()
	case key.Matches(msg, k.CrashLab):
		return push(newCrashLabScreen(s.c, s.topic, s.part))
	}
	return nil
}

// expose asks before making the hidden tail visible.
func (s *recoveryScreen) expose() tea.Cmd {
	if s.info == nil || s.info.HiddenTail <= 0 {
		return status("%s p%d has no hidden tail", s.topic, s.part)
	}
	ex, ok := s.c.Src.(HiddenTailExposer)
	if !ok {
		return errStatus(fmt.Errorf("expose hidden tail: %w", ErrNotAvailable))
	}
	id, topic, p, hwm, leo := s.id, s.topic, s.part, s.info.HWM, s.info.LEO
	q := fmt.Sprintf("Expose %s records [%d, %d) of %s p%d to consumers?", humanCount(leo-hwm), hwm, leo, topic, p)
	return confirm(q, func() tea.Msg {
		return exposedMsg{to: to{id}, err: ex.ExposeHiddenTail(topic, p)}
	})
}

func (s *recoveryScreen) rebuild() {
	var rows []row
	if r := s.report; r != nil {
		for _, c := range r.Corrupt {
			base, _, _ := layout.ParseSegmentFile(filepath.Base(c.Segment))
			rows = append(rows, row{
				Key:    fmt.Sprintf("%d@%d", base, c.StartPos),
				Cells:  []string{"corrupt", filepath.Base(c.Segment), fmt.Sprintf("[%d, %d)", c.StartPos, c.EndPos), fmt.Sprintf("[%d, %d)", c.FirstOffset, c.EndOffset), c.Err},
				Styles: map[int]func(*Common) lipgloss.Style{0: func(c *Common) lipgloss.Style { return c.Styles.Bad }},
			})
		}
		for _, t := range r.Truncations {
			base, _, _ := layout.ParseSegmentFile(filepath.Base(t.Segment))
			rows = append(rows, row{
				Key:    fmt.Sprintf("%d@%d", base, t.Position),
				Cells:  []string{"truncated", filepath.Base(t.Segment), fmt.Sprintf("at %d, -%d", t.Position, t.Bytes), "", t.Reason},
				Styles: map[int]func(*Common) lipgloss.Style{0: func(c *Common) lipgloss.Style { return c.Styles.Warn }},
			})
		}
	}
	for _, sg := range s.segs {
		state := "active"
		if sg.Sealed {
			state = "sealed"
		}
		rows = append(rows, row{
			Key:   fmt.Sprintf("%d@0", sg.Base),
			Cells: []string{"frames", fmt.Sprintf("%020d.log", sg.Base), humanBytes(sg.Bytes), fmt.Sprintf("[%d, %d)", sg.Base, sg.Next), fmt.Sprintf("%s, %s batches", state, humanCount(sg.Batches))},
		})
	}
	s.table.SetRows(rows)
	if !s.moved {
		// Start on the first place worth a look: a corrupt range or a
		// truncation when there is one.
		s.table.cursor, s.table.offset = 0, 0
	}
	s.SetSize(s.w, s.h)
}

// topLines is the height of everything above the jump table.
func (s *recoveryScreen) topLines() int {
	n := 3 // live line, blank, table title
	if s.report != nil {
		n += len(s.report.Lines())
	} else {
		n++
	}
	return n
}

func (s *recoveryScreen) View() string {
	st := s.c.Styles
	if !s.loaded {
		return st.Muted.Render(fmt.Sprintf("  loading the recovery report of %s p%d…", s.topic, s.part))
	}
	var b strings.Builder
	switch {
	case !s.ok:
		b.WriteString(st.Muted.Render("  recovery reports: " + ErrNotAvailable.Error()))
	case s.report == nil:
		b.WriteString(st.Muted.Render(fmt.Sprintf("  no recovery report for %s p%d (created after the last open)", s.topic, s.part)))
	default:
		b.WriteString(styleReportLines(s.c, reportLines(s.c, *s.report)))
	}
	b.WriteString("\n" + s.liveLine() + "\n\n")
	b.WriteString(st.PanelTitle.Render("  Jump into the frames") + "\n")
	return s.table.under(b.String())
}

// liveLine is the partition's state now, which reads may have changed
// since the open (damage found on read, a hidden tail covered by commits).
func (s *recoveryScreen) liveLine() string {
	st := s.c.Styles
	switch {
	case s.infoEr != nil:
		return st.StatusError.Render("  now: " + s.infoEr.Error())
	case s.info == nil:
		return st.Muted.Render("  now: loading…")
	}
	pi := s.info
	parts := []string{fmt.Sprintf("now: hwm %s, log end %s", humanCount(pi.HWM), humanCount(pi.LEO))}
	if pi.HiddenTail > 0 {
		act := "expose: " + ErrNotAvailable.Error()
		if _, ok := s.c.Src.(HiddenTailExposer); ok {
			act = s.c.Keys.Expose.Help().Key + ": expose it"
		}
		parts = append(parts, fmt.Sprintf("hidden tail %s [%d, %d) (%s)", humanCount(pi.HiddenTail), pi.HWM, pi.LEO, act))
	} else {
		parts = append(parts, "no hidden tail")
	}
	line := "  " + strings.Join(parts, " · ")
	if pi.Degraded {
		var inRanges int64
		if s.report != nil {
			inRanges = s.report.CorruptRecords()
		}
		return st.Text.Render(line+" · ") + st.BadgeDegraded.Render(fmt.Sprintf("DEGRADED: %s offsets in corrupt ranges, %s records skipped by reads so far",
			humanCount(inRanges), humanCount(pi.SkippedRecords)))
	}
	return st.Text.Render(line+" · ") + st.Good.Render("not degraded")
}

func (s *recoveryScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Enter, k.Expose, k.CrashLab, k.Back}
}

func (s *recoveryScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.Enter, k.Expose, k.CrashLab, k.Refresh, k.Back}}
}

// addRecoveryCommands registers the ":" commands of the recovery inspector
// and the crash lab.
func addRecoveryCommands(cmds map[string]command) {
	// partArgs reads "[TOPIC [PARTITION]]".
	partArgs := func(name string, args []string) (string, int, tea.Cmd) {
		if len(args) > 2 {
			return "", 0, errStatus(fmt.Errorf("%w: usage :%s [TOPIC [PARTITION]]", ErrBadInput, name))
		}
		topic, p := "", 0
		if len(args) > 0 {
			topic = args[0]
			if err := checkTopicArg(topic); err != nil {
				return "", 0, err
			}
		}
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 0 {
				return "", 0, errStatus(fmt.Errorf("%w: partition %q is not a non-negative number", ErrBadInput, args[1]))
			}
			p = n
		}
		return topic, p, nil
	}
	cmds["recovery"] = command{usage: "recovery [TOPIC [PARTITION]]  recovery reports of the last open", run: func(m *Model, args []string) tea.Cmd {
		topic, p, bad := partArgs("recovery", args)
		if bad != nil {
			return bad
		}
		if topic == "" {
			return push(needsLocal(m.c, "recovery", func() Screen { return newRecoveryListScreen(m.c) }))
		}
		return func() tea.Msg {
			return gotoTopicMsg{topic: topic, then: []Screen{needsLocal(m.c, "recovery", func() Screen { return newRecoveryScreen(m.c, topic, p) })}}
		}
	}}
	cmds["crashlab"] = command{usage: "crashlab [TOPIC [PARTITION]]  damage a scratch copy of a partition and watch recovery", run: func(m *Model, args []string) tea.Cmd {
		topic, p, bad := partArgs("crashlab", args)
		if bad != nil {
			return bad
		}
		if topic == "" {
			return push(needsLocal(m.c, "crash lab", func() Screen { return newCrashLabScreen(m.c, "", 0) }))
		}
		return func() tea.Msg {
			return gotoTopicMsg{topic: topic, then: []Screen{needsLocal(m.c, "crash lab", func() Screen { return newCrashLabScreen(m.c, topic, p) })}}
		}
	}}
}
