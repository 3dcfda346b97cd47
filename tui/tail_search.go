package tui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// filterSubmitter is a screen that does more with a filter once it is
// submitted (enter on the "/" prompt) than filter what it holds.
type filterSubmitter interface{ SubmitFilter(f string) tea.Cmd }

// searchChunkBytes bounds the record bytes one search command reads before
// it reports progress (and can be dropped by a newer generation).
const searchChunkBytes = 32 << 20

// search is a whole-log filter in progress: every partition shown is read
// through the engine from its log start to the HWM it had when the search
// began, page by page, and the matches replace the buffer.
type search struct {
	parts   []int   // partitions to read, in order
	at      int     // index into parts
	next    []int64 // per entry of parts
	ends    []int64
	span    int64 // offsets to read, all partitions
	done    int64 // offsets read
	bytes   int64 // record bytes read
	matches int64
	started time.Time
	el      time.Duration
	full    bool // matches reached the buffer cap: the search stopped
	cancel  context.CancelFunc
	running bool
}

type searchStartMsg struct {
	to
	gen                int
	filter             string // the filter searched for
	parts              []int
	starts, ends, hwms []int64
	err                error
}

type searchMsg struct {
	to
	gen      int
	at       int
	next     int64
	matched  []tailRec
	read     int64 // offsets covered
	bytes    int64
	finished bool // this partition is read to its end
	err      error
}

// SubmitFilter searches the whole log (every partition the tail shows)
// for the filter; the tail pauses and its buffer becomes the matches.
func (s *tailScreen) SubmitFilter(f string) tea.Cmd {
	s.SetFilter(f)
	if f == "" || s.filterErr != nil {
		return nil
	}
	s.stopSearch()
	s.pause()
	s.reset()
	s.live = false
	s.label = ""
	src, id, gen, topic, part := s.c.Src, s.id, s.gen, s.topic, s.part
	s.loading = true
	return func() tea.Msg {
		msg := searchStartMsg{to: to{id}, gen: gen, filter: f}
		info, err := src.Describe(topic)
		if err != nil {
			msg.err = err
			return msg
		}
		for p, pi := range info.Partitions {
			if part != allPartitions && p != part {
				continue
			}
			msg.parts = append(msg.parts, p)
			msg.starts = append(msg.starts, pi.LogStart)
			msg.ends = append(msg.ends, pi.HWM)
		}
		for _, pi := range info.Partitions {
			msg.hwms = append(msg.hwms, pi.HWM)
		}
		return msg
	}
}

func (s *tailScreen) stopSearch() {
	if s.search != nil && s.search.cancel != nil {
		s.search.cancel()
	}
	s.search = nil
}

func (s *tailScreen) onSearchStart(msg searchStartMsg) tea.Cmd {
	if msg.filter != s.filter {
		s.loading = false
		return nil // the filter changed (or was cleared) before the search began
	}
	if msg.err != nil {
		s.loading = false
		s.err = msg.err
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	sr := &search{parts: msg.parts, next: msg.starts, ends: msg.ends, started: s.c.Opts.Now(), cancel: cancel}
	for i := range msg.parts {
		sr.span += msg.ends[i] - msg.starts[i]
	}
	s.search = sr
	if s.merged() {
		s.parts, s.hwms = len(msg.hwms), msg.hwms
		s.nexts = append([]int64(nil), msg.hwms...)
	} else if len(msg.ends) == 1 {
		s.next, s.hwm = msg.ends[0], msg.ends[0]
	}
	return s.searchStep(ctx)
}

// searchStep reads the next chunk of the search in a command.
func (s *tailScreen) searchStep(ctx context.Context) tea.Cmd {
	sr := s.search
	for sr.at < len(sr.parts) && sr.next[sr.at] >= sr.ends[sr.at] {
		sr.at++
	}
	if sr.at == len(sr.parts) || sr.full {
		sr.el = s.c.Opts.Now().Sub(sr.started)
		sr.running, s.loading = false, false
		s.clamp()
		return nil
	}
	sr.running = true
	src, id, gen, topic, rf := s.c.Src, s.id, s.gen, s.topic, s.rf
	at, p, from, end := sr.at, sr.parts[sr.at], sr.next[sr.at], sr.ends[sr.at]
	return func() tea.Msg {
		msg := searchMsg{to: to{id}, gen: gen, at: at, next: from}
		for msg.bytes < searchChunkBytes && msg.next < end {
			if ctx.Err() != nil {
				return nil
			}
			res, err := src.Read(topic, p, msg.next, 1000, tailReadBytes)
			if err != nil {
				msg.err = fmt.Errorf("searching %s p%d at offset %d: %w", topic, p, msg.next, err)
				return msg
			}
			for _, r := range res.Records {
				if r.Offset >= end {
					break
				}
				msg.bytes += int64(recSize(r) - recordOverhead)
				if tr := (tailRec{r, p}); rf.match(tr) {
					c, _ := copyRecord(r)
					msg.matched = append(msg.matched, tailRec{c, p})
				}
			}
			if res.Next <= msg.next {
				break // nothing more visible
			}
			msg.next = res.Next
		}
		msg.read = min(msg.next, end) - from
		msg.finished = msg.next >= end
		return msg
	}
}

func (s *tailScreen) onSearch(msg searchMsg) tea.Cmd {
	sr := s.search
	if sr == nil {
		return nil
	}
	if msg.err != nil {
		sr.running, s.loading = false, false
		s.err = msg.err
		return nil
	}
	sr.done += msg.read
	sr.bytes += msg.bytes
	sr.next[msg.at] = msg.next
	if msg.finished {
		sr.next[msg.at] = sr.ends[msg.at]
	}
	room := s.c.Opts.TailRecords - len(s.recs)
	if len(msg.matched) > room {
		msg.matched, sr.full = msg.matched[:max(room, 0)], true
	}
	sr.matches += int64(len(msg.matched))
	if s.merged() {
		s.insertByTime(msg.matched)
	} else {
		for _, r := range msg.matched {
			cp := r
			s.recs = append(s.recs, cp)
			s.bytes += recSize(r.Record)
			if s.shown != nil {
				s.shown = append(s.shown, len(s.recs)-1)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	sr.cancel = cancel
	return s.searchStep(ctx)
}

// searchStatus is the search's part of the status line.
func (s *tailScreen) searchStatus() string {
	sr := s.search
	if sr == nil {
		return ""
	}
	pct := 100.0
	if sr.span > 0 {
		pct = float64(sr.done) * 100 / float64(sr.span)
	}
	el := sr.el
	if sr.running {
		el = s.c.Opts.Now().Sub(sr.started)
	}
	rate := ""
	if el > 0 {
		rate = fmt.Sprintf(" · %.0f MB/s", float64(sr.bytes)/1e6/el.Seconds())
	}
	switch {
	case sr.running:
		return fmt.Sprintf("searching the whole log: %.0f%% · %s%s (esc stops)", pct, plural(sr.matches, "match", "matches"), rate)
	case sr.full:
		return fmt.Sprintf("whole log: the first %s kept, the search stopped at %.0f%%", plural(sr.matches, "match", "matches"), pct)
	}
	return fmt.Sprintf("whole log: %s in %s offsets%s", plural(sr.matches, "match", "matches"), humanCount(sr.span), rate)
}
