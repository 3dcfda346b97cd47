package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/themes"
)

// field is one input of a form: a single line, or a multi-line area.
type field struct {
	label string
	hint  string
	line  *textinput.Model
	area  *textarea.Model
}

func (f *field) value() string {
	if f.area != nil {
		return f.area.Value()
	}
	return f.line.Value()
}

func (f *field) focus() tea.Cmd {
	if f.area != nil {
		return f.area.Focus()
	}
	return f.line.Focus()
}

func (f *field) blur() {
	if f.area != nil {
		f.area.Blur()
		return
	}
	f.line.Blur()
}

// form is a column of fields with one focused; tab and shift+tab move.
type form struct {
	c      *Common
	fields []*field
	focus  int
	width  int
	// focusAt is the line of the focused field in the last view.
	focusAt int
}

func newLine(placeholder, value string) *textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = placeholder
	in.SetValue(value)
	return &in
}

func newArea(placeholder string) *textarea.Model {
	a := textarea.New()
	a.Placeholder = placeholder
	a.ShowLineNumbers = false
	a.Prompt = "│ "
	a.CharLimit = 0
	a.MaxHeight = 0
	a.SetHeight(8)
	return &a
}

func (f *form) init() tea.Cmd { return f.fields[f.focus].focus() }

func (f *form) setWidth(w int) {
	f.width = w
	for _, fl := range f.fields {
		if fl.area != nil {
			fl.area.SetWidth(min(max(w-16, 20), 100))
		} else {
			fl.line.Width = min(max(w-50, 10), 48)
		}
	}
}

func (f *form) setAreaHeight(h int) {
	for _, fl := range f.fields {
		if fl.area != nil {
			fl.area.SetHeight(min(max(h, 3), 10))
		}
	}
}

func (f *form) move(d int) tea.Cmd {
	f.fields[f.focus].blur()
	f.focus = (f.focus + d + len(f.fields)) % len(f.fields)
	return f.fields[f.focus].focus()
}

// update handles focus keys and passes the rest to the focused field; it
// reports whether enter was pressed on a single-line field (submit).
func (f *form) update(msg tea.Msg) (tea.Cmd, bool) {
	k := f.c.Keys
	cur := f.fields[f.focus]
	if km, ok := msg.(tea.KeyMsg); ok {
		switch {
		case key.Matches(km, k.Submit):
			return nil, true
		case key.Matches(km, k.NextField):
			return f.move(1), false
		case key.Matches(km, k.PrevField):
			return f.move(-1), false
		case km.Type == tea.KeyEnter && cur.area == nil:
			return nil, true
		}
	}
	var cmd tea.Cmd
	if cur.area != nil {
		*cur.area, cmd = cur.area.Update(msg)
	} else {
		*cur.line, cmd = cur.line.Update(msg)
	}
	return cmd, false
}

// themeInputs gives the inputs the current theme's colours.
func (f *form) themeInputs() {
	st := f.c.Styles
	for _, fl := range f.fields {
		if fl.area != nil {
			for _, as := range []*textarea.Style{&fl.area.FocusedStyle, &fl.area.BlurredStyle} {
				as.Text, as.CursorLine, as.Placeholder, as.Prompt = st.Text, st.Text, st.FormHint, st.Faint
				as.EndOfBuffer = st.Faint
			}
			fl.area.Cursor.Style = st.Prompt
			continue
		}
		themeLine(fl.line, st)
	}
}

func themeLine(in *textinput.Model, st *themes.Styles) {
	in.TextStyle, in.PlaceholderStyle, in.PromptStyle = st.Text, st.FormHint, st.Prompt
	in.Cursor.Style = st.Prompt
}

func (f *form) view() string {
	st := f.c.Styles
	f.themeInputs()
	var b strings.Builder
	for i, fl := range f.fields {
		lbl := st.FormLabel
		mark := "  "
		if i == f.focus {
			f.focusAt = strings.Count(b.String(), "\n")
			lbl = st.FormFocused
			mark = st.TableMarker.Render("▸ ")
		}
		input := ""
		if fl.area != nil {
			input = fl.area.View()
		} else {
			input = fl.line.View()
		}
		lines := strings.Split(input, "\n")
		for j, l := range lines {
			if j == 0 {
				if fl.area == nil {
					// A value, its placeholder and the cursor draw a
					// cell more or less: the hints line up all the same.
					if gap := fl.line.Width + 1 - lipgloss.Width(l); gap > 0 {
						l += strings.Repeat(" ", gap)
					}
				}
				b.WriteString(mark + lbl.Render(pad(fl.label, 12, false)) + " " + l)
				if fl.hint != "" && fl.area == nil {
					// A hint too long for the terminal wraps in its column.
					col := 15 + lipgloss.Width(l) + 2
					hint := wrapWords(strings.Fields(fl.hint), max(f.width-col, 12), "")
					for k := range hint {
						hint[k] = st.FormHint.Render(truncate(hint[k], max(f.width-col, 12)))
					}
					b.WriteString("  " + strings.Join(hint, "\n"+strings.Repeat(" ", col)))
				}
			} else {
				b.WriteString("\n" + strings.Repeat(" ", 15) + l)
			}
		}
		if fl.hint != "" && fl.area != nil {
			b.WriteString("\n" + strings.Repeat(" ", 15) + st.FormHint.Render(fl.hint))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// scrollTo shows height lines of body with its line at on screen, and as
// much of the end (a form's error or hint) as that allows: a form taller
// than the terminal scrolls to the focused field.
func scrollTo(body string, at, height int) string {
	lines := strings.Split(body, "\n")
	if len(lines) <= height {
		return body
	}
	start := max(min(at, len(lines)-height), 0)
	return strings.Join(lines[start:start+height], "\n")
}
