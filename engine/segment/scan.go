package segment

import (
	"errors"
	"fmt"
	"io"

	"github.com/pulselog/pulse/engine/codec"
)

// scanChunk is how much of the .log file Scan reads at a time.
const scanChunk = 1 << 20

// Scan walks the batches from position from to Size, checking each one's
// header and CRC (codec.VerifyBatch) and calling fn with its position,
// header and bytes. raw is only valid during the call: Scan reuses its
// buffer. The walk stops at the first batch that is torn or corrupt,
// returning a *codec.CorruptError with its position, or at the first error
// fn returns, which Scan returns as it is.
func (s *Segment) Scan(from int64, fn func(pos int64, h codec.BatchHeader, raw []byte) error) error {
	end := s.Size()
	if from < 0 {
		return fmt.Errorf("segment %s: scan from negative position %d", s.Path(), from)
	}
	r := chunkReader{s: s, end: end}
	for pos := from; pos < end; {
		hb, err := r.get(pos, codec.HeaderLen)
		if err != nil {
			return err
		}
		h, err := codec.ParseHeader(hb)
		if err != nil {
			return s.corrupt(pos, -1, err)
		}
		if pos+h.Size() > end {
			return s.corrupt(pos, h.BaseOffset, fmt.Errorf("%w: batch of %d bytes at position %d overruns the segment end %d", codec.ErrTorn, h.Size(), pos, end))
		}
		raw, err := r.get(pos, int(h.Size()))
		if err != nil {
			return err
		}
		if _, err := codec.VerifyBatch(raw); err != nil {
			return s.corrupt(pos, h.BaseOffset, err)
		}
		if err := fn(pos, h, raw); err != nil {
			return err
		}
		pos += h.Size()
	}
	return nil
}

// chunkReader serves byte ranges of a segment from large sequential reads.
type chunkReader struct {
	s     *Segment
	end   int64
	buf   []byte
	start int64 // file position of buf[0]
}

// get returns the n bytes at pos, which must lie below r.end.
func (r *chunkReader) get(pos int64, n int) ([]byte, error) {
	if pos+int64(n) > r.end {
		return nil, r.s.corrupt(pos, -1, fmt.Errorf("%w: %d bytes at position %d overrun the segment end %d", codec.ErrTorn, n, pos, r.end))
	}
	if pos >= r.start && pos+int64(n) <= r.start+int64(len(r.buf)) {
		off := pos - r.start
		return r.buf[off : off+int64(n)], nil
	}
	want := int(min(int64(max(n, scanChunk)), r.end-pos))
	r.buf = grow(r.buf, want)
	r.start = pos
	m, err := r.s.ReadAt(r.buf, pos)
	r.buf = r.buf[:m]
	if m < n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, r.s.corrupt(pos, -1, fmt.Errorf("%w: file ends before position %d", codec.ErrTorn, pos+int64(n)))
		}
		return nil, fmt.Errorf("segment %s: read at position %d: %w", r.s.Path(), pos, err)
	}
	return r.buf[:n], nil
}
