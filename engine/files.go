package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// The segment files of a partition, read-only, for the recovery inspector's
// frame browser and hex view: the UI reaches them only through these
// methods, which read with segment.Reader, the reader recovery uses, so a
// batch the browser calls ok is one recovery accepts.

// SegmentFrame is one batch of a segment file, or one damaged region, as
// the frame browser lists it.
type SegmentFrame struct {
	Pos  int64
	Size int64 // bytes up to the next frame
	// Header is the batch header; for a damaged region, the header at Pos
	// when it parsed (HeaderOK).
	Header   codec.BatchHeader
	HeaderOK bool
	// Damaged: the bytes at Pos are no batch recovery accepts (header,
	// CRC, offsets in order and inside the segment); Err says why.
	Damaged bool
	Err     string
	Raw     int64 // uncompressed records section; -1 unknown
}

// FramePage is one page of a segment's frames.
type FramePage struct {
	Frames []SegmentFrame
	Next   int64 // position after the last frame
	// NextOffset is the offset expected at Next: pass it back to read the
	// following page.
	NextOffset int64
	Size       int64 // the file's size
}

// SegmentFrames lists up to n frames of the segment with base offset base
// of topic's partition, from byte position from, where the lowest
// acceptable base offset is fromOffset (-1: unknown, the segment's base).
// Damaged regions reach to the next batch recovery would accept.
func (e *Engine) SegmentFrames(topic string, partition int, base, from, fromOffset int64, n int) (FramePage, error) {
	dir, err := e.partitionFiles(topic, partition)
	if err != nil {
		return FramePage{Next: from}, err
	}
	if from < 0 {
		return FramePage{Next: from}, fmt.Errorf("%w: frames from negative position %d", ErrBadPosition, from)
	}
	limit, err := segmentLimit(dir, base)
	if err != nil {
		return FramePage{Next: from}, err
	}
	f, err := os.Open(filepath.Join(dir, segment.LogFile(base)))
	if err != nil {
		return FramePage{Next: from}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FramePage{Next: from}, err
	}
	if fromOffset < base {
		fromOffset = base
	}
	rd := segment.NewReader(f, fi.Size(), segment.ReaderOptions{
		Level: segment.LevelCRC, Start: from, Next: fromOffset, Limit: limit, Resync: true,
	})
	page := FramePage{Size: fi.Size()}
	for len(page.Frames) < n {
		fr, ok := rd.Next()
		if !ok {
			break
		}
		sf := SegmentFrame{Pos: fr.Position, Size: fr.Size, Header: fr.Header, HeaderOK: fr.HeaderOK, Raw: -1}
		if fr.OK() {
			if raw, err := codec.RawLen(fr.Bytes); err == nil {
				sf.Raw = raw
			}
		} else {
			sf.Damaged, sf.Err = true, fr.Err.Error()
		}
		page.Frames = append(page.Frames, sf)
	}
	page.Next, page.NextOffset = rd.Position(), rd.NextOffset()
	if len(page.Frames) > 0 && page.Frames[len(page.Frames)-1].Damaged {
		page.Next = page.Frames[len(page.Frames)-1].Pos + page.Frames[len(page.Frames)-1].Size
	}
	return page, nil
}

// partitionFiles is the directory of a partition that exists: the topic
// name and partition are checked before they can reach a path.
func (e *Engine) partitionFiles(topic string, partition int) (string, error) {
	if _, err := e.partition(topic, partition); err != nil {
		return "", err
	}
	return e.partitionDir(topic, partition), nil
}

// segmentLimit is the exclusive end offset of the segment with base offset
// base in dir: the next segment's base, 0 (none) for the last one.
func segmentLimit(dir string, base int64) (int64, error) {
	bases, err := segment.List(dir)
	if err != nil {
		return 0, err
	}
	for i, b := range bases {
		if b == base && i+1 < len(bases) {
			return bases[i+1], nil
		}
	}
	return 0, nil
}

// segmentBytes reads up to n bytes of the segment with base offset base of
// topic's partition at byte position pos (fewer at the file end).
func (e *Engine) segmentBytes(topic string, partition int, base, pos, n int64) ([]byte, error) {
	dir, err := e.partitionFiles(topic, partition)
	if err != nil {
		return nil, err
	}
	if pos < 0 || n < 0 {
		return nil, fmt.Errorf("%w: %d bytes at position %d", ErrBadPosition, n, pos)
	}
	f, err := os.Open(filepath.Join(dir, segment.LogFile(base)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw := make([]byte, n)
	m, err := f.ReadAt(raw, pos)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("segment %s: read at %d: %w", segment.LogFile(base), pos, err)
	}
	return raw[:m], nil
}

// Annotations of batch bytes, produced by the codec (engine/codec/layout.go).
type (
	FieldView   = codec.FieldView
	RecordView  = codec.RecordView
	RecordsView = codec.RecordsView
)

// BatchHeaderLen is the size of a batch's fixed header.
const BatchHeaderLen = codec.HeaderLen

// BatchViewLimits bound what SegmentBatch reads and annotates (a batch may
// be up to 256 MiB).
type BatchViewLimits struct {
	Stored  int64 // bytes of a batch read from the file
	Damaged int64 // bytes read of a region that is no batch
	Section int   // bytes of the records section annotated
	Records int   // records annotated
}

// BatchView is one frame's bytes as stored with the codec's annotations.
type BatchView struct {
	Raw    []byte      // the frame's bytes from its position, cut at the limits
	Header []FieldView // every header field; Present says whether Raw holds it
	Torn   string      // why the header is torn (Raw shorter than it); "" otherwise
	// The records section, when the frame's header parsed: Section is what
	// Records annotates, the stored bytes for codec none, the start of their
	// decompression for zstd (Decompressed). SectionErr says why a zstd
	// section does not decompress.
	Section      []byte
	Decompressed bool
	SectionErr   string
	Records      RecordsView
}

// SegmentBatch reads the frame fr of the segment with base offset base of
// topic's partition (a frame SegmentFrames listed) and annotates it.
func (e *Engine) SegmentBatch(topic string, partition int, base int64, fr SegmentFrame, lim BatchViewLimits) (BatchView, error) {
	n := fr.Size
	if !fr.HeaderOK {
		n = min(n, lim.Damaged)
	}
	n = min(n, lim.Stored)
	raw, err := e.segmentBytes(topic, partition, base, fr.Pos, n)
	if err != nil {
		return BatchView{}, err
	}
	return viewBatch(raw, fr, lim), nil
}

func viewBatch(raw []byte, fr SegmentFrame, lim BatchViewLimits) BatchView {
	avail := int64(-1)
	if fr.HeaderOK {
		avail = fr.Size
	}
	v := BatchView{Raw: raw}
	v.Header, v.Torn = codec.ViewHeader(raw, avail)
	if len(raw) <= codec.HeaderLen || !fr.HeaderOK {
		return v
	}
	v.Section = raw[codec.HeaderLen:]
	if fr.Header.Codec() == codec.CodecZstd {
		// At most two sections' worth: no more is shown, and a corrupt
		// frame may claim up to 256 MiB.
		dec, err := codec.DecompressPrefix(v.Section, 2*int64(lim.Section))
		if err != nil {
			v.SectionErr = err.Error()
			return v
		}
		v.Section, v.Decompressed = dec, true
	}
	v.Records = codec.ViewRecords(v.Section, lim.Records, lim.Section)
	return v
}
