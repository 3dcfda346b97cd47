package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// Batch is one decoded batch.
type Batch struct {
	Header  BatchHeader
	Records []Record // alias the decoded bytes; see the package doc
}

// ParseHeader decodes and checks the fixed header at the start of b: magic,
// version, flags (no unknown bit, a known codec), the batchLen bound, a
// non-negative base offset and a recordCount that is at least 1 and can fit
// the records section. It does not look past the header and does not check
// the CRC. b shorter than HeaderLen gives ErrTorn. On any other error the
// returned header still holds the fields as read, for display.
func ParseHeader(b []byte) (BatchHeader, error) {
	if len(b) < headerLen {
		return BatchHeader{}, tornf("%d bytes, header needs %d", len(b), headerLen)
	}
	h := readHeader(b)
	if err := checkHeader(&h); err != nil {
		return h, err
	}
	return h, nil
}

// PlausibleHeader is a cheap filter for positions that might start a batch
// while searching past damage: b starts at the candidate (at least HeaderLen
// bytes of it, or whatever the caller holds) and left bytes of the file
// follow from there. It checks the flags and that batchLen fits; ParseHeader
// and VerifyBatch decide. With fewer than HeaderLen bytes in b it says yes
// when the file has more (the caller must look closer) and no otherwise.
func PlausibleHeader(b []byte, left int64) bool {
	if len(b) < headerLen || left < headerLen {
		return len(b) < headerLen
	}
	flags := binary.BigEndian.Uint16(b[offFlags:])
	if flags&^knownFlags != 0 {
		return false
	}
	if c := Codec(flags & FlagCodecMask); c != CodecNone && c != CodecZstd {
		return false
	}
	n := int64(binary.BigEndian.Uint32(b[offBatchLen:]))
	return n <= MaxBatchBytes && headerLen+n <= left
}

func checkHeader(h *BatchHeader) error {
	switch {
	case h.Magic != Magic:
		return corruptf("bad magic 0x%02x, want 0x%02x", h.Magic, Magic)
	case h.Version != Version:
		return corruptf("unsupported version 0x%02x, want 0x%02x", h.Version, Version)
	case h.Flags&^knownFlags != 0:
		return corruptf("unknown flag bits 0x%04x in flags 0x%04x", h.Flags&^knownFlags, h.Flags)
	case h.Codec() != CodecNone && h.Codec() != CodecZstd:
		return corruptf("unknown codec %d in flags 0x%04x", h.Codec(), h.Flags)
	case h.BatchLen > MaxBatchBytes:
		return fmt.Errorf("codec: %w: %w: batchLen %d over the %d byte bound", ErrCorrupt, ErrTooLarge, h.BatchLen, MaxBatchBytes)
	}
	if err := checkSpan(h); err != nil {
		return err
	}
	limit := uint64(MaxBatchBytes)
	if h.Codec() == CodecNone {
		limit = uint64(h.BatchLen)
	}
	if uint64(h.RecordCount)*minRecordLen > limit {
		return corruptf("recordCount %d cannot fit in %d bytes of records", h.RecordCount, limit)
	}
	return nil
}

// checkSpan checks the offsets a header describes: a non-negative base, at
// least one record, and no offset past math.MaxInt64.
func checkSpan(h *BatchHeader) error {
	switch {
	case h.BaseOffset < 0:
		return corruptf("negative base offset %d", h.BaseOffset)
	case h.RecordCount == 0:
		return corruptf("recordCount is 0")
	}
	span := int64(h.RecordCount)
	if h.Sparse() {
		span = MaxSparseDelta
	}
	if h.BaseOffset > math.MaxInt64-span {
		return corruptf("base offset %d + %d overflows", h.BaseOffset, span)
	}
	return nil
}

// VerifyBatch checks that b is exactly one whole batch with a valid header
// and CRC, without decompressing or decoding records. A b shorter than the
// header or than header + batchLen gives ErrTorn; longer gives ErrCorrupt.
func VerifyBatch(b []byte) (BatchHeader, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if size := h.Size(); int64(len(b)) != size {
		if int64(len(b)) < size {
			return h, tornf("%d bytes, batch at offset %d needs %d", len(b), h.BaseOffset, size)
		}
		return h, corruptf("%d bytes after the batch at offset %d", int64(len(b))-size, h.BaseOffset)
	}
	if sum := checksum(b); sum != h.CRC {
		return h, fmt.Errorf("codec: %w: batch at offset %d: stored crc32c 0x%08x, computed 0x%08x", ErrChecksum, h.BaseOffset, h.CRC, sum)
	}
	return h, nil
}

// DecodeBatch verifies (VerifyBatch) and decodes one whole batch. The
// records alias b (codec none) or a fresh decompression buffer (zstd).
func DecodeBatch(b []byte) (Batch, error) {
	return DecodeBatchInto(b, nil)
}

// DecodeBatchInto is DecodeBatch appending the records to dst[:0], so a
// caller decoding many batches can reuse one []Record. On error the returned
// Batch holds the header (when it parsed) and no records.
func DecodeBatchInto(b []byte, dst []Record) (Batch, error) {
	h, err := VerifyBatch(b)
	if err != nil {
		return Batch{Header: h}, err
	}
	sec, err := recordsSection(b, &h)
	if err != nil {
		return Batch{Header: h}, err
	}
	recs, err := decodeRecords(sec, &h, dst)
	if err != nil {
		return Batch{Header: h}, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
	}
	return Batch{Header: h, Records: recs}, nil
}

// LastOffset returns the offset of the last record of the whole batch b,
// after verifying it. For an ordinary batch that comes from the header; a
// sparse batch is decoded.
func LastOffset(b []byte) (int64, error) {
	h, err := VerifyBatch(b)
	if err != nil {
		return 0, err
	}
	if next, ok := h.NextOffset(); ok {
		return next - 1, nil
	}
	batch, err := DecodeBatchInto(b, nil)
	if err != nil {
		return 0, err
	}
	return batch.Records[len(batch.Records)-1].Offset, nil
}

// RawLen returns the length of b's records section before compression: the
// batchLen for codec none, the zstd frame's declared content size for zstd.
// b must hold the header and the start of the records section; the CRC is not
// checked. It is what a compression ratio is computed from.
func RawLen(b []byte) (int64, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return 0, err
	}
	if h.Codec() == CodecNone {
		return int64(h.BatchLen), nil
	}
	end := min(int64(len(b)), h.Size())
	fcs, err := frameContentSize(b[headerLen:end])
	if err != nil {
		return 0, err
	}
	return int64(fcs), nil
}

// recordsSection returns the uncompressed records section of a verified batch.
func recordsSection(b []byte, h *BatchHeader) ([]byte, error) {
	sec := b[headerLen:h.Size()]
	if h.Codec() == CodecNone {
		return sec, nil
	}
	fcs, err := frameContentSize(sec)
	if err != nil {
		return nil, err
	}
	if fcs < uint64(h.RecordCount)*minRecordLen {
		return nil, corruptf("zstd content size %d cannot hold %d records", fcs, h.RecordCount)
	}
	dec := decoders.get()
	out, err := dec.DecodeAll(sec, make([]byte, 0, fcs))
	decoders.put(dec)
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, fmt.Errorf("codec: %w: %w: zstd content over %d bytes", ErrCorrupt, ErrTooLarge, MaxBatchBytes)
		}
		return nil, corruptf("zstd: %v", err)
	}
	if uint64(len(out)) != fcs {
		return nil, corruptf("zstd frame declared %d bytes, decoded %d", fcs, len(out))
	}
	return out, nil
}

// frameContentSize reads the declared content size of the zstd frame at the
// start of sec, refusing a frame without one or with one over MaxBatchBytes.
func frameContentSize(sec []byte) (uint64, error) {
	var fh zstd.Header
	if err := fh.Decode(sec); err != nil {
		return 0, corruptf("zstd frame header: %v", err)
	}
	if fh.Skippable || !fh.HasFCS {
		return 0, corruptf("zstd frame does not declare its content size")
	}
	if fh.FrameContentSize > MaxBatchBytes {
		return 0, fmt.Errorf("codec: %w: %w: zstd frame declares %d bytes, bound is %d", ErrCorrupt, ErrTooLarge, fh.FrameContentSize, MaxBatchBytes)
	}
	return fh.FrameContentSize, nil
}

// DecodeRecords decodes an uncompressed records section described by h
// (BaseOffset, RecordCount, FirstTimestamp, LastTimestamp and the sparse
// flag are used; the CRC and codec are not) and appends the records to
// dst[:0]. The records alias sec. It checks everything the section itself
// can get wrong: exactly RecordCount records filling it, no undefined attribute bit,
// lengths inside their record, offsetDelta in range and strictly increasing,
// the first timestampDelta 0 and the last timestamp equal to LastTimestamp.
func DecodeRecords(sec []byte, h BatchHeader, dst []Record) ([]Record, error) {
	if err := checkSpan(&h); err != nil {
		return nil, err
	}
	return decodeRecords(sec, &h, dst)
}

func decodeRecords(sec []byte, h *BatchHeader, dst []Record) ([]Record, error) {
	n := int(h.RecordCount)
	if uint64(n)*minRecordLen > uint64(len(sec)) {
		return nil, corruptf("%d records cannot fit in %d bytes", n, len(sec))
	}
	recs := slices.Grow(dst[:0], n)[:n]
	sparse := h.Sparse()
	var (
		p        int
		prev     int64 = -1 // previous offsetDelta
		nHeaders int        // headers in the batch
		hs       headerArena
	)
	for i := range recs {
		if len(sec)-p < recLenSize {
			return nil, corruptf("record %d: section ends at byte %d, before its length", i, p)
		}
		l := uint64(binary.BigEndian.Uint32(sec[p:]))
		p += recLenSize
		if l < recFixedBody || l > uint64(len(sec)-p) {
			return nil, corruptf("record %d: length %d out of range (%d bytes left)", i, l, len(sec)-p)
		}
		r := sec[p : p+int(l) : p+int(l)]
		p += int(l)

		a := r[bodyAttr]
		if a&^attrKnown != 0 {
			return nil, corruptf("record %d: attributes 0x%02x, undefined bits 0x%02x set", i, a, a&^attrKnown)
		}
		tsDelta := int32(binary.BigEndian.Uint32(r[bodyTSDelta:]))
		od := int64(binary.BigEndian.Uint32(r[bodyOffDelta:]))
		switch {
		case !sparse && od >= int64(n):
			return nil, corruptf("record %d: offsetDelta %d out of range (recordCount %d)", i, od, n)
		case sparse && od >= MaxSparseDelta:
			return nil, corruptf("record %d: offsetDelta %d out of range (sparse bound %d)", i, od, int64(MaxSparseDelta))
		case od <= prev:
			return nil, corruptf("record %d: offsetDelta %d not above previous %d", i, od, prev)
		}
		prev = od
		if i == 0 && tsDelta != 0 {
			return nil, corruptf("record 0: timestampDelta %d, want 0", tsDelta)
		}

		rec := &recs[i]
		rec.Attributes = a
		rec.Offset = h.BaseOffset + od
		rec.Timestamp = h.FirstTimestamp + int64(tsDelta)
		if (tsDelta > 0) != (rec.Timestamp > h.FirstTimestamp) && tsDelta != 0 {
			return nil, corruptf("record %d: timestamp %d%+d overflows", i, h.FirstTimestamp, tsDelta)
		}
		q := bodyKeyLen
		var err error
		// Every length below is followed by at least the valueLength and
		// headerCount fields, which bounds it.
		if rec.Key, q, err = readBytes(r, q, lenFieldSize+countFieldSize); err != nil {
			return nil, corruptf("record %d: key: %v", i, err)
		}
		if rec.Value, q, err = readBytes(r, q, countFieldSize); err != nil {
			return nil, corruptf("record %d: value: %v", i, err)
		}
		hc := uint64(binary.BigEndian.Uint32(r[q:]))
		q += countFieldSize
		if hc*headerFixed > uint64(len(r)-q) {
			return nil, corruptf("record %d: %d headers cannot fit in %d bytes", i, hc, len(r)-q)
		}
		rec.Headers = nil
		if hc > 0 {
			if q, err = hs.read(r, q, int(hc)); err != nil {
				return nil, corruptf("record %d: %v", i, err)
			}
			nHeaders += int(hc)
			hs.counts = append(hs.counts, recHeaders{rec: i, n: int(hc)})
		}
		if q != len(r) {
			return nil, corruptf("record %d: %d bytes after its last field", i, len(r)-q)
		}
	}
	if p != len(sec) {
		return nil, corruptf("%d bytes after record %d", len(sec)-p, n-1)
	}
	if last := recs[n-1].Timestamp; last != h.LastTimestamp {
		return nil, corruptf("last record timestamp %d, header says %d", last, h.LastTimestamp)
	}
	if nHeaders > 0 {
		hs.finish(recs)
	}
	return recs, nil
}

// readBytes reads a u32 length at r[q:] and the bytes it announces. The
// length 0xFFFFFFFF gives nil; after the bytes at least `after` bytes must
// remain. The result aliases r with its capacity capped.
func readBytes(r []byte, q, after int) ([]byte, int, error) {
	if len(r)-q < lenFieldSize {
		return nil, q, fmt.Errorf("length field past the end of the record")
	}
	l := uint64(binary.BigEndian.Uint32(r[q:]))
	q += lenFieldSize
	if l == nullLen {
		if len(r)-q < after {
			return nil, q, fmt.Errorf("record ends early")
		}
		return nil, q, nil
	}
	if l+uint64(after) > uint64(len(r)-q) {
		return nil, q, fmt.Errorf("length %d overruns the record (%d bytes left)", l, len(r)-q)
	}
	end := q + int(l)
	return r[q:end:end], end, nil
}

// headerArena collects the headers of one batch so that all their keys share
// one string allocation and all their Header values one backing array.
type headerArena struct {
	hdrs    []Header     // in batch order; Key filled by finish
	keyLens []int        // len of each header's key, parallel to hdrs
	keys    []byte       // all header keys concatenated
	counts  []recHeaders // which records have headers, in order
}

type recHeaders struct{ rec, n int }

// read decodes n headers at r[q:], returning the position after them.
func (a *headerArena) read(r []byte, q, n int) (int, error) {
	for j := 0; j < n; j++ {
		if len(r)-q < lenFieldSize {
			return q, fmt.Errorf("header %d: key length past the end of the record", j)
		}
		kl := uint64(binary.BigEndian.Uint32(r[q:]))
		q += lenFieldSize
		if kl == nullLen {
			return q, fmt.Errorf("header %d: null key", j)
		}
		if kl+lenFieldSize > uint64(len(r)-q) {
			return q, fmt.Errorf("header %d: key length %d overruns the record", j, kl)
		}
		a.keys = append(a.keys, r[q:q+int(kl)]...)
		a.keyLens = append(a.keyLens, int(kl))
		q += int(kl)
		var v []byte
		var err error
		if v, q, err = readBytes(r, q, 0); err != nil {
			return q, fmt.Errorf("header %d: value: %v", j, err)
		}
		a.hdrs = append(a.hdrs, Header{Value: v})
	}
	return q, nil
}

// finish converts the collected keys to strings and hands each record its
// headers, as a capacity-capped window of one shared array.
func (a *headerArena) finish(recs []Record) {
	keys := string(a.keys)
	ko := 0
	for i := range a.hdrs {
		a.hdrs[i].Key = keys[ko : ko+a.keyLens[i]]
		ko += a.keyLens[i]
	}
	ho := 0
	for _, c := range a.counts {
		recs[c.rec].Headers = a.hdrs[ho : ho+c.n : ho+c.n]
		ho += c.n
	}
}
