package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/layout"
)

// framesPage is how many batches one read of the frame browser walks.
const framesPage = 200

// frame is one batch (or one damaged region) of a segment file, as the
// frame browser lists it (the source's verdict, the one recovery gives). It
// holds no batch bytes.
type frame = engine.SegmentFrame

// crcState is "ok", "BAD" or "-" when there was no header to check.
func crcState(f frame) string {
	switch {
	case !f.Damaged:
		return "ok"
	case f.HeaderOK:
		return "BAD"
	}
	return "-"
}

// SegmentFiles reads the segment files of a partition read-only: the frame
// browser and the hex view use it (*engine.Engine implements it with the
// reader recovery uses, so a frame is ok exactly when recovery accepts it).
type SegmentFiles interface {
	// SegmentFrames lists up to n frames of segment base from byte position
	// from, where the lowest acceptable base offset is fromOffset (-1:
	// unknown).
	SegmentFrames(topic string, partition int, base, from, fromOffset int64, n int) (engine.FramePage, error)
	// SegmentBatch reads the frame fr of segment base (one SegmentFrames
	// listed) and annotates its bytes, within lim.
	SegmentBatch(topic string, partition int, base int64, fr engine.SegmentFrame, lim engine.BatchViewLimits) (engine.BatchView, error)
}

type framesMsg struct {
	to
	from    int64
	frames  []frame
	next    int64
	nextOff int64
	size    int64
	err     error
}

// framesScreen lists the batches of one segment file in order, paged
// lazily: framesPage batches per read, the next page read when the
// selection nears the end of what is loaded. It never reads the whole
// segment and keeps no batch bytes.
type framesScreen struct {
	c       *Common
	id      int
	topic   string
	part    int
	base    int64
	start   int64 // position the listing starts at (a jump target)
	table   *table
	frames  []frame
	next    int64 // position after the last loaded frame
	nextOff int64 // offset expected at next (-1: unknown)
	size    int64
	loading bool
	loaded  bool
	err     error
	w, h    int
}

func newFramesScreen(c *Common, topic string, p int, base, pos int64) *framesScreen {
	s := &framesScreen{c: c, id: c.newID(), topic: topic, part: p, base: base, start: pos, next: pos, nextOff: -1}
	s.table = newTable(c, []column{
		{Title: "POSITION", Width: 10, Right: true},
		{Title: "BASE OFF", Width: 10, Right: true},
		{Title: "RECS", Width: 6, Right: true},
		{Title: "CODEC", Width: 5, Drop: 3},
		{Title: "STORED", Width: 9, Right: true},
		{Title: "RAW", Width: 9, Right: true, Drop: 5},
		{Title: "FIRST TS", Width: 23, Drop: 4},
		{Title: "LAST TS", Width: 23, Drop: 6},
		{Title: "CRC", Width: 4},
		{Title: "DETAIL", Width: 10, Flex: true},
	}, "no batches")
	return s
}

func (s *framesScreen) ID() int { return s.id }
func (s *framesScreen) Crumb() string {
	return fmt.Sprintf("%s / p%d / frames %s", s.topic, s.part, layout.SegmentName(s.base))
}
func (s *framesScreen) Init() tea.Cmd { return s.load() }

func (s *framesScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.SetSize(w, h-2)
}

func (s *framesScreen) load() tea.Cmd {
	if s.loading {
		return nil
	}
	s.loading = true
	src, topic, p, base := s.c.Src, s.topic, s.part, s.base
	id, from, fromOff := s.id, s.next, s.nextOff
	return func() tea.Msg {
		sf, ok := src.(SegmentFiles)
		if !ok {
			return framesMsg{to: to{id}, from: from, next: from, err: fmt.Errorf("frames: %w", ErrNeedsDataDir)}
		}
		pg, err := sf.SegmentFrames(topic, p, base, from, fromOff, framesPage)
		return framesMsg{to: to{id}, from: from, frames: pg.Frames, next: pg.Next, nextOff: pg.NextOffset, size: pg.Size, err: err}
	}
}

// more loads the next page when the selection is near the end of what is
// loaded.
func (s *framesScreen) more() tea.Cmd {
	if s.loading || !s.loaded || s.next >= s.size || s.table.cursor < len(s.frames)-s.table.height {
		return nil
	}
	return s.load()
}

func (s *framesScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case framesMsg:
		s.loading, s.loaded = false, true
		if msg.from != s.next {
			return nil // a page of a listing since restarted
		}
		s.err = msg.err
		s.frames = append(s.frames, msg.frames...)
		s.next, s.nextOff, s.size = msg.next, msg.nextOff, msg.size
		s.rebuild()
		return s.more()
	case tea.KeyMsg:
		k := s.c.Keys
		if key.Matches(msg, k.Top) && s.start > 0 {
			// The listing started at a jump target: go back to the
			// segment's first batch.
			s.start, s.next, s.nextOff, s.frames = 0, 0, -1, nil
			s.table.cursor, s.table.offset = 0, 0
			s.loading = false
			return s.load()
		}
		if s.table.Update(msg) {
			return s.more()
		}
		if key.Matches(msg, k.Enter) {
			if i := s.table.cursor; i >= 0 && i < len(s.frames) {
				return push(newHexScreen(s.c, s.topic, s.part, s.base, s.frames[i]))
			}
		}
		return nil
	}
	if s.table.Update(msg) {
		return s.more()
	}
	return nil
}

func (s *framesScreen) rebuild() {
	ft := s.c.Opts.FormatTime
	rows := make([]row, len(s.frames))
	for i, f := range s.frames {
		cells := []string{humanCount(f.Pos), "", "", "", humanBytes(f.Size), "", "", "", crcState(f), ""}
		if f.HeaderOK {
			cells[1] = humanCount(f.Header.BaseOffset)
			cells[2] = humanCount(int64(f.Header.RecordCount))
			cells[3] = f.Header.Codec().String()
			cells[6], cells[7] = ft(f.Header.FirstTimestamp), ft(f.Header.LastTimestamp)
			if f.Header.Sparse() {
				cells[9] = "sparse"
			}
		}
		if f.Raw >= 0 {
			cells[5] = humanBytes(f.Raw)
		}
		if f.Damaged {
			cells[9] = f.Err
		}
		style := func(c *Common) lipgloss.Style { return c.Styles.Good }
		if f.Damaged {
			style = func(c *Common) lipgloss.Style { return c.Styles.Bad }
		}
		rows[i] = row{Key: fmt.Sprint(f.Pos), Cells: cells, Styles: map[int]func(*Common) lipgloss.Style{8: style, 9: style}}
	}
	s.table.SetRows(rows)
}

func (s *framesScreen) View() string {
	st := s.c.Styles
	if !s.loaded {
		return st.Muted.Render("  reading " + layout.LogFile(s.base) + "…")
	}
	var bad int
	for _, f := range s.frames {
		if f.Damaged {
			bad++
		}
	}
	more := "all loaded"
	if s.next < s.size {
		more = fmt.Sprintf("more past byte %s (scroll down)", humanCount(s.next))
	}
	from := ""
	if s.start > 0 {
		from = fmt.Sprintf(" from byte %s (%s: from the start)", humanCount(s.start), s.c.Keys.Top.Help().Key)
	}
	line := fmt.Sprintf("  %s · %s · %d frames%s, %d bad · %s", layout.LogFile(s.base), humanBytes(s.size), len(s.frames), from, bad, more)
	head := st.Muted.Render(line)
	if s.err != nil {
		head = wrapIndented(st.StatusError, s.err.Error(), s.c.Width)
	}
	return s.table.under(head + "\n\n")
}

func (s *framesScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Enter, k.Top, k.Bottom, k.Back}
}

func (s *framesScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Enter, k.Back}}
}
