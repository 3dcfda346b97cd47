package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/units"
)

type createdMsg struct {
	to
	name string
	err  error
}

// topicCreatedMsg tells the topics screen to reload.
type topicCreatedMsg struct {
	to
	name string
}

// createTopicScreen is the form that creates a topic.
type createTopicScreen struct {
	c        *Common
	id       int
	topicsID int
	form     *form
	sending  bool
	errText  string
}

func newCreateTopicScreen(c *Common, topicsID int) *createTopicScreen {
	d := engine.DefaultTopicConfig()
	s := &createTopicScreen{c: c, id: c.newID(), topicsID: topicsID}
	s.form = &form{c: c, fields: []*field{
		{label: "name", line: newLine("orders", ""), hint: "a-z A-Z 0-9 . _ -"},
		{label: "partitions", line: newLine("", strconv.Itoa(d.Partitions))},
		{label: "cleanup", line: newLine("", string(d.Cleanup)), hint: "delete or compact"},
		{label: "max age", line: newLine("forever", ""), hint: "e.g. 1h, 7d; empty keeps forever"},
		{label: "max bytes", line: newLine("unlimited", ""), hint: "e.g. 1GiB; empty: no size limit"},
		{label: "segment", line: newLine("", humanBytes(d.SegmentMaxBytes)), hint: "segment size, at least 1 MiB"},
		{label: "codec", line: newLine("", d.Codec), hint: "zstd or none"},
		{label: "sync mode", line: newLine("", string(d.SyncMode)), hint: "every-write (ack after fsync) or interval (ack after write, fsync a few ms later)"},
	}}
	return s
}

func (s *createTopicScreen) ID() int          { return s.id }
func (s *createTopicScreen) Crumb() string    { return "new topic" }
func (s *createTopicScreen) Init() tea.Cmd    { return s.form.init() }
func (s *createTopicScreen) Capturing() bool  { return true }
func (s *createTopicScreen) SetSize(w, h int) { s.form.setWidth(w) }

// parseAge reads "90s", "1h", "7d" (internal/units); "" is 0 (no limit).
func parseAge(v string) (time.Duration, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	d, err := units.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%w: max age: %w", ErrBadInput, err)
	}
	return d, nil
}

// config reads the form into a name and a topic config.
func (s *createTopicScreen) config() (string, engine.TopicConfig, error) {
	f := s.form.fields
	cfg := engine.DefaultTopicConfig()
	name := strings.TrimSpace(f[0].value())
	if err := engine.ValidateTopicName(name); err != nil {
		return "", cfg, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(f[1].value()))
	if err != nil || n < 1 {
		return "", cfg, fmt.Errorf("%w: partitions %q (want a number ≥ 1)", ErrBadInput, f[1].value())
	}
	cfg.Partitions = n
	if cfg.Cleanup, err = parseCleanup(f[2].value()); err != nil {
		return "", cfg, err
	}
	if cfg.RetentionMaxAge, err = parseAge(f[3].value()); err != nil {
		return "", cfg, err
	}
	if v := strings.TrimSpace(f[4].value()); v != "" {
		if cfg.RetentionMaxBytes, err = parseBytes(v); err != nil {
			return "", cfg, err
		}
	}
	if cfg.SegmentMaxBytes, err = parseBytes(f[5].value()); err != nil {
		return "", cfg, err
	}
	cfg.Codec = strings.TrimSpace(f[6].value())
	if cfg.SyncMode, err = parseSyncMode(f[7].value()); err != nil {
		return "", cfg, err
	}
	return name, cfg, nil
}

func (s *createTopicScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case createdMsg:
		s.sending = false
		if msg.err != nil {
			s.errText = msg.err.Error()
			return errStatus(fmt.Errorf("create %s: %w", msg.name, msg.err))
		}
		// In this order: closing the form clears the status line, which
		// then says what was created.
		topicsID, name := s.topicsID, msg.name
		return tea.Sequence(pop, func() tea.Msg { return topicCreatedMsg{to: to{topicsID}, name: name} })
	case tea.KeyMsg:
		if s.sending {
			return nil
		}
		cmd, submit := s.form.update(msg)
		if !submit {
			return cmd
		}
		name, cfg, err := s.config()
		if err != nil {
			s.errText = err.Error()
			return errStatus(err)
		}
		s.sending, s.errText = true, ""
		src, id := s.c.Src, s.id
		return func() tea.Msg { return createdMsg{to: to{id}, name: name, err: src.CreateTopic(name, cfg)} }
	}
	cmd, _ := s.form.update(msg)
	return cmd
}

func (s *createTopicScreen) View() string {
	return formScreenView(s.c, s.c.Styles.PanelTitle.Render("  New topic")+"\n\n", s.form, s.errText, "  enter creates the topic; esc cancels")
}

func (s *createTopicScreen) ShortHelp() []key.Binding { return formKeys(s.c.Keys) }

func (s *createTopicScreen) FullHelp() [][]key.Binding { return [][]key.Binding{formKeys(s.c.Keys)} }

// formScreenView is a form screen: head, the form, then the last error or
// the hint.
func formScreenView(c *Common, head string, f *form, errText, hint string) string {
	st := c.Styles
	out := head + f.view() + "\n"
	if errText != "" {
		out += wrapIndented(st.StatusError, "✗ "+errText, c.Width)
	} else {
		out += wrapIndented(st.FormHint, hint, c.Width)
	}
	return scrollTo(out, strings.Count(head, "\n")+f.focusAt, c.Height)
}

// wrapIndented renders text in style, indented by two cells and wrapped at
// word boundaries to width (wrapWords): a long error stays whole on a
// narrow screen.
func wrapIndented(style lipgloss.Style, text string, width int) string {
	lines := wrapWords(strings.Fields(text), max(width, 20), "  ")
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return strings.Join(lines, "\n")
}

// formKeys are the keys of a form screen.
func formKeys(k KeyMap) []key.Binding {
	return []key.Binding{k.NextField, k.PrevField, k.Submit, k.Back}
}
