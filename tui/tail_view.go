package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// tail columns: marker, offset, time, key, headers count, value (the rest).
const (
	tailPartW    = 3
	tailOffsetW  = 11
	tailKeyW     = 18
	tailHeadersW = 2

	tailMinValueW  = 40 // below this the time column goes, then the key narrows
	tailNarrowKeyW = 12
)

func (s *tailScreen) View() string {
	st := s.c.Styles
	var b strings.Builder
	b.WriteString(s.statusLine())
	b.WriteByte('\n')
	if t := s.awayText(); t != "" {
		b.WriteString(wrapIndented(st.StatusError, t, s.w) + "\n")
	}
	// On a narrow terminal the value keeps at least tailMinValueW cells:
	// the time column goes first (the record's detail shows it), then the
	// key column narrows.
	timeW, keyW := len(s.c.Opts.FormatTime(0))+1, tailKeyW
	valueW := func() int { return s.w - 2 - tailPartW - tailOffsetW - timeW - keyW - tailHeadersW - 4 }
	if valueW() < tailMinValueW {
		timeW = 0
	}
	if valueW() < tailMinValueW {
		keyW = tailNarrowKeyW
	}
	valW := max(valueW(), 8)
	timeCell := func(ms int64) string {
		if timeW == 0 {
			return ""
		}
		return pad(s.c.Opts.FormatTime(ms), timeW-1, false) + " "
	}
	timeTitle := ""
	if timeW > 0 {
		timeTitle = pad("TIME", timeW-1, false) + " "
	}
	b.WriteString(st.TableHeader.Render(truncate("  "+pad("P", tailPartW, true)+" "+pad("OFFSET", tailOffsetW, true)+" "+timeTitle+
		pad("KEY", keyW, false)+" "+pad("H", tailHeadersW, true)+" VALUE", s.w)))
	if s.err != nil {
		b.WriteString("\n" + wrapIndented(st.StatusError, s.err.Error(), s.w))
		return b.String()
	}
	if s.filterErr != nil {
		// It matches nothing: the rows' place says why, with room to wrap.
		b.WriteString("\n" + wrapIndented(st.StatusError, s.filterErr.Error(), s.w))
		return b.String()
	}
	n := s.rowCount()
	if n == 0 {
		msg := "waiting for records…"
		switch {
		case s.loading:
			msg = "reading…"
		case s.filter != "":
			msg = fmt.Sprintf("no buffered record matches /%s", s.filter)
		case !s.live:
			msg = "no records here; l follows the latest"
		}
		b.WriteString("\n" + st.TableEmpty.Render("  "+msg))
		return b.String()
	}
	end := min(s.offset+s.rowsHeight(), n)
	for i := s.offset; i < end; i++ {
		r := s.rowRecord(i)
		key := "∅"
		if r.Key != nil {
			key = oneLine(r.Key, keyW)
		}
		val := "∅ tombstone" // ∅ as for a null key, unlike a text value "tombstone"
		if r.Value != nil {
			val = oneLine(r.Value, valW)
		}
		hdrs := ""
		if len(r.Headers) > 0 {
			hdrs = fmt.Sprint(len(r.Headers))
		}
		b.WriteByte('\n')
		part := pad(fmt.Sprint(r.P), tailPartW, true) + " "
		cells := part + pad(humanCount(r.Offset), tailOffsetW, true) + " " + timeCell(r.Timestamp) +
			pad(key, keyW, false) + " " + pad(hdrs, tailHeadersW, true) + " " + pad(val, valW, false)
		if i == s.cursor {
			b.WriteString(st.TableMarker.Render("▸ ") + st.TableSelected.Render(padRow(cells, s.w-2)))
			continue
		}
		// The other rows are cut where the selected one is (padRow), each
		// cell in its own style.
		valStyle := st.Text
		if r.Value == nil {
			valStyle = st.Warn
		}
		b.WriteString("  ")
		b.WriteString(renderCut(s.w-2, []styledText{
			{st.Info, part}, {st.Muted, pad(humanCount(r.Offset), tailOffsetW, true)}, {lipgloss.NewStyle(), " "},
			{st.Faint, timeCell(r.Timestamp)}, {st.Info, pad(key, keyW, false)}, {lipgloss.NewStyle(), " "},
			{st.Muted, pad(hdrs, tailHeadersW, true)}, {lipgloss.NewStyle(), " "}, {valStyle, pad(val, valW, false)},
		}))
	}
	return b.String()
}

// statusLine says what the tail shows. Its fields have priorities: when
// the line is wider than the screen the lowest go first (the HWMs, then the
// buffer, then the rate or position), never the state, the topic and
// partition, the filter's matches or the skipped records.
func (s *tailScreen) statusLine() string {
	st := s.c.Styles
	type field struct {
		text string
		prio int // 0 always stays; higher goes first
	}
	var fs []field
	add := func(prio int, text string) { fs = append(fs, field{text, prio}) }
	if s.err != nil {
		// Nothing is followed: the error is under the column titles.
		where := s.topic
		if !s.merged() {
			where = fmt.Sprintf("%s p%d", s.topic, s.part)
		}
		return st.Bad.Render(truncate(" ✗ STOPPED · "+where, s.w))
	}
	switch {
	case s.live && s.c.Away != nil:
		add(0, st.Bad.Render("✗ UNREACHABLE"))
	case s.live && s.followErr != nil:
		add(0, st.Bad.Render("✗ READ FAILED"))
	case s.live:
		add(0, st.BadgeLive.Render("● LIVE"))
	default:
		add(0, st.BadgePaused.Render("‖ PAUSED"))
	}
	if s.merged() {
		add(0, fmt.Sprintf("%s all %s", s.topic, plural(int64(s.parts), "partition", "partitions")))
		hw := make([]string, len(s.hwms))
		for i, h := range s.hwms {
			hw[i] = humanCount(h)
		}
		add(3, "hwm "+strings.Join(hw, "/"))
		add(2, "buffer "+plural(int64(len(s.recs)), "record", "records"))
	} else {
		add(0, fmt.Sprintf("%s p%d of %d", s.topic, s.part, s.parts))
		add(3, "hwm "+humanCount(s.hwm))
		if len(s.recs) > 0 {
			add(2, fmt.Sprintf("buffer %s–%s (%s)", humanCount(s.recs[0].Offset),
				humanCount(s.recs[len(s.recs)-1].Offset), humanCount(int64(len(s.recs)))))
		} else {
			add(2, "buffer empty")
		}
	}
	if s.live {
		add(1, fmt.Sprintf("%s rec/s", humanCount(int64(s.shownRate()+0.5))))
	} else if s.label != "" {
		add(1, "at "+s.label)
	}
	if s.filterErr != nil {
		add(0, st.Bad.Render(fmt.Sprintf("/%s: does not parse", s.filter))) // why: in the body
	} else if s.filter != "" {
		add(0, fmt.Sprintf("/%s: %s shown", s.filter, humanCount(int64(len(s.shown)))))
	}
	if ss := s.searchStatus(); ss != "" {
		add(0, ss)
	}
	if s.skipped > 0 {
		add(0, st.Bad.Render(fmt.Sprintf("%s skipped (corrupt)", humanCount(s.skipped))))
	}
	sep := st.Faint.Render(" · ")
	line := func(maxPrio int) string {
		var parts []string
		for _, f := range fs {
			if f.prio <= maxPrio {
				parts = append(parts, f.text)
			}
		}
		return " " + strings.Join(parts, sep)
	}
	for prio := 3; prio > 0; prio-- {
		if l := line(prio); s.w == 0 || lipgloss.Width(l) <= s.w {
			return l
		}
	}
	return line(0)
}

func (s *tailScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Pause, k.Partition, k.Enter, k.Filter, k.JumpTime, k.JumpOffset, k.Earliest, k.Latest, k.Back}
}

func (s *tailScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Pause, k.Enter, k.Produce, k.NextPart, k.PrevPart},
		{k.JumpOffset, k.JumpTime, k.Earliest, k.Latest, k.Filter},
	}
}
