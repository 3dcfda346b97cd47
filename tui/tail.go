package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// tailReadBytes bounds the bytes of one read of the tail screen.
const tailReadBytes = 4 << 20

// recordOverhead is what the tail screen counts for one record besides its
// key, value and headers.
const recordOverhead = 96

type readKind int

const (
	readFollow readKind = iota // the long-poll follower
	readBack                   // a page before the buffer
	readFwd                    // a page after the buffer
	readJump                   // the first page after a jump
)

// tailStartMsg is where a (re)start of the tail lands.
type tailStartMsg struct {
	to
	gen        int
	from       int64
	hwm        int64
	logStart   int64
	partitions int
	live       bool
	label      string // what was jumped to, for the status line
	err        error

	// Merged tails (all partitions): per partition, where to start and
	// its bounds.
	froms, hwms, starts []int64
}

// tailRecordsMsg carries one read's records.
type tailRecordsMsg struct {
	to
	gen  int
	kind readKind
	from int64
	res  engine.ReadResult
	err  error

	// Merged tails: the records of every partition read, in commit-time
	// order, and each partition's next offset, HWM and log start.
	merged *mergedRead
}

// tailRetryMsg tries a failed follow again.
type tailRetryMsg struct {
	to
	gen int
}

// followRetry is how long a live tail waits before it reads again after
// a failed read on a source that can be away.
const followRetry = time.Second

// tailRec is one buffered record and the partition it belongs to.
type tailRec struct {
	engine.Record
	P int
}

// tailScreen follows a topic live, or browses it page by page: all its
// partitions merged in commit-time order (part == allPartitions, the
// default), or one partition ([ and ] choose). It keeps at most
// Options.TailRecords records (and TailBytes of their data) in memory;
// everything else is read again from the engine when scrolled to.
type tailScreen struct {
	c     *Common
	id    int
	topic string
	part  int // allPartitions, or the one partition shown
	parts int // partitions of the topic, once known

	recs      []tailRec // one partition: ascending offsets; merged: commit-time order
	bytes     int       // data held by recs, with recordOverhead each
	filter    string
	rf        recordFilter
	filterErr error   // the filter does not parse (yet): it matches nothing
	search    *search // the whole-log search of the submitted filter (tail_search.go)
	shown     []int   // indexes into recs matching the filter (nil: no filter)

	cursor int // index into the rows (shown, or recs without a filter)
	offset int // first row on screen

	live    bool // following: new records are appended as they commit
	gen     int  // generation of reads; results of older generations are dropped
	cancel  context.CancelFunc
	next    int64   // first offset after the buffer (one partition)
	nexts   []int64 // merged: each partition's first offset after the buffer
	hwms    []int64 // merged: each partition's HWM
	atEnd   bool    // the last forward read came back empty: the buffer reaches the HWM
	loading bool    // a page read is in flight
	bottom  bool    // G is reading on: the cursor goes to the last row read
	hwm     int64
	start   int64 // log start
	skipped int64
	label   string
	err     error
	// followErr is the last read of a live tail on a source that can be
	// away (Reachability) that failed: it is tried again every second,
	// from where the buffer ends, until one succeeds.
	followErr error

	startAt  *int64 // initial offset (nil: latest)
	received int64  // records received since open
	rateAt   time.Time
	rateN    int64
	rate     float64

	w, h int
}

func newTailScreen(c *Common, topic string, p int) *tailScreen {
	return &tailScreen{c: c, id: c.newID(), topic: topic, part: p, live: true}
}

// newTailScreenAt opens the tail paused at offset from.
func newTailScreenAt(c *Common, topic string, p int, from int64) *tailScreen {
	s := newTailScreen(c, topic, p)
	s.startAt = &from
	s.live = false
	return s
}

func (s *tailScreen) ID() int { return s.id }
func (s *tailScreen) Crumb() string {
	if s.merged() {
		return s.topic + " / tail"
	}
	return fmt.Sprintf("%s / p%d / tail", s.topic, s.part)
}

func (s *tailScreen) Init() tea.Cmd {
	if s.startAt != nil {
		return s.jump(*s.startAt, "offset "+humanCount(*s.startAt))
	}
	return s.toLatest()
}

func (s *tailScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.clamp()
}

// rowsHeight is the number of record rows on screen: under the status
// line, the column titles and what says the source is away.
func (s *tailScreen) rowsHeight() int {
	if h := s.h - 2 - s.awayLines(); h > 1 {
		return h
	}
	return 1
}

// Close stops the follower and any search.
func (s *tailScreen) Close() {
	s.stop()
	if s.search != nil && s.search.cancel != nil {
		s.search.cancel()
	}
}

func (s *tailScreen) stop() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
}

// reset drops the buffer and starts a new generation: results of reads
// already in flight are ignored from now on.
func (s *tailScreen) reset() {
	s.stop()
	s.stopSearch()
	s.gen++
	s.recs, s.shown, s.bytes = nil, nil, 0
	if s.filter != "" {
		s.shown = []int{}
	}
	s.cursor, s.offset = 0, 0
	s.atEnd, s.loading, s.err, s.bottom, s.followErr = false, false, nil, false, nil
}

// toLatest restarts the tail live, with the last screenful already shown.
func (s *tailScreen) toLatest() tea.Cmd {
	s.reset()
	s.live = true
	back := int64(s.rowsHeight())
	if back < 50 {
		back = 50
	}
	if s.merged() {
		return s.resolveAll("latest", true, func(_ Source, _ int, info engine.PartitionInfo) (int64, error) {
			return max(info.LogStart, info.HWM-back), nil
		})
	}
	return s.resolve("latest", true, func(src Source, info engine.PartitionInfo) (int64, error) {
		return max(info.LogStart, info.HWM-back), nil
	})
}

func (s *tailScreen) jump(off int64, label string) tea.Cmd {
	s.reset()
	s.live = false
	return s.resolve(label, false, func(Source, engine.PartitionInfo) (int64, error) { return off, nil })
}

// jumpBottom opens the tail paused on its last page, the cursor on the last
// record: G, when the page after the buffer does not reach the HWM.
func (s *tailScreen) jumpBottom() tea.Cmd {
	s.reset()
	s.live, s.bottom = false, true
	back := int64(s.pageRecords())
	if s.merged() {
		per := int64(s.pageAllRecords())
		return s.resolveAll("latest", false, func(_ Source, _ int, info engine.PartitionInfo) (int64, error) {
			return max(info.LogStart, info.HWM-per), nil
		})
	}
	return s.resolve("latest", false, func(_ Source, info engine.PartitionInfo) (int64, error) {
		return max(info.LogStart, info.HWM-back), nil
	})
}

// landBottom ends a G: the cursor on the last row. It reports whether a G
// was reading.
func (s *tailScreen) landBottom() bool {
	if !s.bottom {
		return false
	}
	s.bottom = false
	s.cursor = s.rowCount() - 1
	s.clamp()
	return true
}

func (s *tailScreen) jumpEarliest() tea.Cmd {
	s.reset()
	s.live = false
	if s.merged() {
		return s.resolveAll("earliest", false, func(_ Source, _ int, info engine.PartitionInfo) (int64, error) { return info.LogStart, nil })
	}
	return s.resolve("earliest", false, func(_ Source, info engine.PartitionInfo) (int64, error) { return info.LogStart, nil })
}

func (s *tailScreen) jumpTime(ms int64, label string) tea.Cmd {
	s.reset()
	s.live = false
	topic, p := s.topic, s.part
	if s.merged() {
		return s.resolveAll(label, false, func(src Source, p int, _ engine.PartitionInfo) (int64, error) {
			return src.OffsetForTimestamp(topic, p, ms)
		})
	}
	return s.resolve(label, false, func(src Source, _ engine.PartitionInfo) (int64, error) {
		return src.OffsetForTimestamp(topic, p, ms)
	})
}

// resolve finds the partition's bounds and the offset to start from, in a
// command.
func (s *tailScreen) resolve(label string, live bool, where func(Source, engine.PartitionInfo) (int64, error)) tea.Cmd {
	src, id, gen, topic, p := s.c.Src, s.id, s.gen, s.topic, s.part
	s.loading = true
	return func() tea.Msg {
		msg := tailStartMsg{to: to{id}, gen: gen, live: live, label: label}
		info, err := src.Describe(topic)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.partitions = len(info.Partitions)
		if p < 0 || p >= len(info.Partitions) {
			msg.err = fmt.Errorf("%w: %s has %s", engine.ErrPartitionOutOfRange, topic, plural(int64(len(info.Partitions)), "partition", "partitions"))
			return msg
		}
		pi := info.Partitions[p]
		msg.hwm, msg.logStart = pi.HWM, pi.LogStart
		from, err := where(src, pi)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.from = min(max(from, pi.LogStart), pi.HWM)
		switch {
		case from > pi.HWM:
			msg.label += fmt.Sprintf(" (past the HWM %s)", humanCount(pi.HWM))
		case from < pi.LogStart:
			msg.label += fmt.Sprintf(" (before the log start %s)", humanCount(pi.LogStart))
		}
		return msg
	}
}

// follow is the long-poll: take the channel, read, and either deliver
// records or wait for the HWM to move (or the follower to be stopped).
func (s *tailScreen) follow() tea.Cmd {
	if s.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		if s.merged() {
			return s.followAllCmd(ctx)
		}
		return s.followCmd(ctx)
	}
	return nil
}

func (s *tailScreen) followCmd(ctx context.Context) tea.Cmd {
	src, id, gen, topic, p, from, batch := s.c.Src, s.id, s.gen, s.topic, s.part, s.next, s.c.Opts.TailBatch
	return func() tea.Msg {
		for {
			ch, err := src.NotifyC(topic, p)
			if err != nil {
				return tailRecordsMsg{to: to{id}, gen: gen, kind: readFollow, from: from, err: err}
			}
			res, err := src.Read(topic, p, from, batch, tailReadBytes)
			if err != nil || len(res.Records) > 0 {
				return tailRecordsMsg{to: to{id}, gen: gen, kind: readFollow, from: from, res: res, err: err}
			}
			if res.Next > from {
				from = res.Next // a compacted or corrupt range was skipped
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// page reads one page before or after the buffer.
func (s *tailScreen) page(kind readKind) tea.Cmd {
	if s.loading {
		return nil
	}
	n := s.pageRecords()
	if s.merged() {
		return s.pageAll(kind)
	}
	src, id, gen, topic, p, start := s.c.Src, s.id, s.gen, s.topic, s.part, s.start
	if kind == readBack {
		if len(s.recs) == 0 || s.recs[0].Offset <= s.start {
			return nil
		}
		head := s.recs[0].Offset
		s.loading = true
		return func() tea.Msg {
			res, err := readBefore(src, topic, p, start, head, n)
			return tailRecordsMsg{to: to{id}, gen: gen, kind: kind, from: head, res: res, err: err}
		}
	}
	from := s.next
	s.loading = true
	return func() tea.Msg {
		res, err := src.Read(topic, p, from, n, tailReadBytes)
		return tailRecordsMsg{to: to{id}, gen: gen, kind: kind, from: from, res: res, err: err}
	}
}

// pageRecords is how many records one page read asks for.
func (s *tailScreen) pageRecords() int { return max(s.rowsHeight()*2, 100) }

// maxBackReads bounds the reads of one page back through a compacted log.
const maxBackReads = 64

// readBefore returns the (up to) n records just before offset head. In a
// compacted log offsets have gaps, so it steps back further (4x each time)
// until it finds records, then reads forward to head so the page joins the
// buffer without a gap.
func readBefore(src Source, topic string, p int, start, head int64, n int) (engine.ReadResult, error) {
	step := int64(n)
	for reads := 0; ; reads++ {
		from := max(start, head-step)
		var page []engine.Record
		var last engine.ReadResult
		for at := from; at < head && reads < maxBackReads; reads++ {
			res, err := src.Read(topic, p, at, n, tailReadBytes)
			if err != nil {
				return res, err
			}
			last = res
			for _, r := range res.Records {
				if r.Offset < head {
					page = append(page, r)
				}
			}
			if len(page) > n {
				page = page[len(page)-n:]
			}
			if len(res.Records) == 0 || res.Next <= at || res.Records[len(res.Records)-1].Offset >= head {
				break
			}
			at = res.Next
		}
		if len(page) > 0 || from == start || reads >= maxBackReads {
			last.Records = page
			return last, nil
		}
		step *= 4
	}
}

func (s *tailScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tailStartMsg:
		if msg.gen != s.gen {
			return nil
		}
		s.loading = false
		if msg.err != nil {
			s.err = msg.err
			return nil
		}
		s.parts, s.hwm, s.start, s.label = msg.partitions, msg.hwm, msg.logStart, msg.label
		s.next = msg.from
		switch {
		case s.merged() && msg.partitions == 1:
			// One partition: the tail of p0, which can also page back.
			s.part, s.next, s.hwm, s.start = 0, msg.froms[0], msg.hwms[0], msg.starts[0]
		case s.merged():
			s.nexts, s.hwms = msg.froms, msg.hwms
		}
		if msg.live {
			return s.follow()
		}
		return s.page(readJump)
	case searchStartMsg:
		if msg.gen != s.gen {
			return nil
		}
		return s.onSearchStart(msg)
	case searchMsg:
		if msg.gen != s.gen {
			return nil
		}
		return s.onSearch(msg)
	case tailRetryMsg:
		if msg.gen != s.gen || !s.live || s.cancel != nil {
			return nil
		}
		return s.follow()
	case tailRecordsMsg:
		if msg.gen != s.gen {
			return nil
		}
		if msg.merged != nil {
			return s.onMerged(msg)
		}
		return s.onRecords(msg)
	case tea.KeyMsg:
		return s.key(msg)
	case tea.MouseMsg:
		switch msg.Button {
		case tea.MouseButtonWheelUp:
			return s.move(-3)
		case tea.MouseButtonWheelDown:
			return s.move(3)
		case tea.MouseButtonLeft:
			// Under the status line and the column titles.
			if row := msg.Y - bodyTop - 2; msg.Action == tea.MouseActionPress && row >= 0 && s.offset+row < s.rowCount() {
				return s.move(s.offset + row - s.cursor)
			}
		}
	}
	return nil
}

func (s *tailScreen) onRecords(msg tailRecordsMsg) tea.Cmd {
	if msg.kind == readFollow {
		s.cancel = nil // this follower's command has returned
	} else {
		s.loading = false
	}
	if msg.err != nil {
		if errors.Is(msg.err, engine.ErrOffsetOutOfRange) {
			// Retention removed what we were about to read: start over
			// from what is left.
			if s.live {
				return tea.Batch(status("offset %s was deleted by retention; following from the log start", humanCount(msg.from)), s.restartFromStart())
			}
			return s.jumpEarliest()
		}
		if cmd := s.retryFollow(msg); cmd != nil {
			return cmd
		}
		s.err = msg.err
		return nil
	}
	if msg.kind == readFollow {
		s.followErr = nil
	}
	res := msg.res
	before := s.hwm // records below it were there before this read
	s.hwm, s.start, s.skipped = res.HWM, res.LogStart, s.skipped+res.Skipped
	switch msg.kind {
	case readFollow:
		s.appendRecs(s.part, res.Records)
		s.next = max(s.next, res.Next)
		arrived := 0
		for _, r := range res.Records {
			if r.Offset >= before {
				arrived++
			}
		}
		s.countRate(arrived)
		if !s.live {
			return nil
		}
		s.trimHead()
		s.cursor = s.rowCount() - 1
		s.clamp()
		return s.follow()
	case readJump, readFwd:
		if len(res.Records) == 0 {
			s.atEnd = true
			s.next = max(s.next, res.Next)
			s.landBottom()
			return nil
		}
		s.atEnd = false
		s.appendRecs(s.part, res.Records)
		s.next = max(s.next, res.Next)
		// Keep the cursor's record while making room.
		if msg.kind == readFwd {
			dropped := s.trimHead()
			s.cursor -= dropped
		} else {
			s.trimTail()
		}
		s.clamp()
		if s.bottom && msg.kind == readFwd && s.next < res.HWM {
			return s.jumpBottom() // more than a page to go: read the last one
		}
		s.landBottom()
		return nil
	case readBack:
		var head int64 = -1
		if len(s.recs) > 0 {
			head = s.recs[0].Offset
		}
		var older []engine.Record
		for _, r := range res.Records {
			if head < 0 || r.Offset < head {
				older = append(older, r)
			}
		}
		added := s.prependRecs(s.part, older)
		s.cursor += added
		s.offset += added
		s.trimTail()
		s.clamp()
		return nil
	}
	return nil
}

// retryFollow keeps a live tail on a source that can be away following
// through a failed read: it shows the error and reads again, from where
// the buffer ends, after followRetry. It is nil (the tail stops, showing
// the error) for any other read, on any other source, and for errors a
// retry does not mend (the topic or partition gone, the source closed).
func (s *tailScreen) retryFollow(msg tailRecordsMsg) tea.Cmd {
	if _, ok := s.c.Src.(Reachability); !ok || msg.kind != readFollow || !s.live ||
		errors.Is(msg.err, engine.ErrTopicNotFound) || errors.Is(msg.err, engine.ErrPartitionOutOfRange) || errors.Is(msg.err, engine.ErrClosed) {
		return nil
	}
	s.followErr = msg.err
	id, gen := s.id, s.gen
	return tea.Tick(followRetry, func(time.Time) tea.Msg { return tailRetryMsg{to: to{id}, gen: gen} })
}

// awayText is what a live tail says under its status line while it
// cannot read: the source away, or its last read failed (followErr).
func (s *tailScreen) awayText() string {
	switch {
	case !s.live || s.err != nil:
		return ""
	case s.c.Away != nil:
		return s.c.Away.Error()
	case s.followErr != nil:
		return s.followErr.Error() + " (reading again every second)"
	}
	return ""
}

// awayLines is how many lines awayText takes.
func (s *tailScreen) awayLines() int {
	if t := s.awayText(); t != "" {
		return strings.Count(wrapIndented(s.c.Styles.StatusError, t, s.w), "\n") + 1
	}
	return 0
}

func (s *tailScreen) restartFromStart() tea.Cmd {
	s.reset()
	s.live = true
	if s.merged() {
		return s.resolveAll("earliest", true, func(_ Source, _ int, info engine.PartitionInfo) (int64, error) { return info.LogStart, nil })
	}
	return s.resolve("earliest", true, func(_ Source, info engine.PartitionInfo) (int64, error) { return info.LogStart, nil })
}

// shownRate is the rate to show: the last second's, or, once more than two
// seconds have gone by without one being measured (records stopped
// arriving), what came since over that time, falling to 0.
func (s *tailScreen) shownRate() float64 {
	if s.rateAt.IsZero() {
		return 0
	}
	if el := s.c.Opts.Now().Sub(s.rateAt); el > 2*time.Second {
		return float64(s.rateN) / el.Seconds()
	}
	return s.rate
}

// countRate tracks records per second over roughly the last second.
func (s *tailScreen) countRate(n int) {
	s.received += int64(n)
	now := s.c.Opts.Now()
	if s.rateAt.IsZero() {
		s.rateAt = now
	}
	s.rateN += int64(n)
	if el := now.Sub(s.rateAt); el >= time.Second {
		s.rate = float64(s.rateN) / el.Seconds()
		s.rateAt, s.rateN = now, 0
	}
}

// copyRecord copies r's key, value and headers into one allocation, so the
// buffer never pins the engine's decoded batches.
func copyRecord(r engine.Record) (engine.Record, int) {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	buf := make([]byte, 0, n)
	cp := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	out := engine.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: cp(r.Key), Value: cp(r.Value)}
	if len(r.Headers) > 0 {
		out.Headers = make([]engine.Header, len(r.Headers))
		for i, h := range r.Headers {
			out.Headers[i] = engine.Header{Key: h.Key, Value: cp(h.Value)}
		}
	}
	return out, n + recordOverhead
}

func (s *tailScreen) appendRecs(p int, rs []engine.Record) {
	for _, r := range rs {
		if len(s.recs) > 0 && r.Offset <= s.recs[len(s.recs)-1].Offset {
			continue
		}
		c, n := copyRecord(r)
		cp := tailRec{c, p}
		s.recs = append(s.recs, cp)
		s.bytes += n
		if s.shown != nil && s.match(cp) {
			s.shown = append(s.shown, len(s.recs)-1)
		}
	}
}

func (s *tailScreen) prependRecs(p int, rs []engine.Record) int {
	if len(rs) == 0 {
		return 0
	}
	before := s.rowCount()
	out := make([]tailRec, 0, len(rs)+len(s.recs))
	for _, r := range rs {
		cp, n := copyRecord(r)
		out = append(out, tailRec{cp, p})
		s.bytes += n
	}
	out = append(out, s.recs...)
	s.recs = out
	s.refilter()
	return s.rowCount() - before
}

func recSize(r engine.Record) int {
	n := len(r.Key) + len(r.Value) + recordOverhead
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// trimHead drops the oldest records over the caps; it returns how many rows
// (of the current view) went.
func (s *tailScreen) trimHead() int {
	drop := 0
	bytes := s.bytes
	for len(s.recs)-drop > s.c.Opts.TailRecords || (bytes > s.c.Opts.TailBytes && len(s.recs)-drop > 1) {
		bytes -= recSize(s.recs[drop].Record)
		drop++
	}
	if drop == 0 {
		return 0
	}
	s.bytes = bytes
	// Release the dropped records' data now; the slice's array is replaced
	// by append's next growth, which copies only what is kept.
	clear(s.recs[:drop])
	s.recs = s.recs[drop:]
	if s.shown == nil {
		return drop
	}
	rows := 0
	kept := s.shown[:0]
	for _, i := range s.shown {
		if i < drop {
			rows++
			continue
		}
		kept = append(kept, i-drop)
	}
	s.shown = kept
	return rows
}

// trimTail drops the newest records over the caps; reading forward starts
// again after what is kept.
func (s *tailScreen) trimTail() {
	n := len(s.recs)
	for n > s.c.Opts.TailRecords || (s.bytes > s.c.Opts.TailBytes && n > 1) {
		n--
		s.bytes -= recSize(s.recs[n].Record)
	}
	if n == len(s.recs) {
		return
	}
	s.next = s.recs[n].Offset
	s.atEnd = false
	s.recs = s.recs[:n:n]
	if s.shown != nil {
		kept := s.shown[:0]
		for _, i := range s.shown {
			if i < n {
				kept = append(kept, i)
			}
		}
		s.shown = kept
	}
}

// match reports whether r passes the filter (filter.go); an unparsable
// filter matches nothing.
func (s *tailScreen) match(r tailRec) bool {
	return s.rf.match != nil && s.rf.match(r)
}

func (s *tailScreen) refilter() {
	if s.filter == "" {
		s.shown = nil
		return
	}
	s.shown = []int{} // never nil: nil means no filter
	for i, r := range s.recs {
		if s.match(r) {
			s.shown = append(s.shown, i)
		}
	}
}

// SetFilter filters the buffered records (filter.go: text, key:, h:, or a
// JSON path).
func (s *tailScreen) SetFilter(f string) {
	if f != s.filter {
		s.stopSearch()
	}
	s.filter = f
	s.rf, s.filterErr = recordFilter{}, nil
	if f != "" {
		s.rf, s.filterErr = parseFilter(f)
	}
	s.refilter()
	s.cursor = s.rowCount() - 1
	s.clamp()
}

func (s *tailScreen) Filter() string { return s.filter }

func (s *tailScreen) rowCount() int {
	if s.shown != nil {
		return len(s.shown)
	}
	return len(s.recs)
}

func (s *tailScreen) rowRecord(i int) tailRec {
	if s.shown != nil {
		return s.recs[s.shown[i]]
	}
	return s.recs[i]
}

func (s *tailScreen) clamp() {
	n := s.rowCount()
	s.cursor = min(max(s.cursor, 0), max(n-1, 0))
	h := s.rowsHeight()
	if s.cursor < s.offset {
		s.offset = s.cursor
	}
	if s.cursor >= s.offset+h {
		s.offset = s.cursor - h + 1
	}
	s.offset = max(min(s.offset, n-h), 0)
}

// move moves the cursor; moving off the newest row pauses a live tail (as
// less +F does), and moving past either end of the buffer reads a page.
func (s *tailScreen) move(d int) tea.Cmd {
	n := s.rowCount()
	target := s.cursor + d
	s.bottom = false
	s.cursor = target
	s.clamp()
	if s.live && d < 0 {
		s.pause()
	}
	switch {
	case target < 0:
		return s.page(readBack)
	case target >= n && !s.live:
		return s.page(readFwd)
	}
	return nil
}

func (s *tailScreen) pause() {
	s.live = false
	s.stop()
	s.gen++ // drop the in-flight follower's result: next says where to resume
	s.loading = false
}

func (s *tailScreen) resume() tea.Cmd {
	s.live = true
	s.cursor = s.rowCount() - 1
	s.trimHead()
	s.clamp()
	return s.follow()
}

func (s *tailScreen) key(msg tea.KeyMsg) tea.Cmd {
	k := s.c.Keys
	switch {
	case key.Matches(msg, k.Up):
		return s.move(-1)
	case key.Matches(msg, k.Down):
		return s.move(1)
	case key.Matches(msg, k.PageUp):
		return s.move(-s.rowsHeight())
	case key.Matches(msg, k.PageDown):
		return s.move(s.rowsHeight())
	case key.Matches(msg, k.Top):
		if s.live {
			s.pause()
		}
		s.bottom = false
		s.cursor = 0
		s.clamp()
		return s.page(readBack)
	case key.Matches(msg, k.Bottom):
		if s.live {
			return nil
		}
		if s.atEnd {
			return s.resume()
		}
		s.cursor = s.rowCount() - 1
		s.clamp()
		s.bottom = true
		return s.page(readFwd)
	case key.Matches(msg, k.Pause):
		if s.live {
			s.pause()
			return status("paused: space resumes following")
		}
		// Following again: the pause's message goes.
		return tea.Batch(status(""), s.resume())
	case key.Matches(msg, k.Latest):
		return tea.Batch(status(""), s.toLatest())
	case key.Matches(msg, k.Earliest):
		return s.jumpEarliest()
	case key.Matches(msg, k.JumpOffset):
		if s.merged() {
			return status("offsets are per partition: choose one with ] first")
		}
		return ask("offset:", "", func(v string) tea.Cmd {
			off, err := parseOffset(v)
			if err != nil {
				return errStatus(err)
			}
			return s.jump(off, "offset "+humanCount(off))
		})
	case key.Matches(msg, k.JumpTime):
		return ask("time ("+whenFormsList(true)+"):", "", func(v string) tea.Cmd {
			ms, err := parseWhen(v, s.c.Opts.Now())
			if err != nil {
				return errStatus(err)
			}
			return s.jumpTime(ms, "time "+s.c.Opts.FormatTime(ms))
		})
	case key.Matches(msg, k.NextPart, k.PrevPart):
		if s.parts <= 1 {
			return status("%s has one partition", s.topic)
		}
		s.part = cyclePartition(s.part, s.parts, key.Matches(msg, k.NextPart))
		// The switch follows live: a pause's message goes, as with l.
		return tea.Batch(status(""), s.toLatest())
	case key.Matches(msg, k.Enter):
		if s.rowCount() == 0 {
			return nil
		}
		r := s.rowRecord(s.cursor)
		return push(newDetailScreen(s.c, s.topic, r.P, r.Record))
	case key.Matches(msg, k.Produce):
		return push(newProduceScreen(s.c, s.topic, s.part))
	}
	return nil
}

// parseOffset reads an offset for the jump prompt: decimal digits, with
// thousands commas allowed as the UI shows them ("1,234").
func parseOffset(v string) (int64, error) {
	digits := strings.ReplaceAll(strings.TrimSpace(v), ",", "")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%w: offset %q is not a non-negative number", ErrBadInput, v)
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: offset %q is too large", ErrBadInput, v)
	}
	return off, nil
}

// whenForms are the forms parseWhen reads, as the README lists them: the
// prompt shows their hints, its error names them.
var whenForms = []struct{ hint, name string }{
	{"2006-01-02 15:04:05", "2006-01-02 15:04:05"},
	{"2006-01-02", "a date (2006-01-02)"},
	{"15:04", "15:04 today"},
	{"-5m", "-5m or 5m ago"},
	{"unix ms", "unix milliseconds"},
}

// whenFormsList is the forms of the @ prompt, by their hints or named in
// full ("..., or unix milliseconds").
func whenFormsList(hints bool) string {
	var out []string
	for _, f := range whenForms {
		if hints {
			out = append(out, f.hint)
		} else {
			out = append(out, f.name)
		}
	}
	if !hints {
		out[len(out)-1] = "or " + out[len(out)-1]
	}
	return strings.Join(out, ", ")
}

// parseWhen reads a time for the jump prompt: a date and time, a date, a
// time of today, a duration ago ("-5m" or "5m"), or Unix milliseconds.
func parseWhen(v string, now time.Time) (int64, error) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.000", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, now.Location()); err == nil {
			return t.UnixMilli(), nil
		}
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, v, now.Location()); err == nil {
			y, m, d := now.Date()
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), 0, now.Location()).UnixMilli(), nil
		}
	}
	if d, err := time.ParseDuration(strings.TrimSuffix(strings.TrimPrefix(v, "-"), " ago")); err == nil && d >= 0 {
		return now.Add(-d).UnixMilli(), nil
	}
	var ms int64
	if _, err := fmt.Sscan(v, &ms); err == nil && ms > 0 && fmt.Sprint(ms) == v {
		return ms, nil
	}
	return 0, fmt.Errorf("%w: time %q (want %s)", ErrBadInput, v, whenFormsList(false))
}
