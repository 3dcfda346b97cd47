package codec

import (
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// EncodeOptions says how AppendBatch encodes a batch.
type EncodeOptions struct {
	// Codec compresses the records section: CodecNone (the zero value) or
	// CodecZstd.
	Codec Codec
	// Sparse writes a compacted batch: each record keeps its own
	// rec.Offset, which must be strictly increasing, at least the batch's
	// base and below base + 1<<31. Without it record i gets base+i.
	Sparse bool
	// Producer stamps the batch with the idempotent producer of its
	// records (the zero value: none).
	Producer ProducerStamp
}

// AppendBatch encodes recs as one batch with base offset base and appends it
// to dst, returning the extended slice.
//
// Record timestamps are absolute; the batch's firstTimestamp is the first
// record's and every other must lie within an int32 of milliseconds of it.
// Without opts.Sparse rec.Offset is ignored and record i gets base+i.
// Invalid input gives ErrInvalidBatch and a records section over
// MaxBatchBytes gives ErrTooLarge; either way dst is returned unchanged.
//
// dst's spare capacity must not hold the records' bytes: records decoded
// from a buffer cannot be re-encoded into that same buffer from its start.
func AppendBatch(dst []byte, base int64, recs []Record, opts EncodeOptions) ([]byte, error) {
	raw, err := rawSize(base, recs, opts)
	if err != nil {
		return dst, err
	}
	if raw > MaxBatchBytes {
		return dst, tooLargef("records section of %d bytes over the %d byte bound", raw, MaxBatchBytes)
	}
	start := len(dst)
	h := BatchHeader{
		Magic:          Magic,
		Version:        Version,
		Flags:          uint16(opts.Codec),
		BaseOffset:     base,
		FirstTimestamp: recs[0].Timestamp,
		LastTimestamp:  recs[len(recs)-1].Timestamp,
		RecordCount:    uint32(len(recs)),
		ProducerID:     opts.Producer.ID,
		ProducerEpoch:  opts.Producer.Epoch,
		BaseSequence:   opts.Producer.BaseSequence,
	}
	if opts.Sparse {
		h.Flags |= FlagSparse
	}
	switch opts.Codec {
	case CodecNone:
		dst = slices.Grow(dst, headerLen+int(raw))[:start+headerLen]
		dst = appendRecords(dst, &h, recs, opts.Sparse)
	case CodecZstd:
		buf := scratch.Get().(*[]byte)
		section := appendRecords(slices.Grow((*buf)[:0], int(raw)), &h, recs, opts.Sparse)
		dst = slices.Grow(dst, headerLen)[:start+headerLen]
		enc := encoders.get()
		dst = enc.EncodeAll(section, dst)
		encoders.put(enc)
		if cap(section) <= maxPooledScratch {
			*buf = section[:0]
			scratch.Put(buf)
		}
		if n := len(dst) - start - headerLen; n > MaxBatchBytes {
			return dst[:start], tooLargef("compressed records section of %d bytes over the %d byte bound", n, MaxBatchBytes)
		}
	default:
		return dst, invalidf("unknown codec %d", opts.Codec)
	}
	h.BatchLen = uint32(len(dst) - start - headerLen)
	batch := dst[start:]
	putHeader(batch, &h)
	binaryPutCRC(batch, checksum(batch))
	return dst, nil
}

// maxPooledScratch bounds the zstd staging buffers kept for reuse.
const maxPooledScratch = 8 << 20

// scratch holds *[]byte staging buffers for the uncompressed records section
// of zstd batches.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func binaryPutCRC(batch []byte, crc uint32) {
	binary.BigEndian.PutUint32(batch[offCRC:], crc)
}

// rawSize validates recs and returns the size of their uncompressed records
// section.
func rawSize(base int64, recs []Record, opts EncodeOptions) (int64, error) {
	if len(recs) == 0 {
		return 0, invalidf("no records")
	}
	if uint64(len(recs)) > math.MaxUint32 {
		return 0, invalidf("%d records, more than a batch can count", len(recs))
	}
	if base < 0 {
		return 0, invalidf("negative base offset %d", base)
	}
	span := int64(len(recs))
	if opts.Sparse {
		span = MaxSparseDelta
	}
	if base > math.MaxInt64-span {
		return 0, invalidf("base offset %d + %d overflows", base, span)
	}
	first := recs[0].Timestamp
	prev := int64(-1)
	var total int64
	for i := range recs {
		r := &recs[i]
		// The first test catches the subtraction overflowing int64.
		if d := r.Timestamp - first; (r.Timestamp^first)&(r.Timestamp^d) < 0 || d < math.MinInt32 || d > math.MaxInt32 {
			return 0, invalidf("record %d: timestamp %d is too far from the first record's %d for an int32 delta", i, r.Timestamp, first)
		}
		if opts.Sparse {
			d := r.Offset - base
			if d < 0 || d >= MaxSparseDelta {
				return 0, invalidf("record %d: offset %d outside [%d, %d) of a sparse batch", i, r.Offset, base, base+MaxSparseDelta)
			}
			if d <= prev {
				return 0, invalidf("record %d: offset %d not above the previous record's %d", i, r.Offset, base+prev)
			}
			prev = d
		}
		total += recLenSize + recordBody(r)
		if total > MaxBatchBytes {
			return total, nil // the caller reports ErrTooLarge
		}
	}
	return total, nil
}

// EncodedSize is the encoded length of r inside an uncompressed records
// section, its length field included.
func EncodedSize(r *Record) int { return int(recLenSize + recordBody(r)) }

// recordBody is the encoded length of r after its length field.
func recordBody(r *Record) int64 {
	n := int64(recFixedBody + len(r.Key) + len(r.Value))
	for i := range r.Headers {
		n += int64(headerFixed + len(r.Headers[i].Key) + len(r.Headers[i].Value))
	}
	return n
}

// appendRecords appends the encoded records of a validated batch.
func appendRecords(dst []byte, h *BatchHeader, recs []Record, sparse bool) []byte {
	be := binary.BigEndian
	for i := range recs {
		r := &recs[i]
		od := uint32(i)
		if sparse {
			od = uint32(r.Offset - h.BaseOffset)
		}
		dst = be.AppendUint32(dst, uint32(recordBody(r)))
		dst = append(dst, r.Attributes&attrKnown)
		dst = be.AppendUint32(dst, uint32(int32(r.Timestamp-h.FirstTimestamp)))
		dst = be.AppendUint32(dst, od)
		dst = appendBytes(dst, r.Key)
		dst = appendBytes(dst, r.Value)
		dst = be.AppendUint32(dst, uint32(len(r.Headers)))
		for j := range r.Headers {
			dst = be.AppendUint32(dst, uint32(len(r.Headers[j].Key)))
			dst = append(dst, r.Headers[j].Key...)
			dst = appendBytes(dst, r.Headers[j].Value)
		}
	}
	return dst
}

// appendBytes appends a u32 length and b, or the null marker for nil b.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, nullLen)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
