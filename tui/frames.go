package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/segment"
)

// framesPage is how many batches one read of the frame browser walks.
const framesPage = 200

// resyncChunk is how much of a segment the search past damaged bytes reads
// at a time.
const resyncChunk = 1 << 20

// frame is one batch (or one damaged region) of a segment file, as the
// frame browser lists it. It holds no batch bytes.
type frame struct {
	Pos  int64
	Size int64 // bytes up to the next frame
	H    codec.BatchHeader
	// Damaged: the bytes at Pos are no valid batch (header does not parse,
	// overruns the file or fails its CRC). Err says why. When the header
	// parsed, H holds it and HeaderOK is set.
	Damaged  bool
	HeaderOK bool
	Err      string
	Raw      int64 // uncompressed records section; -1 unknown
}

// CRCState is "ok", "BAD" or "-" when there was no header to check.
func (f frame) crcState() string {
	switch {
	case !f.Damaged:
		return "ok"
	case f.HeaderOK:
		return "BAD"
	}
	return "-"
}

// readFrames walks up to n frames of the .log file at path from position
// from with ReadAt: a 52-byte header, then the whole batch for its CRC, one
// batch at a time. A region that is no valid batch becomes one damaged
// frame reaching to the next position where a batch's header and CRC check
// out (or the end of the file). It returns the frames, where the walk
// stopped, and the file size.
func readFrames(path string, from int64, n int) ([]frame, int64, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, from, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, from, 0, err
	}
	frs, next, err := walkFrames(f, fi.Size(), from, n)
	return frs, next, fi.Size(), err
}

// walkFrames is readFrames on any ReaderAt of size bytes.
func walkFrames(f io.ReaderAt, size, from int64, n int) ([]frame, int64, error) {
	var out []frame
	var buf []byte
	hb := make([]byte, codec.HeaderLen)
	pos := from
	for len(out) < n && pos < size {
		fr, err := checkFrame(f, pos, size, hb, &buf)
		if err != nil {
			return out, pos, err
		}
		if fr.Damaged {
			next, err := resyncFile(f, pos+1, size)
			if err != nil {
				return out, pos, err
			}
			fr.Size = next - pos
		}
		out = append(out, fr)
		pos += fr.Size
	}
	return out, pos, nil
}

// checkFrame reads and checks the batch at pos.
func checkFrame(f io.ReaderAt, pos, size int64, hb []byte, buf *[]byte) (frame, error) {
	fr := frame{Pos: pos, Raw: -1}
	hn := min(int64(codec.HeaderLen), size-pos)
	if _, err := f.ReadAt(hb[:hn], pos); err != nil && !errors.Is(err, io.EOF) {
		return fr, fmt.Errorf("read header at %d: %w", pos, err)
	}
	if hn < codec.HeaderLen {
		fr.Damaged, fr.Err = true, fmt.Sprintf("torn: %d bytes left, a header needs %d", hn, codec.HeaderLen)
		return fr, nil
	}
	h, err := codec.ParseHeader(hb)
	if err != nil {
		fr.Damaged, fr.Err = true, err.Error()
		return fr, nil
	}
	fr.H, fr.HeaderOK, fr.Size = h, true, h.Size()
	if pos+h.Size() > size {
		fr.Damaged, fr.Err = true, fmt.Sprintf("torn: batch of %d bytes overruns the file end by %d", h.Size(), pos+h.Size()-size)
		return fr, nil
	}
	if int64(cap(*buf)) < h.Size() {
		*buf = make([]byte, h.Size())
	}
	b := (*buf)[:h.Size()]
	if _, err := f.ReadAt(b, pos); err != nil && !errors.Is(err, io.EOF) {
		return fr, fmt.Errorf("read batch at %d: %w", pos, err)
	}
	if raw, err := codec.RawLen(b); err == nil {
		fr.Raw = raw
	}
	if _, err := codec.VerifyBatch(b); err != nil {
		fr.Damaged, fr.Err = true, err.Error()
	}
	return fr, nil
}

// resyncFile finds the first position at or after from where a whole batch
// with a good header and CRC starts, reading the file in chunks; size when
// there is none.
func resyncFile(f io.ReaderAt, from, size int64) (int64, error) {
	chunk := make([]byte, min(resyncChunk, max(size-from, 0))+codec.HeaderLen)
	hb := make([]byte, codec.HeaderLen)
	var buf []byte
	for start := from; start+codec.HeaderLen <= size; start += resyncChunk {
		n := min(int64(len(chunk)), size-start)
		if _, err := f.ReadAt(chunk[:n], start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := int64(0); i < min(int64(len(chunk))-codec.HeaderLen, n-codec.HeaderLen+1); i++ {
			if chunk[i] != codec.Magic || chunk[i+1] != codec.Version {
				continue
			}
			fr, err := checkFrame(f, start+i, size, hb, &buf)
			if err != nil {
				return 0, err
			}
			if !fr.Damaged {
				return start + i, nil
			}
		}
	}
	return size, nil
}

type framesMsg struct {
	to
	from   int64
	frames []frame
	next   int64
	size   int64
	err    error
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
	path    string
	table   *table
	frames  []frame
	next    int64 // position after the last loaded frame
	size    int64
	loading bool
	loaded  bool
	err     error
	w, h    int
}

func newFramesScreen(c *Common, topic string, p int, base, pos int64) *framesScreen {
	s := &framesScreen{c: c, id: c.newID(), topic: topic, part: p, base: base, start: pos, next: pos,
		path: filepath.Join(crashlab.PartitionDir(dataDir(c.Src), topic, p), segment.LogFile(base))}
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
	return fmt.Sprintf("%s / p%d / frames %s", s.topic, s.part, segment.Name(s.base))
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
	path, id, from := s.path, s.id, s.next
	return func() tea.Msg {
		frs, next, size, err := readFrames(path, from, framesPage)
		return framesMsg{to: to{id}, from: from, frames: frs, next: next, size: size, err: err}
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
		s.next, s.size = msg.next, msg.size
		s.rebuild()
		return s.more()
	case tea.KeyMsg:
		k := s.c.Keys
		if key.Matches(msg, k.Top) && s.start > 0 {
			// The listing started at a jump target: go back to the
			// segment's first batch.
			s.start, s.next, s.frames = 0, 0, nil
			s.table.cursor, s.table.offset = 0, 0
			s.loading = false
			return s.load()
		}
		if s.table.Update(msg) {
			return s.more()
		}
		if key.Matches(msg, k.Enter) {
			if i := s.table.cursor; i >= 0 && i < len(s.frames) {
				return push(newHexScreen(s.c, s.topic, s.part, s.path, s.frames[i]))
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
		cells := []string{humanCount(f.Pos), "", "", "", humanBytes(f.Size), "", "", "", f.crcState(), ""}
		if f.HeaderOK {
			cells[1] = humanCount(f.H.BaseOffset)
			cells[2] = humanCount(int64(f.H.RecordCount))
			cells[3] = f.H.Codec().String()
			cells[6], cells[7] = ft(f.H.FirstTimestamp), ft(f.H.LastTimestamp)
			if f.H.Sparse() {
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
		return st.Muted.Render("  reading " + segment.LogFile(s.base) + "…")
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
	line := fmt.Sprintf("  %s · %s · %d frames%s, %d bad · %s", segment.LogFile(s.base), humanBytes(s.size), len(s.frames), from, bad, more)
	head := st.Muted.Render(line)
	if s.err != nil {
		head = st.StatusError.Render("  " + s.err.Error())
	}
	return head + "\n\n" + s.table.View()
}

func (s *framesScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Enter, k.Top, k.Bottom, k.Back}
}

func (s *framesScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Enter, k.Back}}
}
