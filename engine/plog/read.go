package plog

import (
	"errors"
	"fmt"
	"sort"
	"unsafe"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// ReadResult is one read of a partition.
type ReadResult struct {
	Records  []codec.Record // read-only: they share memory with the read cache
	Next     int64          // offset to read from next
	HWM      int64          // high-watermark when the read started
	LogStart int64          // first offset still stored
	Skipped  int64          // offsets passed over inside corrupt ranges
	// Skips are the ranges Skipped adds up, in offset order: a caller
	// that hands on only part of Records (a push cut by its size) tells
	// the skipped offsets below its cut from those past it.
	Skips []Skip
}

// Skip is one range of offsets a read passed over: [First, End).
type Skip struct{ First, End int64 }

// skip notes the offsets [from, end) as passed over by res's read.
func (l *Log) skip(res *ReadResult, from, end int64) {
	res.Skipped += end - from
	res.Skips = append(res.Skips, Skip{First: from, End: end})
}

// Default read bounds, used when Read is given zero.
const (
	defaultReadRecords = 500
	defaultReadBytes   = 1 << 20
)

// Read returns records with offsets in [from, HWM), in offset order, at most
// maxRecords of them and about maxBytes (always at least one record when one
// is available). Offsets compaction removed are skipped; so are corrupt
// ranges, whose offsets are counted in Skipped. Reading below the log start
// begins at the log start; reading past the log end is ErrOffsetOutOfRange,
// and reading a closed log ErrClosed. The offsets skipped are counted in
// SkippedRecords (also those of a read that fails after them).
func (l *Log) Read(from int64, maxRecords, maxBytes int) (ReadResult, error) {
	res, err := l.ReadUncounted(from, maxRecords, maxBytes)
	l.skipped.Add(res.Skipped)
	return res, err
}

// ReadUncounted is Read without counting the offsets it skips in
// SkippedRecords: for a reader that hands on only some of what it reads
// (a Kafka fetch that reads again while it waits, or sends less than it
// read), which counts what it hands on with CountSkipped.
func (l *Log) ReadUncounted(from int64, maxRecords, maxBytes int) (ReadResult, error) {
	if maxRecords <= 0 {
		maxRecords = defaultReadRecords
	}
	if maxBytes <= 0 {
		maxBytes = defaultReadBytes
	}
	l.pinReads() // segments picked below stay open (maintenance.go)
	defer l.unpinReads()
	hwm := l.hwm.Load()
	res := ReadResult{Next: from, HWM: hwm, LogStart: l.logStart.Load()}
	if l.shut.Load() {
		return res, ErrClosed
	}
	if from < 0 {
		return res, fmt.Errorf("%w: offset %d is negative", ErrOffsetOutOfRange, from)
	}
	if leo := l.LEO(); from > leo {
		return res, fmt.Errorf("%w: offset %d is past the log end %d", ErrOffsetOutOfRange, from, leo)
	}
	if from < res.LogStart {
		from = res.LogStart
	}
	bytes := 0
	for from < hwm && len(res.Records) < maxRecords && bytes < maxBytes {
		from = l.skipGap(from, &res)
		if from >= hwm {
			break
		}
		st, nextBase := l.segmentFor(from)
		if st == nil {
			break
		}
		pos := l.cache.position(st.id, from)
		if pos < 0 {
			pos = indexedPosition(st, from)
		}
		limit := st.durable.Load()
		rd := batchReader(st, pos, limit, nextBase)
		full := false
		for pos < limit && from < hwm {
			if from = l.skipGap(from, &res); from >= hwm {
				break
			}
			b := l.cache.batch(st.id, pos)
			if b != nil {
				rd.Restart(b.next, b.last+1)
			} else {
				// Batches wholly before from are passed on their CRC, not
				// decoded (a damaged base offset or record count would
				// otherwise skip acked records silently).
				rd.SetDecodeFrom(from)
				fr, ok := rd.Next()
				if !ok {
					break
				}
				if !fr.OK() {
					if err := closedErr(fr.Err); err != nil {
						return res, fmt.Errorf("partition %s: read: %w", l.dir, err)
					}
					r, cerr := l.corruptAt(st, pos, from, limit, nextBase, frameError(st, &fr))
					if cerr != nil {
						return res, cerr
					}
					if r.EndOffset > from {
						l.skip(&res, from, r.EndOffset)
						from = r.EndOffset
					}
					pos = r.EndPos
					rd.Restart(pos, st.seg.Base())
					continue
				}
				if len(fr.Batch.Records) == 0 {
					pos += fr.Size
					continue
				}
				b = l.keepBatch(st, &fr)
			}
			for i := range b.records {
				rec := &b.records[i]
				if rec.Offset < from {
					continue
				}
				if rec.Offset >= hwm {
					break
				}
				n := codec.EncodedSize(rec)
				if len(res.Records) >= maxRecords || (len(res.Records) > 0 && bytes+n > maxBytes) {
					full = true
					break
				}
				res.Records = append(res.Records, *rec)
				bytes += n
				from = rec.Offset + 1
			}
			if full {
				l.cache.remember(st.id, from, pos)
				break
			}
			pos = b.next
			if b.last >= from {
				from = b.last + 1 // a sparse batch may end on removed offsets
			}
			l.cache.remember(st.id, from, pos)
		}
		if full || from >= hwm || pos < limit {
			break
		}
		if nextBase < 0 {
			break // end of the active segment
		}
		// The segment is exhausted: offsets up to the next segment's base
		// were removed by compaction (never past the HWM, which may still
		// cover a hidden tail), unless they are a lost range (a missing
		// segment), which is counted.
		from = l.skipGap(from, &res)
		from = min(max(from, nextBase), hwm)
	}
	res.Next = from
	return res, nil
}

// CountSkipped counts n offsets a ReadUncounted skipped, and its reader
// handed on as skipped, in SkippedRecords.
func (l *Log) CountSkipped(n int64) { l.skipped.Add(n) }

// skipGap moves from past a lost range recovery reported, noting the
// offsets skipped.
func (l *Log) skipGap(from int64, res *ReadResult) int64 {
	for _, g := range *l.gaps.Load() {
		if from >= g.FirstOffset && from < g.EndOffset {
			l.skip(res, from, g.EndOffset)
			from = g.EndOffset
		}
	}
	return from
}

// segmentFor returns the segment holding offset and the base of the
// segment after it (-1 for the active segment).
func (l *Log) segmentFor(offset int64) (*segState, int64) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].seg.Base() > offset }) - 1
	if i < 0 {
		if len(l.segs) == 0 {
			return nil, -1
		}
		i = 0
	}
	next := int64(-1)
	if i+1 < len(l.segs) {
		next = l.segs[i+1].seg.Base()
	}
	return l.segs[i], next
}

// decodedBatch is a batch decoded once and kept by the read cache.
type decodedBatch struct {
	records []codec.Record
	next    int64 // position of the following batch
	last    int64 // last offset in the batch
	size    int   // bytes held, for the cache bound
}

// batchReader returns the reader of st's batches from pos, a batch boundary
// (an index or cache position), up to the durable end limit; nextBase is
// the next segment's base (-1 for the active segment). It reads exactly the
// bytes of the batches it is asked for, into buffers the read cache may
// keep, and decodes them, with the checks recovery makes (header, CRC,
// offsets within the segment and, from the first batch on, in order).
func batchReader(st *segState, pos, limit, nextBase int64) *segment.Reader {
	end := nextBase
	if end < 0 {
		end = segment.MaxOffset
	}
	return segment.NewReader(st.seg, limit, segment.ReaderOptions{
		Level: segment.LevelDecode, Exact: true, Start: pos, Next: st.seg.Base(), Limit: end,
	})
}

// frameError is the *codec.CorruptError of a damaged frame of st.
func frameError(st *segState, fr *segment.Frame) error {
	off := int64(-1)
	if fr.HeaderOK {
		off = fr.Header.BaseOffset
	}
	return &codec.CorruptError{Path: st.seg.Path(), Position: fr.Position, Offset: off, Err: fr.Err}
}

// keepBatch puts the decoded batch of fr, read by a batchReader of st (so
// its bytes and records are not reused), into the read cache.
func (l *Log) keepBatch(st *segState, fr *segment.Frame) *decodedBatch {
	recs := fr.Batch.Records
	// The cache is bounded by what a decoded batch keeps alive: the
	// records section after decompression and the Record headers.
	size := int(unsafe.Sizeof(codec.Record{})) * cap(recs)
	if fr.Header.Codec() == codec.CodecNone {
		size += len(fr.Bytes)
	} else {
		for i := range recs {
			size += codec.EncodedSize(&recs[i])
		}
	}
	b := &decodedBatch{records: recs, next: fr.Position + fr.Size, last: recs[len(recs)-1].Offset, size: size}
	l.cache.putBatch(st.id, fr.Position, b)
	return b
}

// batchAt returns the decoded batch at pos of st, from the cache when it
// can; otherwise it reads, verifies and decodes it with a batchReader.
func (l *Log) batchAt(st *segState, pos int64) (*decodedBatch, error) {
	if b := l.cache.batch(st.id, pos); b != nil {
		return b, nil
	}
	fr, ok := batchReader(st, pos, st.durable.Load(), -1).Next()
	if !ok {
		return nil, &codec.CorruptError{Path: st.seg.Path(), Position: pos, Offset: -1,
			Err: fmt.Errorf("%w: no batch at the durable end %d", codec.ErrTorn, st.durable.Load())}
	}
	if !fr.OK() {
		return nil, frameError(st, &fr)
	}
	return l.keepBatch(st, &fr), nil
}

// readHeader reads and parses the batch header at pos of st, a batch that
// must fit in st's durable bytes.
func readHeader(st *segState, pos int64) (codec.BatchHeader, error) {
	fr, ok := segment.NewReader(st.seg, st.durable.Load(), segment.ReaderOptions{Level: segment.LevelHeader, Exact: true, Start: pos}).Next()
	if !ok {
		return codec.BatchHeader{}, &codec.CorruptError{Path: st.seg.Path(), Position: pos, Offset: -1,
			Err: fmt.Errorf("%w: no batch at the durable end %d", codec.ErrTorn, st.durable.Load())}
	}
	if !fr.OK() {
		return fr.Header, frameError(st, &fr)
	}
	return fr.Header, nil
}

// indexedPosition is where a read of from starts in st when no position is
// cached: the index entry at or before from, once the batch header there
// holds the entry's offset. Opening a log checks only the first and the last
// entry of each index against the data (engine/recovery's snapshot fast
// path, docs/architecture.md); an entry between them that does not check
// out is not trusted, and the read starts at the segment's first batch
// instead, so a damaged entry can neither skip records nor make good ones
// look corrupt.
func indexedPosition(st *segState, from int64) int64 {
	pos, off := st.seg.LookupEntry(from)
	if pos == 0 {
		return 0
	}
	if h, err := readHeader(st, pos); err != nil || h.BaseOffset != off {
		return 0
	}
	return pos
}

// segmentReader is what the read helpers need from a segment.
type segmentReader interface {
	ReadAt(p []byte, pos int64) (int, error)
	Path() string
}

// scanHeaders walks batch headers in [from, limit) with segment.Reader at
// LevelHeader, calling fn for each until it returns false. A header that
// does not parse or a batch that overruns limit ends the walk with a
// *codec.CorruptError.
func scanHeaders(seg segmentReader, from, limit int64, fn func(pos int64, h codec.BatchHeader) bool) error {
	rd := segment.NewReader(seg, limit, segment.ReaderOptions{Level: segment.LevelHeader, Start: from})
	for {
		fr, ok := rd.Next()
		if !ok {
			return nil
		}
		if !fr.OK() {
			return &codec.CorruptError{Path: seg.Path(), Position: fr.Position, Offset: -1, Err: fr.Err}
		}
		if !fn(fr.Position, fr.Header) {
			return nil
		}
	}
}

// closedErr is ErrClosed, wrapping err, when err comes from a segment file
// closed under a read or scan (the log closing meanwhile): that is no
// damage of the file, and nil is returned for every other err.
func closedErr(err error) error {
	if errors.Is(err, segment.ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}
