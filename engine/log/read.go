package log

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
// begins at the log start; reading past the log end is ErrOffsetOutOfRange.
func (l *Log) Read(from int64, maxRecords, maxBytes int) (ReadResult, error) {
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
			pos = indexedPosition(st.seg, from)
		}
		limit := st.durable.Load()
		full := false
		for pos < limit && from < hwm {
			if from = l.skipGap(from, &res); from >= hwm {
				break
			}
			b := l.cache.batch(st.id, pos)
			var err error
			if b == nil {
				var hdr codec.BatchHeader
				hdr, err = readHeader(st.seg, pos)
				if err == nil && !hdr.Sparse() && hdr.BaseOffset+int64(hdr.RecordCount) <= from {
					// Wholly before from: skip without decoding, once its CRC
					// says the header can be trusted (a damaged base offset or
					// record count would otherwise skip acked records silently).
					if err = l.verifyAt(st, pos, hdr); err == nil {
						pos += hdr.Size()
						continue
					}
				}
				if err == nil {
					b, err = l.batchAt(st, pos, hdr)
				}
			}
			if err != nil {
				r, cerr := l.corruptAt(st, pos, from, limit, nextBase, err)
				if cerr != nil {
					return res, cerr
				}
				if r.EndOffset > from {
					res.Skipped += r.EndOffset - from
					l.skipped.Add(r.EndOffset - from)
					from = r.EndOffset
				}
				pos = r.EndPos
				continue
			}
			for i := range b.records {
				rec := &b.records[i]
				if rec.Offset < from {
					continue
				}
				if rec.Offset >= hwm {
					break
				}
				n := recordSize(rec)
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

// skipGap moves from past a lost range recovery reported, counting the
// offsets skipped.
func (l *Log) skipGap(from int64, res *ReadResult) int64 {
	for _, g := range *l.gaps.Load() {
		if from >= g.FirstOffset && from < g.EndOffset {
			res.Skipped += g.EndOffset - from
			l.skipped.Add(g.EndOffset - from)
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

// batchAt returns the decoded batch at pos, whose header hdr was already
// read, from the cache when it can; otherwise it reads the whole batch with
// one read and verifies and decodes it.
func (l *Log) batchAt(st *segState, pos int64, hdr codec.BatchHeader) (*decodedBatch, error) {
	if b := l.cache.batch(st.id, pos); b != nil {
		return b, nil
	}
	raw, err := readRaw(st, pos, hdr)
	if err != nil {
		return nil, err
	}
	batch, err := codec.DecodeBatch(raw)
	if err != nil {
		return nil, &codec.CorruptError{Path: st.seg.Path(), Position: pos, Offset: hdr.BaseOffset, Err: err}
	}
	// The cache is bounded by what a decoded batch keeps alive: the
	// records section after decompression and the Record headers.
	size := int(unsafe.Sizeof(codec.Record{})) * cap(batch.Records)
	if hdr.Codec() == codec.CodecNone {
		size += len(raw)
	} else {
		for i := range batch.Records {
			size += recordSize(&batch.Records[i])
		}
	}
	b := &decodedBatch{records: batch.Records, next: pos + hdr.Size(), size: size}
	if n := len(batch.Records); n > 0 {
		b.last = batch.Records[n-1].Offset
	} else {
		b.last = hdr.BaseOffset - 1
	}
	l.cache.putBatch(st.id, pos, b)
	return b, nil
}

// readRaw reads the whole batch at pos whose header is hdr, within the
// segment's durable bytes.
func readRaw(st *segState, pos int64, hdr codec.BatchHeader) ([]byte, error) {
	if end := st.durable.Load(); pos+hdr.Size() > end {
		return nil, &codec.CorruptError{Path: st.seg.Path(), Position: pos, Offset: hdr.BaseOffset,
			Err: fmt.Errorf("%w: batch of %d bytes overruns the durable end %d", codec.ErrTorn, hdr.Size(), end)}
	}
	raw := make([]byte, hdr.Size())
	if _, err := st.seg.ReadAt(raw, pos); err != nil {
		return nil, &codec.CorruptError{Path: st.seg.Path(), Position: pos, Offset: hdr.BaseOffset, Err: errors.Join(codec.ErrTorn, err)}
	}
	return raw, nil
}

// verifyAt checks the CRC of the batch at pos without decoding it.
func (l *Log) verifyAt(st *segState, pos int64, hdr codec.BatchHeader) error {
	raw, err := readRaw(st, pos, hdr)
	if err != nil {
		return err
	}
	if _, err := codec.VerifyBatch(raw); err != nil {
		return &codec.CorruptError{Path: st.seg.Path(), Position: pos, Offset: hdr.BaseOffset, Err: err}
	}
	return nil
}

// readHeader reads and parses the batch header at pos.
// indexedPosition is where a read of from starts in seg when no position is
// cached: the index entry at or before from, once the batch header there
// holds the entry's offset. Opening a log checks only the first and the last
// entry of each index against the data (engine/recovery's snapshot fast
// path, docs/architecture.md); an entry between them that does not check
// out is not trusted, and the read starts at the segment's first batch
// instead, so a damaged entry can neither skip records nor make good ones
// look corrupt.
func indexedPosition(seg *segment.Segment, from int64) int64 {
	pos, off := seg.LookupEntry(from)
	if pos == 0 {
		return 0
	}
	if h, err := readHeader(seg, pos); err != nil || h.BaseOffset != off {
		return 0
	}
	return pos
}

func readHeader(seg segmentReader, pos int64) (codec.BatchHeader, error) {
	var hb [codec.HeaderLen]byte
	if _, err := seg.ReadAt(hb[:], pos); err != nil {
		return codec.BatchHeader{}, &codec.CorruptError{Path: seg.Path(), Position: pos, Offset: -1, Err: errors.Join(codec.ErrTorn, err)}
	}
	h, err := codec.ParseHeader(hb[:])
	if err != nil {
		return h, &codec.CorruptError{Path: seg.Path(), Position: pos, Offset: -1, Err: err}
	}
	return h, nil
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

// recordSize is the encoded size of r inside a batch's records section.
func recordSize(r *codec.Record) int { return codec.EncodedSize(r) }
