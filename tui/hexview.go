package tui

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/themes"
)

// Bounds of the hex view: it shows one batch, but never more than this of
// it (a batch may be up to codec.MaxBatchBytes).
const (
	hexMaxStored  = 4 << 20  // bytes of a batch read from the file
	hexMaxSection = 64 << 10 // bytes of the records section annotated
	hexMaxRecords = 64       // records annotated
	hexDamaged    = 4 << 10  // bytes shown of a region that is no batch
)

type hexMsg struct {
	to
	raw []byte // the batch as stored (possibly cut at hexMaxStored)
	err error
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
		n := fr.Size
		if !fr.HeaderOK {
			n = min(n, hexDamaged)
		}
		n = min(n, hexMaxStored)
		sf, ok := src.(SegmentFiles)
		if !ok {
			return hexMsg{to: to{id}, err: fmt.Errorf("hex view: %w", ErrNeedsDataDir)}
		}
		raw, err := sf.SegmentBytes(topic, p, base, fr.Pos, n)
		return hexMsg{to: to{id}, raw: raw, err: err}
	}
}

func (s *hexScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case hexMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.lines = strings.Split(renderBatchHex(s.c, s.fr, msg.raw), "\n")
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
		return st.StatusError.Render("  " + s.err.Error())
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

// headerCheck says which header fields of raw are bad, and why (the
// codec's HeaderProblems, with the bytes the frame has in its file).
func headerCheck(raw []byte, fr frame) map[string]string {
	avail := int64(-1)
	if fr.HeaderOK {
		avail = fr.Size
	}
	return codec.HeaderProblems(raw, avail)
}

// renderBatchHex renders the annotated view of the batch bytes raw found at
// fr.Pos.
func renderBatchHex(c *Common, fr frame, raw []byte) string {
	st := c.Styles
	styles := fieldStyles(st)
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

	bad := headerCheck(raw, fr)
	fields := codec.HeaderFields()
	var spans []span
	for i, f := range fields {
		_, isBad := bad[f.Name]
		spans = append(spans, span{from: f.Offset, to: f.Offset + f.Len, style: i, bad: isBad})
	}
	hdr := raw[:min(len(raw), codec.HeaderLen)]
	add(st.PanelTitle.Render(fmt.Sprintf("  HEADER (%d bytes, layout in engine/codec/doc.go)", codec.HeaderLen)))
	add(annotatedHex(st, hdr, fr.Pos, spans)...)
	add("")
	for i, f := range fields {
		if f.Offset+f.Len > len(hdr) {
			add(st.Bad.Render(fmt.Sprintf("  %-9s %-15s missing: the file ends", fmt.Sprintf("[%d,%d)", f.Offset, f.Offset+f.Len), f.Name)))
			continue
		}
		b := hdr[f.Offset : f.Offset+f.Len]
		name := styles[i%len(styles)].Render(fmt.Sprintf("%-15s", f.Name))
		val := headerValue(c, f.Name, b)
		line := fmt.Sprintf("  %-9s %s %-24s %s", fmt.Sprintf("[%d,%d)", f.Offset, f.Offset+f.Len), name, fmt.Sprintf("% x", b), val)
		if why, ok := bad[f.Name]; ok {
			line += "  " + st.Bad.Render("✗ "+why)
		}
		add(line)
	}
	if why, ok := bad["*"]; ok {
		add(st.Bad.Render("  ✗ " + why))
	}
	add("")
	if len(raw) <= codec.HeaderLen || !fr.HeaderOK {
		if len(raw) > codec.HeaderLen {
			add(st.PanelTitle.Render(fmt.Sprintf("  %d BYTES THAT ARE NO BATCH", len(raw)-codec.HeaderLen)))
			add(annotatedHex(st, raw[codec.HeaderLen:], fr.Pos+codec.HeaderLen, []span{{0, len(raw) - codec.HeaderLen, 0, true}})...)
		}
		return strings.Join(out, "\n")
	}
	add(recordsView(c, fr, raw)...)
	return strings.Join(out, "\n")
}

// headerValue decodes one header field for the legend.
func headerValue(c *Common, name string, b []byte) string {
	u := func() uint64 {
		var v uint64
		for _, x := range b {
			v = v<<8 | uint64(x)
		}
		return v
	}
	switch name {
	case "magic":
		return fmt.Sprintf("0x%02x", b[0])
	case "version":
		return fmt.Sprint(b[0])
	case "flags":
		f := uint16(u())
		s := fmt.Sprintf("0x%04x codec %s", f, codec.Codec(f&codec.FlagCodecMask))
		if f&codec.FlagSparse != 0 {
			s += ", sparse offsets"
		}
		return s
	case "crc32c":
		return fmt.Sprintf("0x%08x (bytes 8..end)", u())
	case "batchLen":
		return fmt.Sprintf("%d bytes of records", u())
	case "firstTimestamp", "lastTimestamp":
		return c.Opts.FormatTime(int64(u()))
	case "baseSequence":
		return fmt.Sprint(int32(u()))
	}
	return fmt.Sprint(int64(u()))
}

// recordsView annotates the records section of a batch whose header
// parsed: as stored for codec none, decompressed for zstd.
func recordsView(c *Common, fr frame, raw []byte) []string {
	st := c.Styles
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	stored := raw[codec.HeaderLen:]
	if int64(len(raw)) < fr.Header.Size() {
		add(st.Warn.Render(fmt.Sprintf("  records section cut at %s for display", humanBytes(int64(len(stored))))))
	}
	sec := stored
	base := fr.Pos + codec.HeaderLen
	switch fr.Header.Codec() {
	case codec.CodecZstd:
		dec, err := decompress(stored)
		if err != nil {
			add(st.PanelTitle.Render(fmt.Sprintf("  RECORDS (zstd, %d bytes stored) — cannot decompress: %v", len(stored), err)))
			add(annotatedHex(st, stored[:min(len(stored), hexDamaged)], base, []span{{0, min(len(stored), hexDamaged), 0, true}})...)
			return out
		}
		sec = dec
		raw := int64(len(dec))
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
	q := 0
	for i := 0; q < len(sec); i++ {
		if i == hexMaxRecords || q >= hexMaxSection {
			add(st.Muted.Render(fmt.Sprintf("  … %s more bytes not shown", humanCount(int64(len(sec)-q)))))
			break
		}
		fields, n, err := codec.RecordFields(sec[q:])
		if err != nil {
			rest := sec[q:min(len(sec), q+hexDamaged)]
			add(st.Bad.Render(fmt.Sprintf("  record %d at byte %d does not parse: %v", i, q, err)))
			add(annotatedHex(st, rest, base+int64(q), []span{{0, len(rest), 0, true}})...)
			break
		}
		rec := sec[q : q+n]
		var spans []span
		var names []string
		var key, val []byte
		var keyNull, valNull bool
		var offDelta uint32
		for j, f := range fields {
			spans = append(spans, span{from: f.Offset, to: f.Offset + f.Len, style: j})
			names = append(names, styles[j%len(styles)].Render(f.Name))
			b := rec[f.Offset : f.Offset+f.Len]
			switch f.Name {
			case "offsetDelta":
				offDelta = binary.BigEndian.Uint32(b)
			case "key":
				key = b
			case "value":
				val = b
			case "keyLength":
				keyNull = binary.BigEndian.Uint32(b) == 0xFFFFFFFF
			case "valueLength":
				valNull = binary.BigEndian.Uint32(b) == 0xFFFFFFFF
			}
		}
		k, v := `"`+oneLine(key, 24)+`"`, oneLine(val, 60)
		if keyNull {
			k = "null"
		}
		if valNull {
			v = "null (tombstone)"
		}
		add("", st.Bold.Render(fmt.Sprintf("  record %d · offset %s · %d bytes · key %s · value %s",
			i, humanCount(fr.Header.BaseOffset+int64(offDelta)), n, k, truncate(v, 60))))
		add(wrapWords(names, max(c.Width-4, 20), "  ")...)
		add(annotatedHex(st, rec, base+int64(q), spans)...)
		q += n
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

// decompress inflates the start of a zstd records section: at most
// hexMaxSection plus one record's worth of bytes, since no more is shown
// (a corrupt frame may claim up to codec.MaxBatchBytes).
func decompress(sec []byte) ([]byte, error) {
	return codec.DecompressPrefix(sec, 2*hexMaxSection)
}
