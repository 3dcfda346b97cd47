package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/themes"
)

// osc52Copy puts text on the terminal's clipboard with an OSC 52 sequence.
func osc52Copy(text string) error {
	termenv.NewOutput(os.Stdout).Copy(text)
	return nil
}

type copiedMsg struct {
	to
	n   int
	err error
}

// detailScreen shows one record: offset, time, key, headers, and the value
// as pretty JSON, text or a hex dump.
type detailScreen struct {
	c     *Common
	id    int
	topic string
	part  int
	rec   engine.Record
	hex   bool
	vp    viewport.Model
	theme string // theme the content was rendered with
}

func newDetailScreen(c *Common, topic string, p int, r engine.Record) *detailScreen {
	s := &detailScreen{c: c, id: c.newID(), topic: topic, part: p, rec: r, vp: viewport.New(c.Width, c.Height)}
	return s
}

func (s *detailScreen) ID() int { return s.id }
func (s *detailScreen) Crumb() string {
	return fmt.Sprintf("%s / p%d / offset %s", s.topic, s.part, humanCount(s.rec.Offset))
}
func (s *detailScreen) Init() tea.Cmd { s.render(); return nil }

func (s *detailScreen) SetSize(w, h int) {
	s.vp.Width, s.vp.Height = w, h
	s.render()
}

func (s *detailScreen) Update(msg tea.Msg) tea.Cmd {
	k := s.c.Keys
	switch msg := msg.(type) {
	case copiedMsg:
		if msg.err != nil {
			return errStatus(fmt.Errorf("copy: %w", msg.err))
		}
		return status("copied %s to the clipboard (OSC 52)", humanBytes(int64(msg.n)))
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, k.Up):
			s.vp.ScrollUp(1)
		case key.Matches(msg, k.Down):
			s.vp.ScrollDown(1)
		case key.Matches(msg, k.PageUp):
			s.vp.PageUp()
		case key.Matches(msg, k.PageDown):
			s.vp.PageDown()
		case key.Matches(msg, k.Top):
			s.vp.GotoTop()
		case key.Matches(msg, k.Bottom):
			s.vp.GotoBottom()
		case key.Matches(msg, k.Hex):
			s.hex = !s.hex
			s.render()
		case key.Matches(msg, k.Copy):
			text := string(s.rec.Value)
			if s.hex {
				text = hexDump(s.rec.Value, nil)
			}
			clip, id := s.c.Opts.Clipboard, s.id
			return func() tea.Msg { return copiedMsg{to: to{id}, n: len(text), err: clip(text)} }
		}
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			s.vp.ScrollUp(3)
		case tea.MouseButtonWheelDown:
			s.vp.ScrollDown(3)
		}
	}
	return nil
}

func (s *detailScreen) render() {
	st := s.c.Styles
	s.theme = st.Name
	r := s.rec
	label := func(l string) string { return st.FormLabel.Render(pad(l, 10, false)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s\n", label("topic"), st.Text.Render(fmt.Sprintf("%s  partition %d", s.topic, s.part)))
	fmt.Fprintf(&b, "%s%s\n", label("offset"), st.Text.Render(humanCount(r.Offset)))
	fmt.Fprintf(&b, "%s%s\n", label("time"), st.Text.Render(s.c.Opts.FormatTime(r.Timestamp)))
	keyText := "null"
	if r.Key != nil {
		keyText = printable(r.Key)
	}
	fmt.Fprintf(&b, "%s%s\n", label("key"), st.Info.Render(keyText))
	fmt.Fprintf(&b, "%s%s\n", label("headers"), st.Text.Render(fmt.Sprint(len(r.Headers))))
	for _, h := range r.Headers {
		// A long header wraps; its name keeps the key colour.
		name := printable([]byte(h.Key)) + ":"
		lines := strings.Split(hardWrap("  "+name+" "+printable(h.Value), s.vp.Width), "\n")
		for i, l := range lines {
			if i == 0 && strings.HasPrefix(l, "  "+name) {
				l = "  " + st.JSONKey.Render(name) + st.Text.Render(strings.TrimPrefix(l, "  "+name))
			} else {
				l = st.Text.Render(l)
			}
			b.WriteString(l + "\n")
		}
	}
	kind := "tombstone (null value)"
	switch {
	case r.Value == nil:
	case json.Valid(r.Value):
		kind = humanBytes(int64(len(r.Value))) + ", JSON"
	case utf8.Valid(r.Value):
		kind = humanBytes(int64(len(r.Value))) + ", text"
	default:
		kind = humanBytes(int64(len(r.Value))) + ", binary"
	}
	view := "x: hex view"
	if s.hex {
		view = "x: decoded view"
	}
	fmt.Fprintf(&b, "%s%s  %s\n\n", label("value"), st.Text.Render(kind), st.FormHint.Render(view))
	switch {
	case r.Value == nil:
	case s.hex || !utf8.Valid(r.Value):
		b.WriteString(hexDump(r.Value, st))
	case json.Valid(r.Value):
		b.WriteString(prettyJSON(r.Value, st, s.vp.Width))
	default:
		b.WriteString(st.Text.Render(hardWrap(escapeControls(string(r.Value)), s.vp.Width)))
	}
	s.vp.SetContent(b.String())
}

func (s *detailScreen) View() string {
	if s.theme != s.c.Styles.Name {
		s.render()
	}
	return s.vp.View()
}

func (s *detailScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Up, k.Down, k.Hex, k.Copy, k.Back}
}

func (s *detailScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Hex, k.Copy, k.Back}}
}

// printable quotes bytes that are not plain printable text.
func printable(b []byte) string {
	s := string(b)
	if utf8.Valid(b) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	return fmt.Sprintf("%q", b)
}

// prettyJSON indents valid JSON, wraps it at width cells and colours keys,
// strings, numbers and literals.
func prettyJSON(v []byte, st *themes.Styles, width int) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, v, "", "  "); err != nil {
		return hardWrap(escapeControls(string(v)), width)
	}
	// JSON strings may hold DEL and C1 controls raw. A string token that
	// wraps keeps its colour on every line: lipgloss styles line by line.
	src := hardWrap(escapeControls(buf.String()), width)
	var b strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			tok := src[i:j]
			rest := strings.TrimLeft(src[j:], " ")
			if strings.HasPrefix(rest, ":") {
				b.WriteString(st.JSONKey.Render(tok))
			} else {
				b.WriteString(st.JSONString.Render(tok))
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(src) && strings.IndexByte("0123456789.eE+-", src[j]) >= 0 {
				j++
			}
			b.WriteString(st.JSONNumber.Render(src[i:j]))
			i = j
		case c == 't' || c == 'f' || c == 'n':
			j := i
			for j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
				j++
			}
			b.WriteString(st.JSONLit.Render(src[i:j]))
			i = j
		case strings.IndexByte("{}[]:,", c) >= 0:
			b.WriteString(st.JSONPunct.Render(string(c)))
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// hexDump renders b as offset, 16 hex bytes and their ASCII, per line. With
// nil styles it is plain text (for the clipboard).
func hexDump(b []byte, st *themes.Styles) string {
	style := func(f func(*themes.Styles) string, s string) string { return s }
	if st != nil {
		style = func(f func(*themes.Styles) string, s string) string { return f(st) }
	}
	var out strings.Builder
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(off+16, len(b))]
		var hx, asc strings.Builder
		for i := 0; i < 16; i++ {
			if i == 8 {
				hx.WriteByte(' ')
			}
			if i < len(line) {
				fmt.Fprintf(&hx, "%02x ", line[i])
				if line[i] >= 0x20 && line[i] < 0x7f {
					asc.WriteByte(line[i])
				} else {
					asc.WriteByte('.')
				}
			} else {
				hx.WriteString("   ")
			}
		}
		o := fmt.Sprintf("%08x", off)
		h := hx.String()
		a := "|" + asc.String() + "|"
		out.WriteString(style(func(s *themes.Styles) string { return s.HexOffset.Render(o) }, o) + "  " +
			style(func(s *themes.Styles) string { return s.HexBytes.Render(h) }, h) + " " +
			style(func(s *themes.Styles) string { return s.HexASCII.Render(a) }, a) + "\n")
	}
	return out.String()
}
