package recovery

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// fastPath restores the log from a snapshot that names the active segment on
// disk: the checkpointed prefix of the active segment and every sealed
// segment are checked against their index files without reading their
// records (checkEntries: every entry against the segment's bounds, the batch
// headers at the first and the last entry, then every header after the last
// entry to the end; a sealed segment that fails is scanned), and only the
// active segment's growth past the checkpoint is scanned. When the
// checkpointed prefix does not check out (a missing or damaged active index,
// or a snapshot that is simply wrong), the whole active segment is scanned:
// the sealed segments' restoration never depended on the snapshot.
func (r *runner) fastPath(snap Snapshot) error {
	active := r.segs[len(r.segs)-1]
	prefix, why := r.checkActivePrefix(active, snap)
	startPos, startOff := snap.ActiveSize, snap.LEO
	if why != "" {
		r.note("the snapshot's %d bytes of the active segment did not check out (%s): active segment scanned from the start", snap.ActiveSize, why)
		prefix, startPos, startOff = nil, 0, active.base
	}
	sealed := r.segs[:len(r.segs)-1]
	whys := r.checkAllSealed(sealed)
	for i, s := range sealed {
		if why := whys[i]; why != "" {
			r.note("%s: %s: segment scanned", filepath.Base(s.seg.Path()), why)
			if err := r.scan(s, 0, s.base, -1, nil); err != nil {
				return err
			}
			continue
		}
		r.rep.SegmentsChecked++
		s.end = s.limit
	}
	if why == "" && active.size == snap.ActiveSize {
		r.rep.Path = PathSnapshot
		r.rep.SegmentsChecked++
		active.end = snap.LEO
		if active.diskProblem != "" {
			// The whole entries checked out; the file holds more (a partial
			// entry, entries out of order): rewrite it from them.
			return r.rebuildIndex(active, prefix, active.diskProblem)
		}
		return nil
	}
	r.rep.Path = PathDelta
	lastIndexed := int64(-1)
	if len(prefix) > 0 {
		lastIndexed = prefix[len(prefix)-1].pos
	}
	return r.scan(active, startPos, startOff, lastIndexed, prefix)
}

// checkActivePrefix checks that [0, snap.ActiveSize) of the active segment
// is what the snapshot says: its index entries point at batch headers with
// the right offsets, and the batches after the last entry chain exactly to
// ActiveSize and end at snap.LEO. It returns the index entries of the prefix.
func (r *runner) checkActivePrefix(s *segState, snap Snapshot) ([]indexEntry, string) {
	var entries []indexEntry
	for _, e := range s.disk {
		if e.pos < snap.ActiveSize {
			entries = append(entries, e)
		}
	}
	if snap.ActiveSize == 0 {
		return nil, ""
	}
	if len(entries) == 0 && s.diskProblem != "" {
		return nil, s.diskProblem
	}
	if why := r.checkEntries(s, entries, snap.ActiveSize); why != "" {
		return nil, why
	}
	end, _, why := r.walkTail(s, entries[len(entries)-1], snap.ActiveSize)
	if why != "" {
		return nil, why
	}
	if end != snap.LEO {
		return nil, fmt.Sprintf("the checkpointed bytes end at offset %d, the snapshot says %d", end, snap.LEO)
	}
	return entries, ""
}

// checkAllSealed runs checkSealed on every sealed segment, a few at a time:
// on a large log the index reads and the few header reads of each segment
// are the bulk of the snapshot path, and on a cold page cache they wait on
// the device.
func (r *runner) checkAllSealed(segs []*segState) []string {
	whys := make([]string, len(segs))
	workers := min(runtime.GOMAXPROCS(0), 4, len(segs))
	if workers <= 1 {
		for i, s := range segs {
			whys[i] = r.checkSealed(s)
		}
		return whys
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(segs) {
					return
				}
				whys[i] = r.checkSealed(segs[i])
			}
		}()
	}
	wg.Wait()
	return whys
}

// checkSealed checks a sealed segment's index against its data without
// reading the records: checkEntries, then the headers after the last entry
// up to the file end, which must chain exactly to it (so a file that was cut
// or grew since it was sealed is noticed). It returns why the segment must
// be scanned, or "".
func (r *runner) checkSealed(s *segState) string {
	if s.diskProblem != "" {
		return s.diskProblem
	}
	if s.size == 0 {
		// A roll only seals a segment that holds a batch, and compaction
		// deletes a segment it empties: an empty sealed segment lost its
		// offsets (the scan reports them as a gap).
		if len(s.disk) > 0 {
			return "index entries for an empty segment"
		}
		return "an empty sealed segment"
	}
	if why := r.checkEntries(s, s.disk, s.size); why != "" {
		return why
	}
	next, sparse, why := r.walkTail(s, s.disk[len(s.disk)-1], s.size)
	if why == "" && !sparse && next < s.limit {
		return fmt.Sprintf("its last batch ends at offset %d, before the next segment's base %d", next, s.limit)
	}
	return why
}

// checkEntries checks a segment's index against its data while reading
// only two batch headers: every entry is checked without the data
// (ascending, the first at position 0, each offset within [base, limit),
// each position leaving room for a header before end), then the batch
// headers at the first and the last entry are read and must parse, hold the
// entry's offset and end by end. The headers between are left to reads
// (which check every batch they decode) and to `pulse verify`: on a cold
// page cache, reading one header every IndexIntervalBytes reads the whole
// store (docs/architecture.md, "What the snapshot fast path checks").
func (r *runner) checkEntries(s *segState, entries []indexEntry, end int64) string {
	if len(entries) == 0 {
		return "index is empty"
	}
	if entries[0].pos != 0 {
		return fmt.Sprintf("first index entry at position %d, not 0", entries[0].pos)
	}
	for i, e := range entries {
		if i > 0 && (e.pos < entries[i-1].pos+codec.HeaderLen || e.offset <= entries[i-1].offset) {
			return fmt.Sprintf("index entry %d (position %d, offset %d) does not ascend", i, e.pos, e.offset)
		}
		if e.offset < s.base || e.offset >= s.limit {
			return fmt.Sprintf("index entry %d names offset %d outside the segment [%d, %d)", i, e.offset, s.base, s.limit)
		}
		if e.pos+codec.HeaderLen > end {
			return fmt.Sprintf("index entry %d: batch header at position %d overruns %d", i, e.pos, end)
		}
	}
	hb := make([]byte, codec.HeaderLen)
	for _, i := range []int{0, len(entries) - 1} {
		e := entries[i]
		h, why := readHeader(s, hb, e.pos, end)
		if why != "" {
			return fmt.Sprintf("index entry %d: %s", i, why)
		}
		if h.BaseOffset != e.offset {
			return fmt.Sprintf("index entry %d says offset %d, the batch at position %d holds %d", i, e.offset, e.pos, h.BaseOffset)
		}
	}
	return ""
}

// walkTail follows the batch headers from the last index entry to end and
// checks that they chain exactly to end, that no batch past the interval
// went unindexed, and that every base offset lies in the segment. It returns
// the offset after the last batch and whether that batch is sparse
// (compacted).
func (r *runner) walkTail(s *segState, last indexEntry, end int64) (int64, bool, string) {
	rd := segment.NewReader(s.seg, end, segment.ReaderOptions{Level: segment.LevelHeader, Start: last.pos})
	next := last.offset
	sparse := false
	for fr, ok := rd.Next(); ok; fr, ok = rd.Next() {
		pos, h := fr.Position, fr.Header
		if !fr.OK() {
			return 0, false, fmt.Sprintf("batch at position %d: %v", pos, fr.Err)
		}
		if pos != last.pos {
			if pos-last.pos >= int64(r.opts.IndexIntervalBytes) {
				return 0, false, fmt.Sprintf("index is short: no entry for the batch at position %d", pos)
			}
			if h.BaseOffset < next {
				return 0, false, fmt.Sprintf("batch at position %d has offset %d below %d", pos, h.BaseOffset, next)
			}
		}
		if h.BaseOffset >= s.limit {
			return 0, false, fmt.Sprintf("batch at position %d has offset %d past the segment end %d", pos, h.BaseOffset, s.limit)
		}
		if n, ok := h.NextOffset(); ok {
			next = n
		} else {
			b := make([]byte, h.Size())
			if _, err := s.seg.ReadAt(b, pos); err != nil {
				return 0, false, fmt.Sprintf("read batch at position %d: %v", pos, err)
			}
			lastOff, err := codec.LastOffset(b)
			if err != nil {
				return 0, false, fmt.Sprintf("batch at position %d: %v", pos, err)
			}
			next = lastOff + 1
		}
		if next > s.limit {
			return 0, false, fmt.Sprintf("batch at position %d ends at offset %d, past the segment end %d", pos, next, s.limit)
		}
		sparse = h.Sparse()
	}
	return next, sparse, ""
}

// readHeader reads and parses the batch header at pos; the header, and the
// batch it heads, must end by end.
func readHeader(s *segState, hb []byte, pos, end int64) (codec.BatchHeader, string) {
	if pos < 0 || pos+codec.HeaderLen > end {
		return codec.BatchHeader{}, fmt.Sprintf("batch header at position %d overruns %d", pos, end)
	}
	if _, err := s.seg.ReadAt(hb, pos); err != nil {
		return codec.BatchHeader{}, fmt.Sprintf("read header at position %d: %v", pos, err)
	}
	h, err := codec.ParseHeader(hb)
	if err != nil {
		return h, fmt.Sprintf("header at position %d: %v", pos, err)
	}
	if pos+h.Size() > end {
		return h, fmt.Sprintf("batch at position %d overruns %d", pos, end)
	}
	return h, ""
}
