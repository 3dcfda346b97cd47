package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/themes"
)

// Bounds of the hex view: it shows one batch, but never more than this of
// it (a batch may be up to 256 MiB).
const (
	hexMaxStored  = 4 << 20  // bytes of a batch read from the file
	hexMaxSection = 64 << 10 // bytes of the records section annotated
	hexMaxRecords = 64       // records annotated
	hexDamaged    = 4 << 10  // bytes shown of a region that is no batch
)

type hexMsg struct {
	to
	view engine.BatchView // the batch as stored (possibly cut at hexMaxStored), annotated
	err  error
}

// hexScreen is the annotated hex view of one batch: the 52 header bytes
// coloured and labelled field by field (the layout of engine/codec/doc.go) with their decoded values,
// then the records, field by field (for zstd, the decompressed bytes), with
// the bytes that make a corrupt batch bad marked.
type hexScreen struct {
	c      *Common
	id     int
	topic  string
	part   int
	base   int64 // the segment's base offset
	fr     frame
	lines  []string
	offset int
	loaded bool
	err    error
	w, h   int
}

func newHexScreen(c *Common, topic string, p int, base int64, fr frame) *hexScreen {
	return &hexScreen{c: c, id: c.newID(), topic: topic, part: p, base: base, fr: fr}
}

func (s *hexScreen) ID() int          { return s.id }
func (s *hexScreen) Crumb() string    { return fmt.Sprintf("batch @%s", humanCount(s.fr.Pos)) }
func (s *hexScreen) SetSize(w, h int) { s.w, s.h = w, h; s.clamp() }

func (s *hexScreen) Init() tea.Cmd {
	src, topic, p, base, id, fr := s.c.Src, s.topic, s.part, s.base, s.id, s.fr
	return func() tea.Msg {
		sf, ok := src.(SegmentFiles)
		if !ok {
			return hexMsg{to: to{id}, err: fmt.Errorf("hex view: %w", ErrNeedsDataDir)}
		}
		v, err := sf.SegmentBatch(topic, p, base, fr, hexLimits)
		return hexMsg{to: to{id}, view: v, err: err}
	}
}

// hexLimits are what the hex view reads and annotates of one frame.
var hexLimits = engine.BatchViewLimits{Stored: hexMaxStored, Damaged: hexDamaged, Section: hexMaxSection, Records: hexMaxRecords}

func (s *hexScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case hexMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.lines = strings.Split(renderBatchHex(s.c, s.fr, msg.view), "\n")
		}
		return nil
	case tea.KeyMsg:
		k := s.c.Keys
		switch {
		case key.Matches(msg, k.Up):
			s.offset--
		case key.Matches(msg, k.Down):
			s.offset++
		case key.Matches(msg, k.PageUp):
			s.offset -= s.h
		case key.Matches(msg, k.PageDown):
			s.offset += s.h
		case key.Matches(msg, k.Top):
			s.offset = 0
		case key.Matches(msg, k.Bottom):
			s.offset = len(s.lines)
		}
		s.clamp()
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			s.offset -= 3
		case tea.MouseButtonWheelDown:
			s.offset += 3
		}
		s.clamp()
	}
	return nil
}

func (s *hexScreen) clamp() {
	s.offset = min(s.offset, len(s.lines)-s.h)
	s.offset = max(s.offset, 0)
}

func (s *hexScreen) View() string {
	st := s.c.Styles
	switch {
	case s.err != nil:
		return wrapIndented(st.StatusError, s.err.Error(), s.c.Width)
	case !s.loaded:
		return st.Muted.Render("  reading the batch…")
	}
	end := min(s.offset+s.h, len(s.lines))
	return strings.Join(s.lines[s.offset:end], "\n")
}

func (s *hexScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Up, k.Down, k.PageDown, k.Back}
}

func (s *hexScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Back}}
}

// fieldStyles are the colours fields cycle through; bad bytes use Bad.
func fieldStyles(st *themes.Styles) []lipgloss.Style {
	return []lipgloss.Style{st.Info, st.JSONString, st.JSONNumber, st.JSONKey, st.JSONLit, st.Good}
}

// span is a coloured byte range of an annotated dump.
type span struct {
	from, to int // byte range, relative to the dump
	style    int // index into fieldStyles
	bad      bool
}

// annotatedHex dumps b, 16 bytes a row, each byte in its span's colour;
// under a row holding bad bytes a marker row points at them with ^^ (so a
// dump without colour still shows them). base is the position printed for
// b[0].
func annotatedHex(st *themes.Styles, b []byte, base int64, spans []span) []string {
	styles := fieldStyles(st)
	at := func(i int) (lipgloss.Style, bool) {
		for _, sp := range spans {
			if i >= sp.from && i < sp.to {
				if sp.bad {
					return st.Bad, true
				}
				return styles[sp.style%len(styles)], false
			}
		}
		return st.HexBytes, false
	}
	var out []string
	for off := 0; off < len(b); off += 16 {
		var hx, mark, asc strings.Builder
		anyBad := false
		for i := off; i < off+16; i++ {
			if i == off+8 {
				hx.WriteByte(' ')
				mark.WriteByte(' ')
			}
			if i >= len(b) {
				hx.WriteString("   ")
				mark.WriteString("   ")
				continue
			}
			style, bad := at(i)
			hx.WriteString(style.Render(fmt.Sprintf("%02x", b[i])) + " ")
			if bad {
				mark.WriteString("^^ ")
				anyBad = true
			} else {
				mark.WriteString("   ")
			}
			c := byte('.')
			if b[i] >= 0x20 && b[i] < 0x7f {
				c = b[i]
			}
			asc.WriteString(style.Render(string(c)))
		}
		pos := fmt.Sprintf("%08x", base+int64(off))
		out = append(out, "  "+st.HexOffset.Render(pos)+"  "+hx.String()+" "+st.Faint.Render("|")+asc.String()+st.Faint.Render("|"))
		if anyBad {
			out = append(out, "  "+strings.Repeat(" ", len(pos))+"  "+st.Bad.Render(strings.TrimRight(mark.String(), " ")))
		}
	}
	return out
}

// renderBatchHex renders the annotated view v of the frame fr.
func renderBatchHex(c *Common, fr frame, v engine.BatchView) string {
	st := c.Styles
	styles := fieldStyles(st)
	raw := v.Raw
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	state := st.Good.Render("CRC ok")
	if fr.Damaged {
		state = st.Bad.Render("BAD: " + fr.Err)
	}
	title := fmt.Sprintf("  batch at byte %s · %s stored", humanCount(fr.Pos), humanBytes(fr.Size))
	if fr.HeaderOK {
		title += fmt.Sprintf(" · offset %s · %s · %s", humanCount(fr.Header.BaseOffset), plural(int64(fr.Header.RecordCount), "record", "records"), fr.Header.Codec())
	}
	add(st.Bold.Render(title)+" · "+state, "")

	var spans []span
	for i, f := range v.Header {
		spans = append(spans, span{from: f.Offset, to: f.Offset + f.Len, style: i, bad: f.Bad != ""})
	}
	hl := engine.BatchHeaderLen
	hdr := raw[:min(len(raw), hl)]
	add(st.PanelTitle.Render(fmt.Sprintf("  HEADER (%d bytes, layout in engine/codec/doc.go)", hl)))
	add(annotatedHex(st, hdr, fr.Pos, spans)...)
	add("")
	for i, f := range v.Header {
		if !f.Present {
			add(st.Bad.Render(fmt.Sprintf("  %-9s %-15s missing: the file ends", fmt.Sprintf("[%d,%d)", f.Offset, f.Offset+f.Len), f.Name)))
			continue
		}
		b := hdr[f.Offset : f.Offset+f.Len]
		name := styles[i%len(styles)].Render(fmt.Sprintf("%-15s", f.Name))
		line := fmt.Sprintf("  %-9s %s %-24s %s", fmt.Sprintf("[%d,%d)", f.Offset, f.Offset+f.Len), name, fmt.Sprintf("% x", b), headerValue(c, f))
		if f.Bad != "" {
			line += "  " + st.Bad.Render("✗ "+f.Bad)
		}
		add(line)
	}
	if v.Torn != "" {
		add(st.Bad.Render("  ✗ " + v.Torn))
	}
	add("")
	if len(raw) <= hl || !fr.HeaderOK {
		if len(raw) > hl {
			add(st.PanelTitle.Render(fmt.Sprintf("  %d BYTES THAT ARE NO BATCH", len(raw)-hl)))
			add(annotatedHex(st, raw[hl:], fr.Pos+int64(hl), []span{{0, len(raw) - hl, 0, true}})...)
		}
		return strings.Join(out, "\n")
	}
	add(recordsView(c, fr, v)...)
	return strings.Join(out, "\n")
}

// headerValue renders one header field's value for the legend.
func headerValue(c *Common, f engine.FieldView) string {
	if f.Desc != "" {
		return f.Desc
	}
	u := f.Value
	switch f.Name {
	case "magic":
		return fmt.Sprintf("0x%02x", u)
	case "version":
		return fmt.Sprint(u)
	case "crc32c":
		return fmt.Sprintf("0x%08x (bytes 8..end)", u)
	case "batchLen":
		return fmt.Sprintf("%d bytes of records", u)
	case "firstTimestamp", "lastTimestamp":
		return c.Opts.FormatTime(int64(u))
	case "baseSequence":
		return fmt.Sprint(int32(u))
	}
	return fmt.Sprint(int64(u))
}

// recordsView renders the records section of a batch whose header parsed:
// as stored for codec none, decompressed for zstd.
func recordsView(c *Common, fr frame, v engine.BatchView) []string {
	st := c.Styles
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	stored := v.Raw[engine.BatchHeaderLen:]
	if int64(len(v.Raw)) < fr.Header.Size() {
		add(st.Warn.Render(fmt.Sprintf("  records section cut at %s for display", humanBytes(int64(len(stored))))))
	}
	sec := v.Section
	base := fr.Pos + engine.BatchHeaderLen
	switch {
	case v.SectionErr != "":
		add(st.PanelTitle.Render(fmt.Sprintf("  RECORDS (zstd, %d bytes stored) — cannot decompress: %s", len(stored), v.SectionErr)))
		add(annotatedHex(st, stored[:min(len(stored), hexDamaged)], base, []span{{0, min(len(stored), hexDamaged), 0, true}})...)
		return out
	case v.Decompressed:
		raw := int64(len(sec))
		if fr.Raw > raw {
			raw = fr.Raw
		}
		add(st.PanelTitle.Render(fmt.Sprintf("  RECORDS (zstd: %s stored, %s decompressed; positions below are in the decompressed bytes)",
			humanBytes(int64(len(stored))), humanBytes(raw))))
		base = 0
	default:
		add(st.PanelTitle.Render(fmt.Sprintf("  RECORDS (none: %s as stored)", humanBytes(int64(len(stored))))))
	}
	if fr.Damaged {
		add(st.Warn.Render("  the CRC failed: these bytes are not verified; the decoder refuses them"))
	}
	styles := fieldStyles(st)
	for i, r := range v.Records.Records {
		rec := sec[r.Start : r.Start+r.Len]
		var spans []span
		var names []string
		for j, f := range r.Fields {
			spans = append(spans, span{from: f.Offset, to: f.Offset + f.Len, style: j})
			names = append(names, styles[j%len(styles)].Render(f.Name))
		}
		k, val := `"`+oneLine(r.Key, 24)+`"`, oneLine(r.Value, 60)
		if r.KeyNull {
			k = "null"
		}
		if r.ValueNull {
			val = "null (tombstone)"
		}
		add("", st.Bold.Render(fmt.Sprintf("  record %d · offset %s · %d bytes · key %s · value %s",
			i, humanCount(fr.Header.BaseOffset+int64(r.OffsetDelta)), r.Len, k, truncate(val, 60))))
		add(wrapWords(names, max(c.Width-4, 20), "  ")...)
		add(annotatedHex(st, rec, base+int64(r.Start), spans)...)
	}
	switch rv := v.Records; {
	case rv.More > 0:
		add(st.Muted.Render(fmt.Sprintf("  … %s more bytes not shown", humanCount(int64(rv.More)))))
	case rv.BadErr != "":
		rest := sec[rv.BadAt:min(len(sec), rv.BadAt+hexDamaged)]
		add(st.Bad.Render(fmt.Sprintf("  record %d at byte %d does not parse: %s", rv.BadIndex, rv.BadAt, rv.BadErr)))
		add(annotatedHex(st, rest, base+int64(rv.BadAt), []span{{0, len(rest), 0, true}})...)
	}
	return out
}

// wrapWords joins styled words with spaces into lines of at most width
// cells, each starting with indent.
func wrapWords(words []string, width int, indent string) []string {
	var out []string
	line, w := indent, len(indent)
	for _, wd := range words {
		ww := lipgloss.Width(wd)
		if w > len(indent) && w+1+ww > width {
			out = append(out, line)
			line, w = indent, len(indent)
		}
		if w > len(indent) {
			line += " "
			w++
		}
		line += wd
		w += ww
	}
	return append(out, line)
}
