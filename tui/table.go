package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// column is one table column. Width is in cells; a Flex column takes the
// width the fixed ones leave. When the columns do not fit, those with the
// highest Drop are hidden first; Drop 0 (the name and health columns) are
// never hidden.
type column struct {
	Title string
	Width int
	Flex  bool
	Right bool
	Drop  int
}

// row is one table row: plain-text cells (Style, when set, colours a cell)
// and a Key that keeps the selection on the same row across reloads.
type row struct {
	Key    string
	Cells  []string
	Styles map[int]func(*Common) lipgloss.Style
}

// table is the list every screen uses: columns, a selection, scrolling, the
// "/" filter, keys and mouse wheel.
type table struct {
	c      *Common
	cols   []column
	rows   []row
	shown  []int // indexes of rows matching the filter
	filter string
	cursor int // index into shown
	offset int // first shown row on screen
	width  int
	height int // rows of data, header excluded
	empty  string
	// passive tables (read-only listings) draw no selection.
	passive bool
	// top is the body line the table's column titles are on (set by
	// under).
	top int
}

func newTable(c *Common, cols []column, empty string) *table {
	return &table{c: c, cols: cols, empty: empty}
}

func (t *table) SetSize(w, h int) {
	t.width, t.height = w, h-1
	if t.height < 1 {
		t.height = 1
	}
	t.clamp()
}

// SetRows replaces the rows, keeping the selection on the row with the same
// key when there is one.
func (t *table) SetRows(rows []row) {
	sel := ""
	if r, ok := t.Selected(); ok {
		sel = r.Key
	}
	t.rows = rows
	t.applyFilter()
	if sel != "" {
		for i, idx := range t.shown {
			if t.rows[idx].Key == sel {
				t.cursor = i
				break
			}
		}
	}
	t.clamp()
}

func (t *table) SetFilter(f string) {
	t.filter = f
	t.applyFilter()
	t.cursor, t.offset = 0, 0
	t.clamp()
}

func (t *table) Filter() string { return t.filter }

func (t *table) applyFilter() {
	t.shown = t.shown[:0]
	f := strings.ToLower(t.filter)
	for i, r := range t.rows {
		if f == "" || strings.Contains(strings.ToLower(strings.Join(r.Cells, "\x00")), f) {
			t.shown = append(t.shown, i)
		}
	}
}

// Selected returns the selected row.
func (t *table) Selected() (row, bool) {
	if t.cursor < 0 || t.cursor >= len(t.shown) {
		return row{}, false
	}
	return t.rows[t.shown[t.cursor]], true
}

// Len is the number of rows shown (after the filter).
func (t *table) Len() int { return len(t.shown) }

func (t *table) Select(key string) {
	for i, idx := range t.shown {
		if t.rows[idx].Key == key {
			t.cursor = i
			t.clamp()
			return
		}
	}
}

func (t *table) move(d int) {
	t.cursor += d
	t.clamp()
}

func (t *table) clamp() {
	if t.cursor >= len(t.shown) {
		t.cursor = len(t.shown) - 1
	}
	if t.cursor < 0 {
		t.cursor = 0
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.height > 0 && t.cursor >= t.offset+t.height {
		t.offset = t.cursor - t.height + 1
	}
	if max := len(t.shown) - t.height; t.offset > max {
		t.offset = max
	}
	if t.offset < 0 {
		t.offset = 0
	}
}

// Update handles navigation keys and the mouse wheel; it reports whether it
// used msg.
func (t *table) Update(msg tea.Msg) bool {
	k := t.c.Keys
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, k.Up):
			t.move(-1)
		case key.Matches(msg, k.Down):
			t.move(1)
		case key.Matches(msg, k.PageUp):
			t.move(-t.height)
		case key.Matches(msg, k.PageDown):
			t.move(t.height)
		case key.Matches(msg, k.Top):
			t.cursor = 0
			t.clamp()
		case key.Matches(msg, k.Bottom):
			t.cursor = len(t.shown) - 1
			t.clamp()
		default:
			return false
		}
		return true
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			t.move(-3)
		case tea.MouseButtonWheelDown:
			t.move(3)
		case tea.MouseButtonLeft:
			// A click on a row selects it: the body starts under the
			// header and breadcrumbs, the rows under the column titles;
			// a click past the rows on screen (on what a screen draws
			// below the table) selects nothing.
			if msg.Action != tea.MouseActionPress || t.passive {
				return false
			}
			line := msg.Y - bodyTop - t.top - 1
			if line < 0 || line >= t.height || t.offset+line >= len(t.shown) {
				return false
			}
			t.cursor = t.offset + line
			t.clamp()
		default:
			return false
		}
		return true
	}
	return false
}

// widths resolves the column widths for the table's width; a hidden
// column's width is -1.
func (t *table) widths() []int {
	ws := make([]int, len(t.cols))
	fixed, flex := 2, 0 // 2: selection marker
	for i, c := range t.cols {
		ws[i] = c.Width
		fixed += c.Width + 1
		if c.Flex {
			flex++
		}
	}
	// Hide droppable columns, highest Drop first, until the rest fit.
	for fixed > t.width+1 {
		drop := -1
		for i, c := range t.cols {
			if ws[i] >= 0 && c.Drop > 0 && (drop < 0 || c.Drop > t.cols[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		fixed -= ws[drop] + 1
		ws[drop] = -1
		if t.cols[drop].Flex {
			flex--
		}
	}
	if flex > 0 {
		rest := t.width - fixed
		if rest < 0 {
			rest = 0
		}
		for i, c := range t.cols {
			if c.Flex && ws[i] >= 0 {
				ws[i] += rest / flex
			}
		}
	}
	return ws
}

func (t *table) View() string {
	st := t.c.Styles
	ws := t.widths()
	var b strings.Builder
	var hdr []string
	for i, c := range t.cols {
		if ws[i] >= 0 {
			hdr = append(hdr, pad(c.Title, ws[i], c.Right))
		}
	}
	b.WriteString(st.TableHeader.Render(truncate("  "+strings.Join(hdr, " "), t.width)))
	if len(t.shown) == 0 {
		msg := t.empty
		if t.filter != "" {
			msg = "no rows match /" + t.filter
		}
		b.WriteString("\n" + st.TableEmpty.Render("  "+msg))
	}
	end := t.offset + t.height
	if end > len(t.shown) {
		end = len(t.shown)
	}
	for i := t.offset; i < end; i++ {
		r := t.rows[t.shown[i]]
		b.WriteByte('\n')
		selected := i == t.cursor && !t.passive
		// Every row is cut the same way, selected or not: the cells that
		// fit, the last one narrowed to the edge (… when its text is cut).
		var plain strings.Builder
		var styled strings.Builder
		used := 2
		first := true
		for j := range t.cols {
			if ws[j] < 0 {
				continue
			}
			if !first {
				if used+1 >= t.width {
					break
				}
				plain.WriteByte(' ')
				styled.WriteByte(' ')
				used++
			}
			w := ws[j]
			if used+w > t.width {
				w = t.width - used
			}
			if w <= 0 {
				break
			}
			txt := pad(cell(r, j), w, t.cols[j].Right)
			style := st.TableCell
			if f, ok := r.Styles[j]; ok {
				style = f(t.c)
			}
			plain.WriteString(txt)
			styled.WriteString(style.Render(txt))
			used += w
			first = false
		}
		if selected {
			b.WriteString(st.TableMarker.Render("▸ "))
			b.WriteString(st.TableSelected.Render(pad(plain.String(), t.width-2, false)))
			continue
		}
		b.WriteString("  ")
		b.WriteString(styled.String())
	}
	return b.String()
}

// under draws the table below head, the body lines a screen shows above
// it, so that a click finds the row drawn under the pointer.
func (t *table) under(head string) string {
	t.top = strings.Count(head, "\n")
	return head + t.View()
}

// cell is a row's cell as one line of plain text: control characters
// (a Kafka client's group id may hold any) are shown escaped.
func cell(r row, j int) string {
	if j < len(r.Cells) {
		return escapeRunes(r.Cells[j], isControl)
	}
	return ""
}
