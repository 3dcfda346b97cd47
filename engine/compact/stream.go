package compact

import (
	"fmt"
	"io"
	"os"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// stream reads the batches of one segment file sequentially with
// segment.Reader at LevelDecode, decoding each into reused buffers. Memory
// stays at one batch plus the reader's window.
type stream struct {
	path string
	f    *os.File
	rd   *segment.Reader
}

// openStream reads the first limit bytes of the segment file at path.
func openStream(path string, limit int64, buf []byte, recs []codec.Record) (*stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("segment %s: %w", path, err)
	}
	rd := segment.NewReader(f, limit, segment.ReaderOptions{Level: segment.LevelDecode, Buf: buf, Records: recs})
	return &stream{path: path, f: f, rd: rd}, nil
}

// next decodes the next batch. It returns io.EOF at limit. The records are
// valid until the next call.
func (s *stream) next() (codec.Batch, int64, error) {
	fr, ok := s.rd.Next()
	if !ok {
		return codec.Batch{}, s.rd.Position(), io.EOF
	}
	if !fr.OK() {
		off := int64(-1)
		if fr.HeaderOK {
			off = fr.Header.BaseOffset
		}
		return codec.Batch{}, fr.Position, &codec.CorruptError{Path: s.path, Position: fr.Position, Offset: off, Err: fr.Err}
	}
	return fr.Batch, fr.Position, nil
}

// buffers returns the read buffer and record slice the stream decoded
// into, for the next stream to reuse.
func (s *stream) buffers() ([]byte, []codec.Record) { return s.rd.Buf(), s.rd.Records() }

func (s *stream) close() error { return s.f.Close() }
