package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// allPartitions is the tail screen's part when it merges every partition.
const allPartitions = -1

// mergedRead is one read of every partition of a merged tail.
type mergedRead struct {
	recs    []tailRec // commit-time order; each partition's records in offset order
	nexts   []int64
	hwms    []int64
	skipped int64
}

func (s *tailScreen) merged() bool { return s.part == allPartitions }

// cyclePartition is the partition filter after ] (next) or [ (prev):
// all → p0 → p1 → … → all.
func cyclePartition(part, parts int, next bool) int {
	// Positions 0..parts: 0 is "all", i+1 is partition i.
	pos := part + 1
	if next {
		pos = (pos + 1) % (parts + 1)
	} else {
		pos = (pos + parts) % (parts + 1)
	}
	return pos - 1
}

// resolveAll finds every partition's bounds and where to start reading it,
// in a command.
func (s *tailScreen) resolveAll(label string, live bool, where func(Source, int, engine.PartitionInfo) (int64, error)) tea.Cmd {
	src, id, gen, topic := s.c.Src, s.id, s.gen, s.topic
	s.loading = true
	return func() tea.Msg {
		msg := tailStartMsg{to: to{id}, gen: gen, live: live, label: label}
		info, err := src.Describe(topic)
		if err != nil {
			msg.err = err
			return msg
		}
		msg.partitions = len(info.Partitions)
		for p, pi := range info.Partitions {
			from, err := where(src, p, pi)
			if err != nil {
				msg.err = fmt.Errorf("%s p%d: %w", topic, p, err)
				return msg
			}
			msg.froms = append(msg.froms, min(max(from, pi.LogStart), pi.HWM))
			msg.hwms = append(msg.hwms, pi.HWM)
			msg.starts = append(msg.starts, pi.LogStart)
			msg.hwm += pi.HWM
		}
		return msg
	}
}

// readEvery reads up to n records from each partition at nexts and merges
// them by commit time. It never blocks.
func readEvery(src Source, topic string, nexts []int64, n int) (*mergedRead, error) {
	out := &mergedRead{nexts: slices.Clone(nexts), hwms: make([]int64, len(nexts))}
	per := make([][]engine.Record, len(nexts))
	for p, from := range nexts {
		res, err := src.Read(topic, p, from, n, tailReadBytes)
		if err != nil {
			return nil, fmt.Errorf("%s p%d at offset %d: %w", topic, p, from, err)
		}
		per[p] = res.Records
		out.hwms[p] = res.HWM
		out.skipped += res.Skipped
		out.nexts[p] = max(from, res.Next)
	}
	out.recs = mergeByTime(per)
	return out, nil
}

// mergeByTime merges per-partition runs (each in offset order) into one
// run in commit-time order, keeping each partition's offset order; equal
// times go to the lower partition first.
func mergeByTime(per [][]engine.Record) []tailRec {
	total := 0
	for _, rs := range per {
		total += len(rs)
	}
	out := make([]tailRec, 0, total)
	heads := make([]int, len(per))
	for len(out) < total {
		best := -1
		for p, rs := range per {
			if heads[p] < len(rs) && (best < 0 || rs[heads[p]].Timestamp < per[best][heads[best]].Timestamp) {
				best = p
			}
		}
		out = append(out, tailRec{per[best][heads[best]], best})
		heads[best]++
	}
	return out
}

// followAllCmd is the merged long-poll: take every partition's channel,
// read them all, and either deliver what came or wait for any HWM to move.
// On a source that reports growth (PartitionWatcher) it also waits for the
// topic to gain partitions, and then follows the new ones from their log
// start.
func (s *tailScreen) followAllCmd(ctx context.Context) tea.Cmd {
	src, id, gen, topic, nexts, batch := s.c.Src, s.id, s.gen, s.topic, slices.Clone(s.nexts), s.c.Opts.TailBatch
	watcher, _ := src.(PartitionWatcher)
	have := len(nexts)
	return func() tea.Msg {
		for {
			cases := make([]reflect.SelectCase, len(nexts)+2)
			cases[0] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
			grown := len(nexts) + 1
			cases[grown] = reflect.SelectCase{Dir: reflect.SelectRecv} // nil channel: never ready
			if watcher != nil {
				// Taken before Describe: a grow in between closes it.
				if ch, err := watcher.PartitionsChangedC(topic); err == nil {
					cases[grown].Chan = reflect.ValueOf(ch)
					if info, err := src.Describe(topic); err == nil {
						for p := len(nexts); p < len(info.Partitions); p++ {
							nexts = append(nexts, info.Partitions[p].LogStart)
						}
						if len(nexts) >= grown {
							continue // more partitions than cases: build them again
						}
					}
				}
			}
			for p := range nexts {
				ch, err := src.NotifyC(topic, p)
				if err != nil {
					return tailRecordsMsg{to: to{id}, gen: gen, kind: readFollow, err: err, merged: &mergedRead{}}
				}
				cases[p+1] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)}
			}
			mr, err := readEvery(src, topic, nexts, batch)
			if err != nil {
				return tailRecordsMsg{to: to{id}, gen: gen, kind: readFollow, err: err, merged: &mergedRead{}}
			}
			if len(mr.recs) > 0 || len(mr.nexts) > have {
				return tailRecordsMsg{to: to{id}, gen: gen, kind: readFollow, merged: mr}
			}
			nexts = mr.nexts // compacted or corrupt ranges skipped
			if chosen, _, _ := reflect.Select(cases); chosen == 0 {
				return nil
			}
		}
	}
}

// pageAllRecords is how many records of each partition one page read of a
// merged tail asks for.
func (s *tailScreen) pageAllRecords() int {
	return max(s.pageRecords()/max(len(s.nexts), 1), 10)
}

// pageAll reads the page after the buffer of a merged tail. Paging back
// needs one partition's offsets: the status line says so.
func (s *tailScreen) pageAll(kind readKind) tea.Cmd {
	if kind == readBack {
		return status("the merged tail pages back within its buffer; choose a partition with ] to read further back")
	}
	src, id, gen, topic, nexts := s.c.Src, s.id, s.gen, s.topic, slices.Clone(s.nexts)
	per := s.pageAllRecords()
	s.loading = true
	return func() tea.Msg {
		mr, err := readEvery(src, topic, nexts, per)
		if err != nil {
			return tailRecordsMsg{to: to{id}, gen: gen, kind: kind, err: err, merged: &mergedRead{}}
		}
		return tailRecordsMsg{to: to{id}, gen: gen, kind: kind, merged: mr}
	}
}

// onMerged applies one read of a merged tail.
func (s *tailScreen) onMerged(msg tailRecordsMsg) tea.Cmd {
	if msg.kind == readFollow {
		s.cancel = nil
	} else {
		s.loading = false
	}
	if msg.err != nil {
		if errors.Is(msg.err, engine.ErrOffsetOutOfRange) {
			// Retention removed what we were about to read: start over
			// from what is left.
			if s.live {
				return tea.Batch(status("retention deleted records the tail was about to read; following from the log start"), s.restartFromStart())
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
	mr := msg.merged
	before := s.hwms // per partition: records below were there before this read
	s.nexts, s.hwms, s.skipped = mr.nexts, mr.hwms, s.skipped+mr.skipped
	if len(mr.nexts) > s.parts {
		s.parts = len(mr.nexts) // the topic grew while followed
	}
	s.hwm = 0
	for _, h := range mr.hwms {
		s.hwm += h
	}
	// Keep the cursor on its record while rows are inserted and dropped.
	var at tailRec
	hadRow := s.rowCount() > 0
	if hadRow {
		at = s.rowRecord(s.cursor)
	}
	s.insertByTime(mr.recs)
	if msg.kind == readFollow {
		arrived := 0
		for _, r := range mr.recs {
			if r.P >= len(before) || r.Offset >= before[r.P] {
				arrived++
			}
		}
		s.countRate(arrived)
	}
	if len(mr.recs) == 0 {
		s.atEnd = true
	}
	switch {
	case s.live && msg.kind == readFollow:
		s.trimHead()
		s.cursor = s.rowCount() - 1
		s.clamp()
		return s.follow()
	default:
		s.trimHead()
	}
	if hadRow && msg.kind == readFwd {
		s.cursor = s.rowIndex(at)
	}
	s.clamp()
	if s.bottom && msg.kind == readFwd {
		for p, next := range mr.nexts {
			if next < mr.hwms[p] {
				return s.jumpBottom() // more than a page to go: read the last one
			}
		}
	}
	s.landBottom()
	return nil
}

// insertByTime adds records (in commit-time order) to the buffer. A record
// whose partition committed it before the newest buffered record of another
// goes to its place in time, never before a buffered record of its own
// partition.
func (s *tailScreen) insertByTime(rs []tailRec) {
	moved := false
	for _, r := range rs {
		c, n := copyRecord(r.Record)
		rec := tailRec{c, r.P}
		i := len(s.recs)
		for i > 0 && s.recs[i-1].Timestamp > rec.Timestamp && s.recs[i-1].P != rec.P {
			i--
		}
		s.bytes += n
		if i == len(s.recs) {
			s.recs = append(s.recs, rec)
			if s.shown != nil && s.match(rec) {
				s.shown = append(s.shown, i)
			}
			continue
		}
		s.recs = slices.Insert(s.recs, i, rec)
		moved = true
	}
	if moved {
		s.refilter()
	}
}

// rowIndex is the row of the record r (its partition and offset), or the
// last row when it is no longer buffered.
func (s *tailScreen) rowIndex(r tailRec) int {
	for i := s.rowCount() - 1; i >= 0; i-- {
		if x := s.rowRecord(i); x.P == r.P && x.Offset == r.Offset {
			return i
		}
	}
	return s.rowCount() - 1
}
