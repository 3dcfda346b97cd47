package compact

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pulselog/pulse/engine/codec"
)

// readBufferBytes is the read-ahead of a segment stream.
const readBufferBytes = 1 << 20

// stream reads the batches of one segment file sequentially, decoding each
// into reused buffers. Memory stays at one batch plus the read-ahead.
type stream struct {
	path  string
	f     *os.File
	r     *bufio.Reader
	pos   int64 // position of the next batch
	limit int64 // bytes of the file to read
	buf   []byte
	recs  []codec.Record
}

func openStream(path string, limit int64, buf []byte, recs []codec.Record) (*stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	return &stream{path: path, f: f, r: bufio.NewReaderSize(f, readBufferBytes), limit: limit, buf: buf, recs: recs}, nil
}

// next decodes the next batch. It returns io.EOF at limit. The records are
// valid until the next call.
func (s *stream) next() (codec.Batch, int64, error) {
	if s.pos >= s.limit {
		return codec.Batch{}, s.pos, io.EOF
	}
	pos := s.pos
	if s.limit-pos < codec.HeaderLen {
		return codec.Batch{}, pos, s.corrupt(pos, fmt.Errorf("%w: %d bytes left, a batch header needs %d", codec.ErrTorn, s.limit-pos, codec.HeaderLen))
	}
	s.buf = grow(s.buf, codec.HeaderLen)
	if _, err := io.ReadFull(s.r, s.buf); err != nil {
		return codec.Batch{}, pos, s.corrupt(pos, errors.Join(codec.ErrTorn, err))
	}
	h, err := codec.ParseHeader(s.buf)
	if err != nil {
		return codec.Batch{}, pos, s.corrupt(pos, err)
	}
	if pos+h.Size() > s.limit {
		return codec.Batch{}, pos, s.corrupt(pos, fmt.Errorf("%w: batch of %d bytes overruns %d", codec.ErrTorn, h.Size(), s.limit))
	}
	s.buf = grow(s.buf, int(h.Size()))
	if _, err := io.ReadFull(s.r, s.buf[codec.HeaderLen:]); err != nil {
		return codec.Batch{}, pos, s.corrupt(pos, errors.Join(codec.ErrTorn, err))
	}
	b, err := codec.DecodeBatchInto(s.buf, s.recs[:0])
	if err != nil {
		return codec.Batch{}, pos, s.corrupt(pos, err)
	}
	s.recs = b.Records
	s.pos = pos + h.Size()
	return b, pos, nil
}

func (s *stream) corrupt(pos int64, err error) error {
	return &codec.CorruptError{Path: s.path, Position: pos, Offset: -1, Err: err}
}

func (s *stream) close() error { return s.f.Close() }

// grow returns buf resized to n bytes, keeping its contents and
// reallocating only when too small.
func grow(buf []byte, n int) []byte {
	if cap(buf) < n {
		nb := make([]byte, n, n+n/4)
		copy(nb, buf)
		return nb
	}
	return buf[:n]
}
