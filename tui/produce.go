package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// produceTimeout bounds one produce from the form.
const produceTimeout = 30 * time.Second

type ackMsg struct {
	to
	acks []engine.Ack
	err  error
}

// produceScreen is the produce form: key, value (multi-line), headers and
// partition; it shows the ack of each record sent.
type produceScreen struct {
	c       *Common
	id      int
	topic   string
	form    *form
	sending bool
	result  string
	failed  bool
	sent    int
}

func newProduceScreen(c *Common, topic string, p int) *produceScreen {
	part := ""
	if p >= 0 {
		part = strconv.Itoa(p)
	}
	s := &produceScreen{c: c, id: c.newID(), topic: topic}
	s.form = &form{c: c, fields: []*field{
		{label: "key", line: newLine("(none)", ""), hint: "empty: no key"},
		{label: "value", area: newArea(`{"hello": "pulse"}`), hint: "multi-line; tab moves on"},
		{label: "headers", line: newLine("k=v, k2=v2", ""), hint: "comma-separated k=v"},
		{label: "partition", line: newLine("auto", part), hint: "empty: by key hash, or round-robin"},
	}}
	return s
}

func (s *produceScreen) ID() int          { return s.id }
func (s *produceScreen) Crumb() string    { return s.topic + " / produce" }
func (s *produceScreen) Init() tea.Cmd    { return s.form.init() }
func (s *produceScreen) Capturing() bool  { return true }
func (s *produceScreen) SetSize(w, h int) { s.form.setWidth(w); s.form.setAreaHeight(h - 10) }

// parseHeaders reads "k=v, k2=v2".
func parseHeaders(s string) ([]engine.Header, error) {
	var hs []engine.Header
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%w: header %q (want k=v)", ErrBadInput, part)
		}
		hs = append(hs, engine.Header{Key: strings.TrimSpace(k), Value: []byte(strings.TrimSpace(v))})
	}
	return hs, nil
}

func (s *produceScreen) submit() tea.Cmd {
	f := s.form.fields
	// A refused input is the form's result too, in place of the last send's.
	refuse := func(err error) tea.Cmd {
		s.result, s.failed = "✗ "+err.Error(), true
		return errStatus(err)
	}
	part := -1
	if v := strings.TrimSpace(f[3].value()); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return refuse(fmt.Errorf("%w: partition %q is not a non-negative number", ErrBadInput, v))
		}
		part = n
	}
	hs, err := parseHeaders(f[2].value())
	if err != nil {
		return refuse(err)
	}
	rec := engine.Record{Value: []byte(f[1].value()), Headers: hs}
	if k := f[0].value(); k != "" {
		rec.Key = []byte(k)
	}
	s.sending = true
	src, id, topic := s.c.Src, s.id, s.topic
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), produceTimeout)
		defer cancel()
		acks, err := src.Produce(ctx, topic, part, []engine.Record{rec})
		return ackMsg{to: to{id}, acks: acks, err: err}
	}
}

func (s *produceScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ackMsg:
		s.sending = false
		if msg.err != nil {
			s.result, s.failed = "✗ "+msg.err.Error(), true
			return errStatus(fmt.Errorf("produce to %s: %w", s.topic, msg.err))
		}
		s.sent += len(msg.acks)
		var parts []string
		for _, a := range msg.acks {
			parts = append(parts, fmt.Sprintf("partition %d, offset %s, at %s", a.Partition, humanCount(a.Offset), s.c.Opts.FormatTime(a.Timestamp)))
		}
		s.result, s.failed = "✓ acked: "+strings.Join(parts, "; "), false
		return status("acked %d record(s) on %s", len(msg.acks), s.topic)
	case tea.KeyMsg:
		if s.sending {
			return nil
		}
		cmd, submit := s.form.update(msg)
		if submit {
			return s.submit()
		}
		return cmd
	}
	cmd, _ := s.form.update(msg)
	return cmd
}

func (s *produceScreen) View() string {
	st := s.c.Styles
	head := st.PanelTitle.Render("  Produce to "+s.topic) + "\n\n"
	out := head + s.form.view() + "\n"
	switch {
	case s.sending:
		out += st.Muted.Render("  sending…")
	case s.result != "" && s.failed:
		out += wrapIndented(st.StatusError, s.result, s.c.Width)
	case s.result != "":
		out += wrapIndented(st.Good, s.result, s.c.Width)
	default:
		out += wrapIndented(st.FormHint, s.c.Keys.Submit.Help().Key+" or enter on a one-line field sends; esc goes back", s.c.Width)
	}
	return scrollTo(out, strings.Count(head, "\n")+s.form.focusAt, s.c.Height)
}

func (s *produceScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.NextField, k.PrevField, k.Submit, k.Back}
}

func (s *produceScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.NextField, k.PrevField, k.Submit, k.Back}}
}
