// Package tui is Pulse's terminal UI: a bubbletea program with one model per
// screen (topics, partitions, segments, tail, record detail, produce),
// sharing one Common (styles, keys, size, the engine) and one KeyMap.
//
// The UI never touches the disk from Update or View: every engine call runs
// in a tea.Cmd and its result comes back as a message addressed to the
// screen that asked. The tail screen follows a partition with the engine's
// long-poll (NotifyC), one re-arming command at a time, and keeps a bounded
// window of records in memory.
package tui

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/themes"
)

// chrome is the number of lines around the body: header, breadcrumbs,
// status line and help line (an error may add status lines, see
// bodyHeight); bodyTop is the first line of the body.
const (
	chrome  = 4
	bodyTop = 2
)

type promptKind int

const (
	promptNone promptKind = iota
	promptCommand
	promptFilter
	promptAsk // a screen's question (jump to offset, ...)
)

// askMsg asks the user for one line of text; on enter the app runs
// onSubmit with it.
type askMsg struct {
	label    string
	initial  string
	onSubmit func(string) tea.Cmd
}

func ask(label, initial string, onSubmit func(string) tea.Cmd) tea.Cmd {
	return func() tea.Msg { return askMsg{label: label, initial: initial, onSubmit: onSubmit} }
}

type refreshTickMsg struct{}

// awayMsg is the source's Reachability at a refresh.
type awayMsg struct{ err error }

// checkAway asks a source that can be away whether it is.
func (m *Model) checkAway() tea.Cmd {
	r, ok := m.c.Src.(Reachability)
	if !ok {
		return nil
	}
	return func() tea.Msg { return awayMsg{err: r.Unreachable()} }
}

// command is one ":" command.
type command struct {
	usage string
	run   func(m *Model, args []string) tea.Cmd
}

// Model is the root bubbletea model: header, breadcrumbs, a stack of
// screens, the prompt line, a confirmation dialog and the help overlay.
type Model struct {
	c     *Common
	stack []Screen
	help  help.Model

	prompt      promptKind
	input       textinput.Model
	onAsk       func(string) tea.Cmd
	filterSaved string // filter before "/" was pressed, restored by esc

	confirming *confirmMsg
	showHelp   bool
	helpOffset int // first line of the help on screen
	status     string
	statusErr  bool

	commands map[string]command

	width, height int
	quitting      bool
}

// New builds the UI on opts.Source.
func New(opts Options) (*Model, error) {
	if opts.Source == nil {
		return nil, ErrNoSource
	}
	opts = opts.withDefaults()
	st, err := themes.New(themes.Options{Name: opts.Theme, NoColor: opts.NoColor})
	if err != nil {
		return nil, err
	}
	c := &Common{Styles: &st, Keys: DefaultKeyMap(), Opts: opts, Src: opts.Source}
	m := &Model{c: c, help: help.New(), input: textinput.New()}
	m.input.Prompt = ""
	m.help.Styles = st.Help
	m.commands = defaultCommands()
	addRecoveryCommands(m.commands)
	addGroupCommands(m.commands)
	addPlacementCommand(m.commands)
	m.stack = []Screen{newTopicsScreen(c)}
	return m, nil
}

// Common returns the shared context (tests and embedding programs).
func (m *Model) Common() *Common { return m.c }

// Top returns the screen on top of the stack.
func (m *Model) Top() Screen { return m.stack[len(m.stack)-1] }

// Breadcrumbs returns the crumbs of the stack, e.g. "Topics / orders / p0 / segments".
func (m *Model) Breadcrumbs() string { return strings.Join(m.crumbList(), " / ") }

// crumbList is each screen's crumb without the leading elements its
// parent's crumb already shows: a screen's crumb names its whole place
// ("orders / p0 / segments"), so it reads right whatever screen it was
// opened from.
func (m *Model) crumbList() []string {
	parts := make([]string, len(m.stack))
	var prev []string
	for i, s := range m.stack {
		full := strings.Split(s.Crumb(), " / ")
		common := 0
		for common < len(prev) && common < len(full)-1 && prev[common] == full[common] {
			common++
		}
		parts[i] = strings.Join(full[common:], " / ")
		prev = full
	}
	return parts
}

func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.Top().Init(), m.tick()}
	var start []tea.Cmd // in order: the problems' status outlives the first screen's opening
	if m.c.Opts.StartTopic != "" {
		start = append(start, func() tea.Msg { return gotoTopicMsg{topic: m.c.Opts.StartTopic} })
	}
	if p, ok := m.c.Opts.Source.(OpenProblems); ok {
		if probs := p.Problems(); len(probs) > 0 {
			start = append(start, errStatus(fmt.Errorf("opening the data dir: %s", strings.Join(probs, "; "))))
		}
	}
	if len(start) > 0 {
		cmds = append(cmds, tea.Sequence(start...))
	}
	return tea.Batch(cmds...)
}

func (m *Model) tick() tea.Cmd {
	if m.c.Opts.Refresh < 0 {
		return nil
	}
	return tea.Tick(m.c.Opts.Refresh, func(time.Time) tea.Msg { return refreshTickMsg{} })
}

// Update handles msg, then lays the screens out in the body that is left.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.update(msg)
	m.layout()
	return m, cmd
}

// bodyHeight is the number of lines the body has under status lines of
// n lines: the terminal less the chrome and the status lines past the
// first, one at least.
func (m *Model) bodyHeight(n int) int {
	return max(m.height-chrome-(n-1), 1)
}

// layout gives every screen the size of the body, when it changed: a
// resize, or an error that takes more status lines (or gives them back)
// after any message, a push or pop, the prompt opening or closing. It is
// the one place screens learn their size from, so a screen lays itself out
// in the lines the status leaves it, and none of its rows is hidden under
// the status.
func (m *Model) layout() {
	if m.width == 0 {
		return
	}
	w, h := m.width, m.bodyHeight(len(m.statusLines()))
	if w == m.c.Width && h == m.c.Height {
		return
	}
	m.c.Width, m.c.Height = w, h
	for _, s := range m.stack {
		s.SetSize(w, h)
	}
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.input.Width = max(msg.Width-4, 10)
		return m, nil
	case refreshTickMsg:
		var cmds []tea.Cmd
		if r, ok := m.Top().(refresher); ok {
			cmds = append(cmds, r.Refresh())
		}
		if len(m.stack) > 1 {
			if r, ok := m.stack[0].(refresher); ok {
				cmds = append(cmds, r.Refresh())
			}
		}
		return m, tea.Batch(append(cmds, m.checkAway(), m.tick())...)
	case awayMsg:
		if (msg.err == nil) != (m.c.Away == nil) || (msg.err != nil && msg.err.Error() != m.c.Away.Error()) {
			m.c.Away = msg.err
			// A live tail gives rows to the error's lines, or takes them back.
			for _, s := range m.stack {
				s.SetSize(m.c.Width, m.c.Height)
			}
		}
		return m, nil
	case pushMsg:
		cmds := make([]tea.Cmd, len(msg.s))
		for i, s := range msg.s {
			cmds[i] = m.push(s)
		}
		return m, tea.Batch(cmds...)
	case popMsg:
		m.pop()
		return m, nil
	case popRefreshMsg:
		m.pop()
		if r, ok := m.Top().(refresher); ok {
			return m, r.Refresh()
		}
		return m, nil
	case selectTopicMsg:
		if ts, ok := m.stack[0].(*topicsScreen); ok {
			ts.selectTopic(msg.name)
		}
		return m, nil
	case gotoTopicMsg:
		for len(m.stack) > 1 {
			m.pop()
		}
		if ts, ok := m.stack[0].(*topicsScreen); ok {
			ts.selectTopic(msg.topic)
		}
		// Only what was asked for goes on the stack, so that esc never
		// lands on a screen the user did not open.
		if len(msg.then) == 0 {
			return m, m.push(newPartitionsScreen(m.c, msg.topic))
		}
		var cmds []tea.Cmd
		for _, s := range msg.then {
			cmds = append(cmds, m.push(s))
		}
		return m, tea.Batch(cmds...)
	case statusMsg:
		m.status, m.statusErr = msg.text, msg.err
		return m, nil
	case confirmMsg:
		m.confirming = &msg
		return m, nil
	case askMsg:
		m.openPrompt(promptAsk, msg.initial)
		m.input.Placeholder = ""
		m.input.Prompt = msg.label + " "
		m.onAsk = msg.onSubmit
		return m, textinput.Blink
	case themeMsg:
		*m.c.Styles = msg.styles
		m.help.Styles = msg.styles.Help
		// Screens that keep rendered text (the crash lab's result, the
		// record detail) render it again on SetSize.
		for _, s := range m.stack {
			s.SetSize(m.c.Width, m.c.Height)
		}
		return m, status("theme %s", themeLabel(&msg.styles))
	case tea.KeyMsg:
		// Runes that arrive together (typed fast, pasted without bracketed
		// paste) are text: as a paste, "delete" or "end" goes into a field
		// instead of matching the key of that name.
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 {
			msg.Paste = true
		}
		return m, m.key(msg)
	case tea.MouseMsg:
		if m.confirming != nil || m.showHelp {
			return m, nil
		}
		// A click outside the body (on the status or help line) means
		// nothing; the wheel scrolls wherever the pointer is.
		if !tea.MouseEvent(msg).IsWheel() && (msg.Y < bodyTop || msg.Y >= bodyTop+m.c.Height) {
			return m, nil
		}
		return m, m.Top().Update(msg)
	}
	if t, ok := msg.(targeted); ok {
		for _, s := range m.stack {
			if s.ID() == t.target() {
				return m, s.Update(msg)
			}
		}
		return m, nil // the screen is gone: drop its result
	}
	// Anything else (cursor blinks, ...) goes to the prompt and the top screen.
	var cmds []tea.Cmd
	if m.prompt != promptNone {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		cmds = append(cmds, cmd)
	}
	cmds = append(cmds, m.Top().Update(msg))
	return m, tea.Batch(cmds...)
}

func (m *Model) push(s Screen) tea.Cmd {
	s.SetSize(m.c.Width, m.c.Height)
	m.stack = append(m.stack, s)
	m.status, m.statusErr = "", false
	return s.Init()
}

func (m *Model) pop() {
	if len(m.stack) == 1 {
		return
	}
	top := m.Top()
	if c, ok := top.(closer); ok {
		c.Close()
	}
	m.stack = m.stack[:len(m.stack)-1]
	m.status, m.statusErr = "", false
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	m.Close()
	return tea.Quit
}

// Close stops the background work of every screen (the tail's long-poll).
// Call it after the program returns; quitting from the UI does it too.
func (m *Model) Close() {
	for _, s := range m.stack {
		if c, ok := s.(closer); ok {
			c.Close()
		}
	}
}

func (m *Model) openPrompt(kind promptKind, value string) {
	m.prompt = kind
	m.input.SetValue(value)
	m.input.CursorEnd()
	m.input.Focus()
}

func (m *Model) closePrompt() {
	m.prompt = promptNone
	m.input.Blur()
	m.input.Prompt = ""
	m.onAsk = nil
}

func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	k := m.c.Keys
	if key.Matches(msg, k.ForceQuit) {
		return m.quit()
	}
	if m.confirming != nil {
		switch {
		case key.Matches(msg, k.Confirm):
			yes := m.confirming.yes
			m.confirming = nil
			return yes
		case key.Matches(msg, k.Cancel):
			m.confirming = nil
			return status("cancelled")
		}
		return nil
	}
	if m.prompt != promptNone {
		return m.promptKey(msg)
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help, k.Back, k.Quit):
			m.showHelp = false
		case key.Matches(msg, k.Up):
			m.scrollHelp(-1)
		case key.Matches(msg, k.Down):
			m.scrollHelp(1)
		case key.Matches(msg, k.PageUp):
			m.scrollHelp(-m.c.Height)
		case key.Matches(msg, k.PageDown):
			m.scrollHelp(m.c.Height)
		case key.Matches(msg, k.Top):
			m.helpOffset = 0
		case key.Matches(msg, k.Bottom):
			m.scrollHelp(1 << 30)
		}
		return nil
	}
	if c, ok := m.Top().(capturer); ok && c.Capturing() {
		if key.Matches(msg, k.Back) {
			m.pop()
			return nil
		}
		return m.Top().Update(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.openHelp()
		return nil
	case key.Matches(msg, k.Command):
		m.openPrompt(promptCommand, "")
		m.input.Prompt = ":"
		m.input.Placeholder = "topic NAME · tail NAME [P] · produce NAME · recovery · crashlab · theme NAME · q"
		return textinput.Blink
	case key.Matches(msg, k.Filter):
		f, ok := m.Top().(filterable)
		if !ok {
			return status("this screen has no filter")
		}
		m.filterSaved = f.Filter()
		m.openPrompt(promptFilter, f.Filter())
		m.input.Prompt = "/"
		m.input.Placeholder = ""
		return textinput.Blink
	case key.Matches(msg, k.Refresh):
		if r, ok := m.Top().(interface{ RefreshAll() tea.Cmd }); ok {
			return r.RefreshAll()
		}
		if r, ok := m.Top().(refresher); ok {
			return r.Refresh()
		}
		return nil
	case key.Matches(msg, k.Back):
		if f, ok := m.Top().(filterable); ok && f.Filter() != "" {
			f.SetFilter("")
			return nil
		}
		m.pop()
		return nil
	}
	return m.Top().Update(msg)
}

func (m *Model) promptKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyEsc:
		if m.prompt == promptFilter {
			if f, ok := m.Top().(filterable); ok {
				f.SetFilter(m.filterSaved)
			}
		}
		m.closePrompt()
		return nil
	case tea.KeyEnter:
		v := m.input.Value()
		kind, onAsk := m.prompt, m.onAsk
		m.closePrompt()
		switch kind {
		case promptFilter:
			if fs, ok := m.Top().(filterSubmitter); ok {
				return fs.SubmitFilter(v)
			}
		case promptCommand:
			return m.runCommand(v)
		case promptAsk:
			if onAsk != nil {
				return onAsk(v)
			}
		}
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.prompt == promptFilter {
		if f, ok := m.Top().(filterable); ok {
			f.SetFilter(m.input.Value())
		}
	}
	return cmd
}

// View draws header, breadcrumbs, body, status and help, exactly the
// terminal's size.
func (m *Model) View() string {
	if m.quitting || m.width == 0 {
		return ""
	}
	st := m.c.Styles
	body := m.Top().View()
	if m.showHelp {
		lines := m.helpLines()
		m.helpOffset = min(m.helpOffset, max(len(lines)-m.c.Height, 0))
		body = strings.Join(lines[m.helpOffset:], "\n")
	}
	status := m.statusLines()
	bodyH := m.bodyHeight(len(status))
	body = fit(body, m.width, bodyH)
	if m.confirming != nil {
		// The box keeps its border: the question wraps, and a word too long
		// for the terminal (a topic name) is cut.
		inner := max(m.width-st.Dialog.GetHorizontalFrameSize(), 10)
		q := wrapWords(strings.Fields(m.confirming.question), inner, "")
		for i := range q {
			q[i] = truncate(q[i], inner)
		}
		box := st.Dialog.Render(st.DialogTitle.Render(strings.Join(q, "\n")) + "\n\n" +
			st.Muted.Render("y: yes   n/esc: no"))
		body = fit(lipgloss.Place(m.width, bodyH, lipgloss.Center, lipgloss.Center, box), m.width, bodyH)
	}
	lines := []string{
		fit(m.header(), m.width, 1),
		fit(m.crumbs(), m.width, 1),
		body,
		fit(strings.Join(status, "\n"), m.width, len(status)),
		fit(m.footer(), m.width, 1),
	}
	return strings.Join(lines, "\n")
}

// footer is the screen's most-used keys: those that fit whole, then " …"
// when some are left out (the help model itself would draw a key past the
// edge when the ellipsis does not fit).
func (m *Model) footer() string {
	h := m.help
	h.Width = 0
	var keys []key.Binding
	for _, k := range m.shortHelp() {
		if k.Enabled() {
			keys = append(keys, k)
		}
	}
	for n := len(keys); n > 0; n-- {
		v := h.ShortHelpView(keys[:n])
		if n < len(keys) {
			v += " " + h.Styles.Ellipsis.Render(h.Ellipsis)
		}
		if lipgloss.Width(v) <= m.width {
			return v
		}
	}
	return ""
}

func (m *Model) header() string {
	st := m.c.Styles
	o := m.c.Opts
	field := func(label, value string) string {
		return "  " + st.HeaderLabel.Render(label+" ") + st.HeaderValue.Render(value)
	}
	head := st.HeaderTitle.Render("pulse") + field("data", o.DataDirName)
	if m.c.Away != nil {
		// "kafka cluster unreachable" (or "kafka broker unreachable"):
		// the error's own words; the tail shows the rest of it.
		what, _, _ := strings.Cut(m.c.Away.Error(), ": ")
		head += "  " + st.Bad.Render("✗ "+what)
	}
	// Each further field is whole, or in the shorter form it has (":PORT"
	// for a loopback address), or not there at all, and so are those
	// after it: cut, "127.0.0.1:7" would read as port 7.
	add := func(label string, values ...string) bool {
		for _, v := range values {
			if f := field(label, v); lipgloss.Width(head+f) <= m.width {
				head += f
				return true
			}
		}
		return false
	}
	ws := "off"
	if o.Listen != "" {
		ws = o.Listen
	}
	if !add("ws", addrForms(ws)...) || !add("theme", themeLabel(st)) {
		return head
	}
	// The Kafka address comes last.
	switch {
	case o.KafkaListen == "" && o.KafkaOff != "":
		add("kafka", "off ("+o.KafkaOff+")", "off")
	case o.KafkaListen != "":
		add("kafka", addrForms(o.KafkaListen)...)
	}
	return head
}

// addrForms is a listener's address for the header: whole, then ":PORT"
// when it is on loopback.
func addrForms(addr string) []string {
	forms := []string{addr}
	if host, port, err := net.SplitHostPort(addr); err == nil && (host == "127.0.0.1" || host == "localhost" || host == "::1") {
		forms = append(forms, ":"+port)
	}
	return forms
}

func themeLabel(st *themes.Styles) string {
	if st.NoColor {
		return st.Name + " (no colour)"
	}
	return st.Name
}

func (m *Model) crumbs() string {
	st := m.c.Styles
	parts := strings.Split(m.Breadcrumbs(), " / ")
	// Too long for the terminal: the middle goes, the first crumb and the
	// last ones stay.
	for len(parts) > 3 && lipgloss.Width(" "+strings.Join(parts, " / ")) > m.width {
		if parts[1] == "…" {
			parts = append(parts[:1:1], append([]string{"…"}, parts[3:]...)...)
		} else {
			parts = append(parts[:1:1], append([]string{"…"}, parts[2:]...)...)
		}
	}
	for i := range parts {
		if i == len(parts)-1 {
			parts[i] = st.CrumbActive.Render(parts[i])
		} else {
			parts[i] = st.Crumb.Render(parts[i])
		}
	}
	return " " + strings.Join(parts, st.CrumbSep.Render(" / "))
}

// maxStatusErrorLines is how many lines an error on the status line may
// take; the lines past the first are the body's (see layout).
const maxStatusErrorLines = 3

// statusLines is the status line, or an error too wide for one line
// wrapped at word boundaries into up to maxStatusErrorLines lines (a word
// wider than the screen is cut, and so is the last line of a longer error,
// with …), so that a long error is read whole, not cut at the edge.
func (m *Model) statusLines() []string {
	line := m.statusLine()
	if !m.statusErr || m.status == "" || m.prompt != promptNone || lipgloss.Width(line) <= m.width || m.width < 20 {
		return []string{line}
	}
	st := m.c.Styles
	words := strings.Fields("✗ " + m.status)
	lines := wrapWords(words, m.width, "")
	// The body keeps one line at least.
	if n := max(min(maxStatusErrorLines, m.height-chrome), 1); len(lines) > n {
		lines = lines[:n]
		lines[n-1] = truncate(lines[n-1]+" …", m.width)
	}
	for i := range lines {
		lines[i] = st.StatusError.Render(truncate(lines[i], m.width))
	}
	return lines
}

func (m *Model) statusLine() string {
	st := m.c.Styles
	if m.prompt != promptNone {
		themeLine(&m.input, st)
		return m.input.View()
	}
	if f, ok := m.Top().(filterable); ok && f.Filter() != "" && m.status == "" {
		return st.Prompt.Render("/") + st.Text.Render(f.Filter()) + st.Muted.Render("  (esc clears)")
	}
	if m.showHelp && m.status == "" {
		n := len(m.helpLines())
		last := min(m.helpOffset+m.c.Height, n)
		more := "end"
		if last < n {
			more = "↓ more"
		}
		return st.StatusBar.Render(fmt.Sprintf("help lines %d–%d of %d (%s)", m.helpOffset+1, last, n, more))
	}
	if m.statusErr && m.status != "" {
		return st.StatusError.Render("✗ " + m.status)
	}
	return st.StatusBar.Render(m.status)
}

func (m *Model) shortHelp() []key.Binding {
	k := m.c.Keys
	switch {
	case m.confirming != nil:
		return []key.Binding{k.Confirm, k.Cancel}
	case m.prompt != promptNone:
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "ok")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	case m.showHelp:
		return []key.Binding{
			key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓ pgup/pgdn g/G", "scroll")),
			k.Back,
		}
	}
	if c, ok := m.Top().(capturer); ok && c.Capturing() {
		// ? and q type into the field there: only ctrl+c quits.
		return append(m.Top().ShortHelp(), k.ForceQuit)
	}
	return append(m.Top().ShortHelp(), k.Help, k.Quit)
}

// openHelp shows the help from its first line. The status line is the
// help's (which lines are shown): the message of the screen behind goes,
// as it does when another screen opens.
func (m *Model) openHelp() {
	m.showHelp, m.helpOffset = true, 0
	m.status, m.statusErr = "", false
}

// helpLines is the help overlay, one element per line.
func (m *Model) helpLines() []string {
	return strings.Split(strings.TrimRight(m.fullHelp(), "\n"), "\n")
}

// scrollHelp moves the help by d lines, within its length.
func (m *Model) scrollHelp(d int) {
	m.helpOffset = min(max(m.helpOffset+d, 0), max(len(m.helpLines())-m.c.Height, 0))
}

func (m *Model) fullHelp() string {
	st := m.c.Styles
	k := m.c.Keys
	global := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Enter, k.Back, k.Filter, k.Command, k.Refresh, k.Help, k.Quit},
	}
	var b strings.Builder
	b.WriteString(st.HelpSection.Render(m.Top().Crumb()) + "\n")
	b.WriteString(m.help.FullHelpView(m.Top().FullHelp()) + "\n\n")
	b.WriteString(st.HelpSection.Render("Everywhere") + "\n")
	b.WriteString(m.help.FullHelpView(global) + "\n\n")
	b.WriteString(st.HelpSection.Render("Commands") + "\n")
	// A usage too long for the terminal wraps, its further lines indented;
	// the synopsis before the two spaces stays in one piece.
	for _, name := range commandNames(m.commands) {
		synopsis, desc, _ := strings.Cut(m.commands[name].usage, "  ")
		words := append([]string{":" + synopsis + " "}, strings.Fields(desc)...)
		for i, l := range wrapWords(words, max(m.width, 20), "    ") {
			if i == 0 {
				l = "  " + strings.TrimPrefix(l, "    ")
			}
			b.WriteString(st.Help.FullKey.Render(l) + "\n")
		}
	}
	return b.String()
}

// fit makes s exactly h lines of at most w cells.
func fit(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	trim := lipgloss.NewStyle().MaxWidth(w)
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			lines[i] = trim.Render(l)
		}
	}
	return strings.Join(lines, "\n")
}
