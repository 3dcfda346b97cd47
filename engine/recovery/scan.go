package recovery

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/pulselog/pulse/engine/codec"
)

// maxOffset is the limit of the active segment: nothing follows it.
const maxOffset = math.MaxInt64

// windowSize is how much of a segment the scanner reads per system call.
const windowSize = 4 << 20

// window gives mostly sequential access to a file's bytes through one reused
// buffer, so a scan costs one read per windowSize bytes.
type window struct {
	r    io.ReaderAt
	size int64  // file size
	buf  []byte // holds file bytes [off, off+n)
	off  int64
	n    int
	// progress, when set, is told the file position read up to.
	progress func(done int64)
}

func newWindow(r io.ReaderAt, size int64, buf []byte) *window {
	return &window{r: r, size: size, buf: buf}
}

// get returns file bytes [p, p+n). The slice is valid until the next call.
func (w *window) get(p int64, n int) ([]byte, error) {
	if p < 0 || n < 0 || p+int64(n) > w.size {
		return nil, fmt.Errorf("read [%d, %d) past the file end %d: %w", p, p+int64(n), w.size, io.ErrUnexpectedEOF)
	}
	if p >= w.off && p+int64(n) <= w.off+int64(w.n) {
		return w.buf[p-w.off : p-w.off+int64(n)], nil
	}
	want := int64(max(n, windowSize))
	want = min(want, w.size-p)
	if int64(cap(w.buf)) < want {
		w.buf = make([]byte, want)
	}
	w.buf = w.buf[:cap(w.buf)]
	// Keep the bytes already held past p, read the rest.
	kept := 0
	if p >= w.off && p < w.off+int64(w.n) {
		kept = copy(w.buf, w.buf[p-w.off:w.n])
	}
	m, err := w.r.ReadAt(w.buf[kept:want], p+int64(kept))
	if kept+m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		w.off, w.n = 0, 0
		return nil, fmt.Errorf("read [%d, %d): %w", p, p+int64(n), err)
	}
	w.off, w.n = p, kept+m
	if w.progress != nil {
		w.progress(w.off + int64(w.n))
	}
	return w.buf[:n], nil
}

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
// check visits them.
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

// scanSegment checks every batch of one segment from in.startPos on: header,
// CRC, and a base offset at or above the previous batch's end and below the
// segment's limit. It never writes.
func scanSegment(in scanInput) scanOutput {
	w := newWindow(in.r, in.size, in.buf)
	w.progress = in.progress
	out := scanOutput{next: in.startOff}
	pos, next := in.startPos, in.startOff
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
	for pos < in.size {
		hb, end, reason := checkBatch(w, pos, next, in.limit)
		if reason == "" {
			base := hb.BaseOffset
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
			size := hb.Size()
			if in.visit != nil {
				b, _ := w.get(pos, int(size))
				if err := in.visit(Frame{Position: pos, Size: size, Header: hb, HeaderOK: true, Bytes: b, NextOffset: end}); err != nil {
					out.err = err
					break
				}
			}
			out.batches++
			out.bytes += size
			pos += size
			next = end
			out.validEnd, out.next = pos, next
			out.endsInBatch, out.lastSparse = pos >= in.size, hb.Sparse()
			continue
		}
		// Bad bytes at pos: is there a valid batch after them?
		q, qBase, found := resync(w, pos+1, next, in.limit)
		if in.visit != nil {
			f := Frame{Position: pos, Size: in.size - pos, NextOffset: in.limit, Err: reason}
			if found {
				f.Size, f.NextOffset = q-pos, qBase
			} else if !in.sealed {
				f.NextOffset = next
			}
			if hb, err := w.get(pos, min(codec.HeaderLen, int(in.size-pos))); err == nil {
				f.Header, err = codec.ParseHeader(hb)
				f.HeaderOK = err == nil
			}
			if err := in.visit(f); err != nil {
				out.err = err
				break
			}
		}
		if found {
			out.corrupt = append(out.corrupt, CorruptRange{
				Segment: in.path, StartPos: pos, EndPos: q,
				FirstOffset: next, EndOffset: qBase, Err: reason,
			})
			out.bytes += q - pos
			pos = q
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
	for ; j < len(in.disk); j++ {
		if out.torn != nil && in.disk[j].pos >= out.torn.Position {
			break
		}
		problem("index entry at position %d (offset %d) points past the last valid batch", in.disk[j].pos, in.disk[j].offset)
		break
	}
	out.buf = w.buf
	return out
}

// checkBatch verifies the batch at pos: whole, CRC-correct, base offset in
// [next, limit), last offset below limit. It returns the offset after the
// batch, or a reason the bytes at pos are not an acceptable batch.
func checkBatch(w *window, pos, next, limit int64) (h codec.BatchHeader, end int64, reason string) {
	if left := w.size - pos; left < codec.HeaderLen {
		return h, 0, fmt.Sprintf("%d bytes at the file end, a batch header needs %d", left, codec.HeaderLen)
	}
	hb, err := w.get(pos, codec.HeaderLen)
	if err != nil {
		return h, 0, err.Error()
	}
	h, err = codec.ParseHeader(hb)
	if err != nil {
		return h, 0, err.Error()
	}
	if pos+h.Size() > w.size {
		return h, 0, fmt.Sprintf("batch of %d bytes at offset %d overruns the file end by %d bytes", h.Size(), h.BaseOffset, pos+h.Size()-w.size)
	}
	if h.BaseOffset < next {
		return h, 0, fmt.Sprintf("batch base offset %d is below the expected %d", h.BaseOffset, next)
	}
	if h.BaseOffset >= limit {
		return h, 0, fmt.Sprintf("batch base offset %d is at or past the segment end %d", h.BaseOffset, limit)
	}
	b, err := w.get(pos, int(h.Size()))
	if err != nil {
		return h, 0, err.Error()
	}
	if _, err := codec.VerifyBatch(b); err != nil {
		return h, 0, err.Error()
	}
	if n, ok := h.NextOffset(); ok {
		end = n
	} else {
		last, err := codec.LastOffset(b)
		if err != nil {
			return h, 0, err.Error()
		}
		end = last + 1
	}
	if end > limit {
		return h, 0, fmt.Sprintf("batch at offset %d ends at %d, past the segment end %d", h.BaseOffset, end, limit)
	}
	return h, end, ""
}

var magicVersion = []byte{codec.Magic, codec.Version}

// resync looks for the first position at or after from holding an
// acceptable batch (see checkBatch), byte by byte.
func resync(w *window, from, next, limit int64) (pos, base int64, found bool) {
	q := from
	for q+codec.HeaderLen <= w.size {
		n := int(min(int64(windowSize), w.size-q))
		chunk, err := w.get(q, n)
		if err != nil {
			return 0, 0, false
		}
		i := bytes.Index(chunk, magicVersion)
		if i < 0 {
			q += int64(max(n-1, 1))
			continue
		}
		q += int64(i)
		if !plausibleHeader(chunk[i:], w.size-q) {
			q++
			continue
		}
		if h, _, reason := checkBatch(w, q, next, limit); reason == "" {
			return q, h.BaseOffset, true
		}
		q++
	}
	return 0, 0, false
}

// plausibleHeader is a cheap filter for resync candidates, b starting at the
// candidate and left bytes of the file from there: the flags a header may
// hold and a batch that fits. checkBatch decides; this only spares it (and
// its error messages) the hopeless positions, so that a long damaged region
// costs a fast pass.
func plausibleHeader(b []byte, left int64) bool {
	if len(b) < codec.HeaderLen || left < codec.HeaderLen {
		return len(b) < codec.HeaderLen // not enough in this chunk to tell
	}
	flags := binary.BigEndian.Uint16(b[2:4])
	if flags&^(codec.FlagCodecMask|codec.FlagSparse) != 0 {
		return false
	}
	if c := codec.Codec(flags & codec.FlagCodecMask); c != codec.CodecNone && c != codec.CodecZstd {
		return false
	}
	n := int64(binary.BigEndian.Uint32(b[16:20]))
	return n <= codec.MaxBatchBytes && codec.HeaderLen+n <= left
}

// NextValidBatch finds the first position in [from, size) of r (a segment
// file of size bytes) holding a whole, CRC-correct batch whose base offset
// lies in [next, limit), and that batch's base offset. It is the search
// recovery uses to step over mid-file corruption, for the partition log
// (damage found at read) and the crash lab to use too.
func NextValidBatch(r io.ReaderAt, size, from, next, limit int64) (pos, base int64, found bool) {
	return resync(newWindow(r, size, nil), from, next, limit)
}
