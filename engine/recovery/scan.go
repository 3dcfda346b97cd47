package recovery

import (
	"fmt"
	"io"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// maxOffset is the limit of the active segment: nothing follows it.
const maxOffset = segment.MaxOffset

// indexEntry is a sparse index entry in absolute terms.
type indexEntry struct {
	pos    int64 // byte position of the batch
	offset int64 // base offset of the batch
}

// scanInput describes the part of one segment to scan.
type scanInput struct {
	path     string
	r        io.ReaderAt
	size     int64 // file size
	base     int64 // segment base offset
	limit    int64 // exclusive end offset: the next segment's base, or maxOffset for the active one
	sealed   bool
	startPos int64 // first byte to scan (a batch boundary)
	startOff int64 // lowest base offset acceptable at startPos
	interval int64 // index interval
	// disk is the segment's on-disk index, validated against the data from
	// startPos on; lastIndexed is the position of its last entry before
	// startPos (-1: none).
	disk        []indexEntry
	lastIndexed int64
	buf         []byte // reusable read buffer
	// visit, when set, sees every batch and damaged region in file order;
	// an error stops the scan (scanOutput.err).
	visit func(Frame) error
	// progress, when set, is told the bytes read so far.
	progress func(done int64)
}

// Frame is one batch of a segment file, or one damaged region, as a file
// check visits them: segment.Reader's frame with recovery's view of a
// damaged region's end, and its verdict as the text reports carry.
type Frame struct {
	Position int64 // byte position in the file
	Size     int64 // bytes: the whole batch, or the damaged region
	// Header is the batch header; for a damaged region, the header at
	// Position when it parsed (HeaderOK).
	Header   codec.BatchHeader
	HeaderOK bool
	// Bytes is the whole batch (nil for a damaged region); valid only
	// during the visit.
	Bytes []byte
	// NextOffset is the offset after the batch (or, for a damaged region,
	// the first offset after it).
	NextOffset int64
	// Err is empty for a valid batch (header, CRC and offsets checked);
	// otherwise why the bytes at Position were rejected.
	Err string
}

// scanOutput is what scanning found.
type scanOutput struct {
	validEnd int64 // position after the last valid batch, or after the last corrupt range of a sealed segment
	next     int64 // offset after the last valid batch (startOff when none)
	// torn is set when the active segment ends in bytes with no valid batch
	// after them: they are cut at validEnd.
	torn    *Truncation
	corrupt []CorruptRange
	// index holds the rebuilt entries for the batches from startPos on.
	index []indexEntry
	// indexProblem is empty when the on-disk entries from startPos on agree
	// with the data; otherwise it says why the index must be rebuilt.
	indexProblem string
	batches      int64
	bytes        int64
	buf          []byte
	err          error // from visit
	// endsInBatch says the file ends with a valid batch (not with damage),
	// and lastSparse whether that batch is sparse (compacted).
	endsInBatch, lastSparse bool
}

// scanSegment checks every batch of one segment from in.startPos on with
// segment.Reader at LevelCRC: header, CRC, and a base offset at or above the
// previous batch's end and below the segment's limit. It never writes.
func scanSegment(in scanInput) scanOutput {
	rd := segment.NewReader(in.r, in.size, segment.ReaderOptions{
		Level: segment.LevelCRC, Start: in.startPos, Next: in.startOff, Limit: in.limit,
		Resync: true, Buf: in.buf, Progress: in.progress,
	})
	out := scanOutput{next: in.startOff}
	j := 0 // next disk entry to match
	for j < len(in.disk) && in.disk[j].pos < in.startPos {
		j++
	}
	lastIndexed := in.lastIndexed
	rebuiltLast := in.lastIndexed
	forceIndex := false // the batch after a corrupt range starts a new index run
	problem := func(format string, a ...any) {
		if out.indexProblem == "" {
			out.indexProblem = fmt.Sprintf(format, a...)
		}
	}
	for {
		fr, ok := rd.Next()
		if !ok {
			break
		}
		pos := fr.Position
		if fr.OK() {
			base := fr.Header.BaseOffset
			// The on-disk index.
			for j < len(in.disk) && in.disk[j].pos < pos {
				problem("index entry at position %d (offset %d) is not a batch boundary", in.disk[j].pos, in.disk[j].offset)
				j++
			}
			switch {
			case j < len(in.disk) && in.disk[j].pos == pos:
				if in.disk[j].offset != base {
					problem("index entry at position %d says offset %d, batch holds %d", pos, in.disk[j].offset, base)
				}
				lastIndexed = pos
				j++
			case lastIndexed < 0 || pos-lastIndexed >= in.interval:
				problem("index has no entry for the batch at position %d (offset %d)", pos, base)
				lastIndexed = pos
			}
			// The rebuilt index.
			if rebuiltLast < 0 || pos-rebuiltLast >= in.interval || forceIndex {
				out.index = append(out.index, indexEntry{pos: pos, offset: base})
				rebuiltLast = pos
				forceIndex = false
			}
			if in.visit != nil {
				if err := in.visit(Frame{Position: pos, Size: fr.Size, Header: fr.Header, HeaderOK: true, Bytes: fr.Bytes, NextOffset: fr.NextOffset}); err != nil {
					out.err = err
					break
				}
			}
			out.batches++
			out.bytes += fr.Size
			out.validEnd, out.next = pos+fr.Size, fr.NextOffset
			out.endsInBatch, out.lastSparse = pos+fr.Size >= in.size, fr.Header.Sparse()
			continue
		}
		// Bad bytes at pos; the reader looked for a valid batch after them.
		reason := fr.Err.Error()
		next := rd.NextOffset()
		if in.visit != nil {
			f := Frame{Position: pos, Size: fr.Size, Header: fr.Header, HeaderOK: fr.HeaderOK, NextOffset: in.limit, Err: reason}
			if fr.Resynced {
				f.NextOffset = fr.NextOffset
			} else if !in.sealed {
				f.NextOffset = next
			}
			if err := in.visit(f); err != nil {
				out.err = err
				break
			}
		}
		if fr.Resynced {
			out.corrupt = append(out.corrupt, CorruptRange{
				Segment: in.path, StartPos: pos, EndPos: pos + fr.Size,
				FirstOffset: next, EndOffset: fr.NextOffset, Err: reason,
			})
			out.bytes += fr.Size
			forceIndex = true
			continue
		}
		out.bytes += in.size - pos
		if in.sealed {
			// A sealed segment is complete by construction; whatever is wrong
			// at its end held offsets up to the next segment's base.
			out.corrupt = append(out.corrupt, CorruptRange{
				Segment: in.path, StartPos: pos, EndPos: in.size,
				FirstOffset: next, EndOffset: max(next, in.limit), Err: reason,
			})
			out.validEnd = in.size
		} else {
			out.torn = &Truncation{Segment: in.path, Position: pos, Bytes: in.size - pos, Reason: reason}
			out.validEnd = pos
		}
		break
	}
	if out.validEnd < in.startPos {
		out.validEnd = in.startPos
	}
	// Entries past the last valid batch: dropped by a truncation, otherwise
	// they point at nothing.
	if j < len(in.disk) && (out.torn == nil || in.disk[j].pos < out.torn.Position) {
		problem("index entry at position %d (offset %d) points past the last valid batch", in.disk[j].pos, in.disk[j].offset)
	}
	out.buf = rd.Buf()
	return out
}
