package segment

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/pulselog/pulse/engine/codec"
)

// This file is the one reader of segment (.log) bytes: recovery, compaction,
// the crash lab, pulse verify / dump, the partition log's header walks and
// the recovery inspector's frame browser all walk a file through Reader, so
// that a batch one of them accepts is a batch all of them accept.

// Level is how much of each batch a Reader checks.
type Level uint8

const (
	// LevelHeader parses each header (codec.ParseHeader) and checks that the
	// batch fits in the file. It reads 52 bytes per batch and neither
	// checks the CRC nor the offsets: a walk of bytes already verified.
	LevelHeader Level = iota
	// LevelCRC checks what recovery checks: a whole batch whose CRC matches
	// (codec.VerifyBatch), whose base offset lies in [next, Limit), next
	// being the offset after the previous valid batch, and whose last
	// offset lies below Limit. Frame.Bytes holds the batch.
	LevelCRC
	// LevelDecode is LevelCRC with the records decoded into Frame.Batch.
	LevelDecode
)

// MaxOffset is the Limit of the active segment: no segment follows it.
const MaxOffset = math.MaxInt64

// windowSize is how much of a file the reader reads per system call.
const windowSize = 4 << 20

// ReaderOptions configure NewReader.
type ReaderOptions struct {
	Level Level
	// Start is the first byte position read (a batch boundary).
	Start int64
	// Next is the lowest base offset accepted at Start (LevelCRC and up):
	// the segment's base, or the offset after the batch before Start.
	Next int64
	// Limit is the exclusive end offset of the segment: the next segment's
	// base. Zero means MaxOffset (the active segment, or a lone file).
	Limit int64
	// Resync makes the reader step over bytes that are no acceptable batch
	// to the next position holding one (a search byte by byte), yielding
	// the bytes between as one damaged Frame. Without it the first damaged
	// Frame is the last one.
	Resync bool
	// Buf is a read buffer to reuse (Reader.Buf hands it back).
	Buf []byte
	// Records is a record slice LevelDecode reuses.
	Records []codec.Record
	// Progress, when set, is told the file position read up to.
	Progress func(done int64)
	// Exact makes the reader read only the bytes it checks, each into a
	// new buffer: a batch's header, then the batch (for a point read from
	// a position the index or a cache gave, where the 4 MiB window would
	// read far more than is used). Frame.Bytes and Frame.Batch's records
	// then belong to the caller: the reader never reuses them. Buf and
	// Records are ignored.
	Exact bool
	// DecodeFrom (LevelDecode): a batch that ends at or below DecodeFrom,
	// as its header says (not a sparse batch), is checked as at LevelCRC
	// and not decoded (Frame.Batch stays empty): a read from an offset
	// inside a segment passes the batches before it without decoding them.
	DecodeFrom int64
}

// Frame is one batch of a segment file, or one damaged region: the reader's
// verdict on the bytes at Position.
type Frame struct {
	Position int64 // byte position in the file
	// Size is the whole batch's length; for a damaged region, the bytes up
	// to the next acceptable batch (Resynced) or to the file end.
	Size int64
	// Header is the batch header. For a damaged region it holds the header
	// at Position when one parsed (HeaderOK), for display.
	Header   codec.BatchHeader
	HeaderOK bool
	// Bytes is the whole batch at LevelCRC and LevelDecode (nil for a damaged
	// region and at LevelHeader); valid until the next call of Next.
	Bytes []byte
	// Batch is the decoded batch at LevelDecode; its records are valid until
	// the next call of Next.
	Batch codec.Batch
	// NextOffset is the offset after the batch (at LevelHeader, as its
	// header says; 0 for a sparse batch). For a damaged region: the base
	// offset of the batch after it when Resynced, otherwise the offset
	// expected at Position.
	NextOffset int64
	// Resynced: the damaged region ends at an acceptable batch.
	Resynced bool
	// Err is nil for an acceptable batch; otherwise why the bytes at
	// Position were rejected. It wraps codec.ErrTorn, codec.ErrChecksum or
	// codec.ErrCorrupt (errors.Is), or is the read error that stopped the
	// check.
	Err error
}

// OK reports whether the frame is an acceptable batch.
func (f *Frame) OK() bool { return f.Err == nil }

// Reader walks the batches of one segment file in order. It reads the file
// through one reused window, so a walk costs about one read per 4 MiB (or,
// with Exact, two reads per batch: its header, then the batch).
type Reader struct {
	w     *window
	opts  ReaderOptions
	pos   int64
	next  int64 // lowest acceptable base offset at pos
	limit int64
	done  bool
	recs  []codec.Record
}

// NewReader reads the segment bytes of r, a file of size bytes.
func NewReader(r io.ReaderAt, size int64, opts ReaderOptions) *Reader {
	w := &window{r: r, size: size, buf: opts.Buf, progress: opts.Progress, ahead: windowSize}
	if opts.Level == LevelHeader || opts.Exact {
		// A header walk reads 52 bytes per batch, not the batches between.
		w.ahead = 0
	}
	if opts.Exact {
		w.buf, w.own = nil, true
		opts.Records = nil
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = MaxOffset
	}
	return &Reader{w: w, opts: opts, pos: opts.Start, next: opts.Next, limit: limit, recs: opts.Records}
}

// Position is where the next frame starts.
func (r *Reader) Position() int64 { return r.pos }

// NextOffset is the offset after the last acceptable batch (Next when none).
func (r *Reader) NextOffset() int64 { return r.next }

// Restart makes the next frame start at pos, a batch boundary (an index or
// cache position), with next the lowest acceptable base offset there (the
// segment's base when nothing better is known). It also resumes a walk that
// ended at a damaged frame.
func (r *Reader) Restart(pos, next int64) {
	r.pos, r.next, r.done = pos, next, false
}

// SetDecodeFrom changes ReaderOptions.DecodeFrom.
func (r *Reader) SetDecodeFrom(offset int64) { r.opts.DecodeFrom = offset }

// Buf returns the read buffer, for the next Reader to reuse.
func (r *Reader) Buf() []byte { return r.w.buf }

// Records returns the record slice LevelDecode decoded into, to reuse.
func (r *Reader) Records() []codec.Record { return r.recs }

// Next returns the next frame, and false at the end of the file or after a
// damaged frame the reader could not step over.
func (r *Reader) Next() (Frame, bool) {
	if r.done || r.pos >= r.w.size {
		r.done = true
		return Frame{}, false
	}
	pos := r.pos
	f := r.check(pos, r.next)
	if f.Err == nil {
		r.pos += f.Size
		if r.opts.Level >= LevelCRC || f.NextOffset > 0 {
			r.next = f.NextOffset
		}
		return f, true
	}
	// Bad bytes at pos: is there an acceptable batch after them?
	dmg := Frame{Position: pos, Size: r.w.size - pos, NextOffset: r.next, Err: f.Err}
	if r.opts.Resync {
		if q, base, found := r.resync(pos + 1); found {
			dmg.Size, dmg.NextOffset, dmg.Resynced = q-pos, base, true
		}
	}
	if hb, err := r.w.get(pos, min(codec.HeaderLen, int(r.w.size-pos))); err == nil {
		var herr error
		dmg.Header, herr = codec.ParseHeader(hb)
		dmg.HeaderOK = herr == nil
	}
	if dmg.Resynced {
		r.pos += dmg.Size
	} else {
		r.done = true
	}
	return dmg, true
}

// verdict is a reader's reason for rejecting bytes, wrapping the codec
// sentinel it falls under.
type verdict struct {
	cause error
	text  string
}

func (v *verdict) Error() string { return v.text }
func (v *verdict) Unwrap() error { return v.cause }

func reject(cause error, format string, a ...any) error {
	return &verdict{cause: cause, text: fmt.Sprintf(format, a...)}
}

// check returns the frame of the batch at pos when it is acceptable with
// next the lowest acceptable base offset, or a frame with Err set.
func (r *Reader) check(pos, next int64) Frame {
	w := r.w
	f := Frame{Position: pos}
	if left := w.size - pos; left < codec.HeaderLen {
		f.Err = reject(codec.ErrTorn, "%d bytes at the file end, a batch header needs %d", left, codec.HeaderLen)
		return f
	}
	hb, err := w.get(pos, codec.HeaderLen)
	if err != nil {
		f.Err = err
		return f
	}
	h, err := codec.ParseHeader(hb)
	f.Header = h
	if err != nil {
		f.Err = err
		return f
	}
	if pos+h.Size() > w.size {
		f.Err = reject(codec.ErrTorn, "batch of %d bytes at offset %d overruns the file end by %d bytes", h.Size(), h.BaseOffset, pos+h.Size()-w.size)
		return f
	}
	f.HeaderOK, f.Size = true, h.Size()
	if r.opts.Level == LevelHeader {
		f.NextOffset, _ = h.NextOffset()
		return f
	}
	if h.BaseOffset < next {
		f.Err = reject(codec.ErrCorrupt, "batch base offset %d is below the expected %d", h.BaseOffset, next)
		return f
	}
	if h.BaseOffset >= r.limit {
		f.Err = reject(codec.ErrCorrupt, "batch base offset %d is at or past the segment end %d", h.BaseOffset, r.limit)
		return f
	}
	b, err := w.get(pos, int(h.Size()))
	if err != nil {
		f.Err = err
		return f
	}
	decode := r.opts.Level == LevelDecode
	if n, ok := h.NextOffset(); decode && ok && n <= r.opts.DecodeFrom {
		decode = false
	}
	if !decode {
		if _, err := codec.VerifyBatch(b); err != nil {
			f.Err = err
			return f
		}
	}
	var end int64
	switch {
	case decode:
		// DecodeBatchInto verifies the CRC first: one pass over the bytes.
		batch, err := codec.DecodeBatchInto(b, r.recs[:0])
		if err != nil {
			f.Err = err
			return f
		}
		if !r.opts.Exact {
			r.recs = batch.Records
		}
		f.Batch = batch
		end = batch.Records[len(batch.Records)-1].Offset + 1
		if n, ok := h.NextOffset(); ok {
			end = n
		}
	default:
		if n, ok := h.NextOffset(); ok {
			end = n
		} else {
			last, err := codec.LastOffset(b)
			if err != nil {
				f.Err = err
				return f
			}
			end = last + 1
		}
	}
	if end > r.limit {
		f.Err = reject(codec.ErrCorrupt, "batch at offset %d ends at %d, past the segment end %d", h.BaseOffset, end, r.limit)
		return f
	}
	f.Bytes, f.NextOffset = b, end
	return f
}

var magicVersion = []byte{codec.Magic, codec.Version}

// resync looks for the first position at or after from holding an
// acceptable batch (see check), byte by byte, and its base offset.
func (r *Reader) resync(from int64) (pos, base int64, found bool) {
	w := r.w
	// A header-level walk resyncs on what recovery accepts: a header is no
	// reason to trust the bytes after damage.
	level := r.opts.Level
	if level == LevelHeader {
		r.opts.Level = LevelCRC
		defer func() { r.opts.Level = level }()
	}
	ahead := w.ahead
	w.ahead = windowSize
	defer func() { w.ahead = ahead }()
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
		if !codec.PlausibleHeader(chunk[i:], w.size-q) {
			q++
			continue
		}
		if f := r.check(q, r.next); f.Err == nil {
			return q, f.Header.BaseOffset, true
		}
		q++
	}
	return 0, 0, false
}

// NextValidBatch finds the first position in [from, size) of r (a segment
// file of size bytes) holding a batch Reader accepts at LevelCRC whose base
// offset lies in [next, limit), and that batch's base offset. It is the
// search the Reader's Resync makes, for the partition log (damage found at
// read) to step over mid-file corruption the same way recovery does.
func NextValidBatch(r io.ReaderAt, size, from, next, limit int64) (pos, base int64, found bool) {
	rd := NewReader(r, size, ReaderOptions{Level: LevelCRC, Next: next, Limit: limit})
	return rd.resync(from)
}

// window gives mostly sequential access to a file's bytes through one reused
// buffer, so a walk costs one read per windowSize bytes.
type window struct {
	r    io.ReaderAt
	size int64  // file size
	buf  []byte // holds file bytes [off, off+n)
	off  int64
	n    int
	// progress, when set, is told the file position read up to.
	progress func(done int64)
	// ahead is how much get reads at least: windowSize, or 0 to read
	// exactly what is asked.
	ahead int
	// own: every read goes to a new buffer, so slices handed out stay
	// valid (Exact).
	own bool
}

// get returns file bytes [p, p+n). The slice is valid until the next call.
func (w *window) get(p int64, n int) ([]byte, error) {
	if p < 0 || n < 0 || p+int64(n) > w.size {
		return nil, fmt.Errorf("read [%d, %d) past the file end %d: %w", p, p+int64(n), w.size, io.ErrUnexpectedEOF)
	}
	if p >= w.off && p+int64(n) <= w.off+int64(w.n) {
		return w.buf[p-w.off : p-w.off+int64(n)], nil
	}
	want := int64(max(n, w.ahead))
	want = min(want, w.size-p)
	old := w.buf
	if w.own || int64(cap(w.buf)) < want {
		w.buf = make([]byte, want)
	}
	w.buf = w.buf[:cap(w.buf)]
	// Keep the bytes already held past p, read the rest.
	kept := 0
	if p >= w.off && p < w.off+int64(w.n) {
		kept = copy(w.buf, old[p-w.off:w.n])
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
