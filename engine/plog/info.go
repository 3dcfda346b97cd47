package plog

import (
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/pulselog/pulse/engine/codec"
)

// SegmentInfo describes one segment (the engine re-exports it).
type SegmentInfo struct {
	Base           int64
	Next           int64 // exclusive end offset
	Bytes          int64
	Records        int64
	Batches        int64
	FirstTimestamp int64
	LastTimestamp  int64
	Codec          string // "none", "zstd" or "mixed"
	RawBytes       int64  // records sections before compression
	Sealed         bool
	Sparse         bool
	Path           string
}

// segStats accumulates per-segment figures lazily from batch headers, so
// that listing segments never decodes records.
type segStats struct {
	// mu guards every field.
	mu       sync.Mutex
	scanned  int64 // position up to which headers were folded in
	records  int64
	batches  int64
	firstTS  int64
	lastTS   int64
	raw      int64
	codecs   uint8 // bit per codec seen
	sparse   bool
	lastNext int64 // offset after the last batch seen
}

// Segments describes every segment, oldest first. Figures cover the durable
// part of each segment.
func (l *Log) Segments() ([]SegmentInfo, error) {
	l.pinReads() // segments picked below stay open (maintenance.go)
	defer l.unpinReads()
	l.segMu.RLock()
	segs := append([]*segState(nil), l.segs...)
	l.segMu.RUnlock()
	out := make([]SegmentInfo, 0, len(segs))
	for i, st := range segs {
		info, err := st.info()
		if err != nil {
			return nil, err
		}
		if i+1 < len(segs) {
			info.Next = segs[i+1].seg.Base()
			info.Sealed = true
		} else {
			info.Next = l.durable.Load()
		}
		out = append(out, info)
	}
	return out, nil
}

func (st *segState) info() (SegmentInfo, error) {
	s := &st.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := st.durable.Load()
	err := scanHeaders(st.seg, s.scanned, limit, func(pos int64, h codec.BatchHeader) bool {
		if s.batches == 0 {
			s.firstTS = h.FirstTimestamp
		}
		s.batches++
		s.records += int64(h.RecordCount)
		s.lastTS = h.LastTimestamp
		s.codecs |= 1 << h.Codec()
		s.sparse = s.sparse || h.Sparse()
		s.raw += rawSize(st.seg, pos, h)
		s.lastNext = h.BaseOffset + int64(h.RecordCount)
		s.scanned = pos + h.Size()
		return true
	})
	if err != nil {
		return SegmentInfo{}, err
	}
	info := SegmentInfo{
		Base: st.seg.Base(), Bytes: st.seg.Size(), Records: s.records, Batches: s.batches,
		FirstTimestamp: s.firstTS, LastTimestamp: s.lastTS, RawBytes: s.raw, Sparse: s.sparse,
		Path: st.seg.Path(),
	}
	switch s.codecs {
	case 0, 1 << codec.CodecNone:
		info.Codec = codec.CodecNone.String()
	case 1 << codec.CodecZstd:
		info.Codec = codec.CodecZstd.String()
	default:
		info.Codec = "mixed"
	}
	return info, nil
}

// rawSize is the uncompressed size of a batch's records section: its
// stored length, or for zstd the content size in the frame header.
func rawSize(seg segmentReader, pos int64, h codec.BatchHeader) int64 {
	if h.Codec() != codec.CodecZstd {
		return int64(h.BatchLen)
	}
	var fh [zstd.HeaderMaxSize]byte
	n := min(int(h.BatchLen), len(fh))
	if _, err := seg.ReadAt(fh[:n], pos+codec.HeaderLen); err != nil {
		return int64(h.BatchLen)
	}
	var zh zstd.Header
	if err := zh.Decode(fh[:n]); err != nil || !zh.HasFCS {
		return int64(h.BatchLen)
	}
	return int64(zh.FrameContentSize)
}

// OffsetForTimestamp returns the first visible offset whose commit
// timestamp is at or after ms, or the HWM when there is none. Commit
// timestamps are monotonic per partition, so segments before the one holding
// the answer are passed over by looking at one header each.
func (l *Log) OffsetForTimestamp(ms int64) (int64, error) {
	hwm := l.hwm.Load()
	l.pinReads() // segments picked below stay open (maintenance.go)
	defer l.unpinReads()
	l.segMu.RLock()
	segs := append([]*segState(nil), l.segs...)
	l.segMu.RUnlock()
	for i, st := range segs {
		if i+1 < len(segs) {
			// Skip this segment when the next one already starts before ms.
			if h, err := readHeader(segs[i+1], 0); err == nil && h.FirstTimestamp < ms {
				continue
			}
		}
		var found int64 = -1
		var ferr error
		err := scanHeaders(st.seg, 0, st.durable.Load(), func(pos int64, h codec.BatchHeader) bool {
			if h.BaseOffset >= hwm {
				return false
			}
			if h.LastTimestamp < ms {
				return true
			}
			b, err := l.batchAt(st, pos)
			if err != nil {
				ferr = err
				return false
			}
			for _, r := range b.records {
				if r.Timestamp >= ms && r.Offset < hwm {
					found = r.Offset
					return false
				}
			}
			return true
		})
		if err == nil {
			err = ferr
		}
		if err != nil {
			return 0, err
		}
		if found >= 0 {
			return found, nil
		}
	}
	return hwm, nil
}

// Size returns the number of segments and their total size in bytes.
func (l *Log) Size() (segments int, bytes int64) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	for _, st := range l.segs {
		bytes += st.seg.Size()
	}
	return len(l.segs), bytes
}
