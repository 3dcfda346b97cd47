package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// tail columns: marker, offset, time, key, headers count, value (the rest).
const (
	tailOffsetW  = 11
	tailKeyW     = 18
	tailHeadersW = 2
)

func (s *tailScreen) View() string {
	st := s.c.Styles
	var b strings.Builder
	b.WriteString(s.statusLine())
	b.WriteByte('\n')
	timeW := len(s.c.Opts.FormatTime(0))
	valueW := max(s.w-2-tailOffsetW-timeW-tailKeyW-tailHeadersW-4, 8)
	b.WriteString(st.TableHeader.Render(truncate("  "+pad("OFFSET", tailOffsetW, true)+" "+pad("TIME", timeW, false)+" "+
		pad("KEY", tailKeyW, false)+" "+pad("H", tailHeadersW, true)+" VALUE", s.w)))
	if s.err != nil {
		b.WriteString("\n" + st.StatusError.Render("  "+s.err.Error()))
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
			key = oneLine(r.Key, tailKeyW)
		}
		val := "tombstone"
		if r.Value != nil {
			val = oneLine(r.Value, valueW)
		}
		hdrs := ""
		if len(r.Headers) > 0 {
			hdrs = fmt.Sprint(len(r.Headers))
		}
		b.WriteByte('\n')
		cells := pad(humanCount(r.Offset), tailOffsetW, true) + " " + pad(s.c.Opts.FormatTime(r.Timestamp), timeW, false) + " " +
			pad(key, tailKeyW, false) + " " + pad(hdrs, tailHeadersW, true) + " " + pad(val, valueW, false)
		if i == s.cursor {
			b.WriteString(st.TableMarker.Render("▸ ") + st.TableSelected.Render(truncate(cells, s.w-2)))
			continue
		}
		b.WriteString("  ")
		b.WriteString(st.Muted.Render(pad(humanCount(r.Offset), tailOffsetW, true)) + " " +
			st.Faint.Render(pad(s.c.Opts.FormatTime(r.Timestamp), timeW, false)) + " " +
			st.Info.Render(pad(key, tailKeyW, false)) + " " +
			st.Muted.Render(pad(hdrs, tailHeadersW, true)) + " ")
		if r.Value == nil {
			b.WriteString(st.Warn.Render(pad(val, valueW, false)))
		} else {
			b.WriteString(st.Text.Render(pad(val, valueW, false)))
		}
	}
	return b.String()
}

func (s *tailScreen) statusLine() string {
	st := s.c.Styles
	var parts []string
	switch {
	case s.live:
		parts = append(parts, st.BadgeLive.Render("● LIVE"))
	default:
		parts = append(parts, st.BadgePaused.Render("‖ PAUSED"))
	}
	parts = append(parts, fmt.Sprintf("%s p%d", s.topic, s.part))
	parts = append(parts, fmt.Sprintf("hwm %s", humanCount(s.hwm)))
	if len(s.recs) > 0 {
		parts = append(parts, fmt.Sprintf("buffer %s–%s (%s)", humanCount(s.recs[0].Offset),
			humanCount(s.recs[len(s.recs)-1].Offset), humanCount(int64(len(s.recs)))))
	} else {
		parts = append(parts, "buffer empty")
	}
	if s.live {
		parts = append(parts, fmt.Sprintf("%s rec/s", humanCount(int64(s.rate+0.5))))
	} else if s.label != "" {
		parts = append(parts, "at "+s.label)
	}
	if s.filter != "" {
		parts = append(parts, fmt.Sprintf("/%s: %s match", s.filter, humanCount(int64(len(s.shown)))))
	}
	if s.skipped > 0 {
		parts = append(parts, st.Bad.Render(fmt.Sprintf("%s skipped (corrupt)", humanCount(s.skipped))))
	}
	return " " + strings.Join(parts, st.Faint.Render(" · "))
}

func (s *tailScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Pause, k.Enter, k.JumpOffset, k.JumpTime, k.Earliest, k.Latest, k.Filter, k.Back}
}

func (s *tailScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Pause, k.Enter, k.Produce, k.NextPart, k.PrevPart},
		{k.JumpOffset, k.JumpTime, k.Earliest, k.Latest, k.Filter},
	}
}
