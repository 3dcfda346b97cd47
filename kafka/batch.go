package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/pulselog/pulse/engine"
)

// Record batch v2 layout (Kafka's DefaultRecordBatch), all big-endian:
//
//	0 baseOffset i64 | 8 batchLength i32 | 12 partitionLeaderEpoch i32 |
//	16 magic i8 (2) | 17 crc u32 (CRC-32C of bytes 21..end) | 21 attributes i16 |
//	23 lastOffsetDelta i32 | 27 firstTimestamp i64 | 35 maxTimestamp i64 |
//	43 producerId i64 | 51 producerEpoch i16 | 53 baseSequence i32 |
//	57 recordCount i32 | 61 records
//
// batchLength counts the bytes after itself. Each record is varint-framed:
// length, attributes i8, timestampDelta varlong, offsetDelta varint, key
// (varint length, -1 null), value (same), header count varint, headers
// (key varint length + bytes, value varint length + bytes, -1 null).
const (
	offBatchLength  = 8
	offMagic        = 16
	offCRC          = 17
	offAttributes   = 21
	offLastDelta    = 23
	offFirstTS      = 27
	offMaxTS        = 35
	offProducerID   = 43
	offEpoch        = 51
	offBaseSequence = 53
	offRecordCount  = 57
	batchHeaderLen  = 61
	batchLengthBase = 12 // baseOffset and batchLength precede what batchLength counts
)

// Attribute bits of a batch v2 (and codec bits of a message v0/v1).
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// Compression codecs in attributes bits 0-2.
const (
	codecNone   = 0
	codecGzip   = 1
	codecSnappy = 2
	codecLZ4    = 3
	codecZstd   = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// producedBatch is one decoded record batch of a produce request.
type producedBatch struct {
	ProducerID   int64 // -1 when not idempotent
	Epoch        int16
	BaseSequence int32
	Records      []engine.Record
}

// decodeBatches decodes the records field of a produce request: one or more
// record batches v2, or (magic 0/1) a message set. maxRecordsBytes bounds
// the decompressed records of each batch. Nothing is trusted before the CRC
// has been checked.
func decodeBatches(b []byte, maxRecordsBytes int) ([]producedBatch, error) {
	if len(b) < offMagic+1 {
		return nil, fmt.Errorf("%w: %d bytes of records", ErrCorruptBatch, len(b))
	}
	if b[offMagic] < 2 {
		recs, err := decodeMessageSet(b, maxRecordsBytes, 0)
		if err != nil {
			return nil, err
		}
		return []producedBatch{{ProducerID: -1, Epoch: -1, BaseSequence: -1, Records: recs}}, nil
	}
	var out []producedBatch
	for len(b) > 0 {
		pb, n, err := decodeBatch(b, maxRecordsBytes)
		if err != nil {
			return nil, fmt.Errorf("batch %d: %w", len(out), err)
		}
		out = append(out, pb)
		b = b[n:]
	}
	return out, nil
}

// decodeBatch decodes the record batch v2 at the start of b and returns it
// with its size in bytes.
func decodeBatch(b []byte, maxRecordsBytes int) (producedBatch, int, error) {
	var pb producedBatch
	if len(b) < batchHeaderLen {
		return pb, 0, fmt.Errorf("%w: %d bytes, a batch header is %d", ErrCorruptBatch, len(b), batchHeaderLen)
	}
	length := int64(int32(binary.BigEndian.Uint32(b[offBatchLength:])))
	if length < batchHeaderLen-batchLengthBase || length > int64(len(b)-batchLengthBase) {
		return pb, 0, fmt.Errorf("%w: batch length %d with %d bytes left", ErrCorruptBatch, length, len(b)-batchLengthBase)
	}
	size := int(length) + batchLengthBase
	b = b[:size]
	if magic := b[offMagic]; magic != 2 {
		return pb, 0, fmt.Errorf("%w: magic %d after a magic 2 batch", ErrCorruptBatch, magic)
	}
	if want, got := binary.BigEndian.Uint32(b[offCRC:]), crc32.Checksum(b[offAttributes:], castagnoli); want != got {
		return pb, 0, fmt.Errorf("%w: stored %08x, computed %08x", ErrBadCRC, want, got)
	}
	attrs := binary.BigEndian.Uint16(b[offAttributes:])
	if attrs&(attrTransactional|attrControl) != 0 {
		return pb, 0, fmt.Errorf("%w: transactional or control batch (attributes %#x)", ErrUnsupported, attrs)
	}
	count := int32(binary.BigEndian.Uint32(b[offRecordCount:]))
	lastDelta := int32(binary.BigEndian.Uint32(b[offLastDelta:]))
	if count < 1 || lastDelta != count-1 {
		return pb, 0, fmt.Errorf("%w: %d records with last offset delta %d", ErrCorruptBatch, count, lastDelta)
	}
	pb.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	pb.Epoch = int16(binary.BigEndian.Uint16(b[offEpoch:]))
	pb.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	raw, err := decompress(int(attrs&attrCodecMask), b[batchHeaderLen:], maxRecordsBytes)
	if err != nil {
		return pb, 0, err
	}
	// Each record takes at least 7 bytes, which bounds count before any
	// allocation depends on it.
	if int64(count)*7 > int64(len(raw)) {
		return pb, 0, fmt.Errorf("%w: %d records in %d bytes", ErrCorruptBatch, count, len(raw))
	}
	pb.Records = make([]engine.Record, count)
	for i := range pb.Records {
		n, err := decodeRecord(raw, int32(i), &pb.Records[i])
		if err != nil {
			return pb, 0, fmt.Errorf("record %d: %w", i, err)
		}
		raw = raw[n:]
	}
	if len(raw) != 0 {
		return pb, 0, fmt.Errorf("%w: %d bytes after the last record", ErrCorruptBatch, len(raw))
	}
	return pb, size, nil
}

// recordReader reads the varint fields of one record.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint", ErrCorruptBatch)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes reads a varint-length byte string; -1 is nil.
func (r *recordReader) bytes(what string) []byte {
	n := r.varint()
	if r.err != nil {
		return nil
	}
	if n == -1 {
		return nil
	}
	if n < 0 || n > int64(len(r.b)) {
		r.err = fmt.Errorf("%w: %s of %d bytes with %d left", ErrCorruptBatch, what, n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// decodeRecord decodes the record at the start of b, which must have offset
// delta i, and returns its size.
func decodeRecord(b []byte, i int32, rec *engine.Record) (int, error) {
	length, n := binary.Varint(b)
	if n <= 0 || length < 6 || length > int64(len(b)-n) {
		return 0, fmt.Errorf("%w: record length %d with %d bytes left", ErrCorruptBatch, length, len(b))
	}
	r := recordReader{b: b[n+1 : n+int(length)]} // skip attributes
	r.varint()                                   // timestamp delta: Pulse assigns commit times
	if d := r.varint(); r.err == nil && d != int64(i) {
		return 0, fmt.Errorf("%w: offset delta %d, want %d", ErrCorruptBatch, d, i)
	}
	rec.Key = r.bytes("key")
	rec.Value = r.bytes("value")
	nh := r.varint()
	if r.err == nil && (nh < 0 || nh*2 > int64(len(r.b))) {
		return 0, fmt.Errorf("%w: %d headers in %d bytes", ErrCorruptBatch, nh, len(r.b))
	}
	if nh > 0 {
		rec.Headers = make([]engine.Header, nh)
		for j := range rec.Headers {
			k := r.bytes("header key")
			if r.err == nil && k == nil {
				return 0, fmt.Errorf("%w: header %d has a null key", ErrCorruptBatch, j)
			}
			rec.Headers[j] = engine.Header{Key: string(k), Value: r.bytes("header value")}
		}
	}
	if r.err != nil {
		return 0, r.err
	}
	if len(r.b) != 0 {
		return 0, fmt.Errorf("%w: %d bytes after the record's headers", ErrCorruptBatch, len(r.b))
	}
	return n + int(length), nil
}

// xerialMagic starts snappy data framed the way the Java client writes it.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

var zstdPool = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(256<<20), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		panic(err) // only bad options fail
	}
	return d
}}

// decompress returns the records section in the clear, refusing more than
// limit bytes.
func decompress(codec int, b []byte, limit int) ([]byte, error) {
	var r io.Reader
	switch codec {
	case codecNone:
		if len(b) > limit {
			return nil, fmt.Errorf("%w: %d bytes of records, the limit is %d", ErrTooLarge, len(b), limit)
		}
		return b, nil
	case codecGzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %w", ErrCorruptBatch, err)
		}
		defer zr.Close()
		r = zr
	case codecSnappy:
		return unsnappy(b, limit)
	case codecLZ4:
		r = lz4.NewReader(bytes.NewReader(b))
	case codecZstd:
		d := zstdPool.Get().(*zstd.Decoder)
		if err := d.Reset(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("%w: zstd: %w", ErrCorruptBatch, err)
		}
		defer func() { d.Reset(nil); zstdPool.Put(d) }()
		r = d
	default:
		return nil, fmt.Errorf("%w: compression codec %d", ErrUnsupported, codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: codec %d: %w", ErrCorruptBatch, codec, err)
	}
	if len(out) > limit {
		return nil, fmt.Errorf("%w: records decompress to more than %d bytes", ErrTooLarge, limit)
	}
	return out, nil
}

// unsnappy decodes raw snappy or the Java client's xerial framing.
func unsnappy(b []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(b, xerialMagic) {
		return snappyBlock(nil, b, limit)
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("%w: snappy: short xerial header", ErrCorruptBatch)
	}
	b = b[16:] // magic, version, compatible version
	var out []byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: snappy: short xerial chunk", ErrCorruptBatch)
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, fmt.Errorf("%w: snappy: xerial chunk of %d bytes with %d left", ErrCorruptBatch, n, len(b)-4)
		}
		var err error
		if out, err = snappyBlock(out, b[4:4+n], limit-len(out)); err != nil {
			return nil, err
		}
		b = b[4+n:]
	}
	return out, nil
}

// snappyBlock appends the decoding of one snappy block to dst.
func snappyBlock(dst, b []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(b)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %w", ErrCorruptBatch, err)
	}
	if n > limit {
		return nil, fmt.Errorf("%w: records decompress to more than the limit", ErrTooLarge)
	}
	buf, err := snappy.Decode(make([]byte, n), b)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %w", ErrCorruptBatch, err)
	}
	return append(dst, buf...), nil
}

// Message set v0/v1 (produce v0-v2) layout: offset i64 | size i32 | crc u32
// (IEEE, of what follows it) | magic i8 | attributes i8 | timestamp i64
// (magic 1 only) | key (i32 length, -1 null) | value (same). A compressed
// message's value is a nested message set.
const (
	msgOffSize  = 8
	msgOffCRC   = 12
	msgOffMagic = 16
	msgOffAttr  = 17
	msgHeadLen  = 12 // offset and size precede what size counts
)

// decodeMessageSet decodes a message set; depth bounds nesting (a
// compressed wrapper holds plain messages).
func decodeMessageSet(b []byte, limit, depth int) ([]engine.Record, error) {
	var out []engine.Record
	for len(b) > 0 {
		if len(b) < msgOffAttr+1 {
			return nil, fmt.Errorf("%w: message set: %d trailing bytes", ErrCorruptBatch, len(b))
		}
		size := int64(int32(binary.BigEndian.Uint32(b[msgOffSize:])))
		if size < msgOffAttr+1-msgHeadLen || size > int64(len(b)-msgHeadLen) {
			return nil, fmt.Errorf("%w: message size %d with %d bytes left", ErrCorruptBatch, size, len(b)-msgHeadLen)
		}
		m := b[:msgHeadLen+int(size)]
		b = b[len(m):]
		if want, got := binary.BigEndian.Uint32(m[msgOffCRC:]), crc32.ChecksumIEEE(m[msgOffMagic:]); want != got {
			return nil, fmt.Errorf("%w: message stored %08x, computed %08x", ErrBadCRC, want, got)
		}
		magic, attrs := m[msgOffMagic], m[msgOffAttr]
		p := m[msgOffAttr+1:]
		if magic > 1 {
			return nil, fmt.Errorf("%w: message magic %d", ErrCorruptBatch, magic)
		}
		if magic == 1 {
			if len(p) < 8 {
				return nil, fmt.Errorf("%w: message without its timestamp", ErrCorruptBatch)
			}
			p = p[8:]
		}
		key, p, err := int32Bytes(p)
		if err != nil {
			return nil, err
		}
		value, p, err := int32Bytes(p)
		if err != nil {
			return nil, err
		}
		if len(p) != 0 {
			return nil, fmt.Errorf("%w: %d bytes after a message's value", ErrCorruptBatch, len(p))
		}
		codec := int(attrs & attrCodecMask)
		if codec == codecNone {
			out = append(out, engine.Record{Key: key, Value: value})
			continue
		}
		if depth > 0 {
			return nil, fmt.Errorf("%w: nested compressed message", ErrCorruptBatch)
		}
		inner, err := decompress(codec, value, limit)
		if err != nil {
			return nil, err
		}
		recs, err := decodeMessageSet(inner, limit, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty message set", ErrCorruptBatch)
	}
	return out, nil
}

func int32Bytes(b []byte) (v, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%w: message field length cut short", ErrCorruptBatch)
	}
	n := int64(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	if n == -1 {
		return nil, b, nil
	}
	if n < 0 || n > int64(len(b)) {
		return nil, nil, fmt.Errorf("%w: message field of %d bytes with %d left", ErrCorruptBatch, n, len(b))
	}
	return b[:n:n], b[n:], nil
}

// appendBatch appends recs as one uncompressed record batch v2 flagged
// LogAppendTime, with recs[0]'s offset as base offset and the largest
// timestamp as the batch's (which consumers give every record of a
// LogAppendTime batch: callers group records of one commit time).
// Producer fields are -1: fetched batches carry no producer state.
// appendEmptyBatch appends a batch v2 of no records covering offsets
// first..last, as Kafka leaves one where compaction removed every record
// of a batch: a consumer's next offset becomes last+1. A range longer than
// a batch's 32-bit last offset delta spans ends at first+MaxInt32: the
// consumer's next fetch, still in the range, gets the next batch of it.
func appendEmptyBatch(dst []byte, first, last int64) []byte {
	last = min(last, first+math.MaxInt32)
	start := len(dst)
	dst = appendBatchHeader(dst, first, last-first, -1, -1, 0)
	return finishBatch(dst, start)
}

// appendBatchHeader appends the header of a batch v2 of count records from
// offset base (LogAppendTime, no producer), its length and CRC left for
// finishBatch.
func appendBatchHeader(dst []byte, base, lastDelta, firstTS, maxTS int64, count int) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(base))
	dst = append(dst, 0, 0, 0, 0)               // batch length, finishBatch
	dst = binary.BigEndian.AppendUint32(dst, 0) // partition leader epoch
	dst = append(dst, 2, 0, 0, 0, 0)            // magic, crc by finishBatch
	dst = binary.BigEndian.AppendUint16(dst, attrLogAppendTime)
	dst = binary.BigEndian.AppendUint32(dst, uint32(lastDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(firstTS))
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxTS))
	dst = binary.BigEndian.AppendUint64(dst, ^uint64(0)) // producer id -1
	dst = binary.BigEndian.AppendUint16(dst, ^uint16(0)) // epoch -1
	dst = binary.BigEndian.AppendUint32(dst, ^uint32(0)) // base sequence -1
	return binary.BigEndian.AppendUint32(dst, uint32(count))
}

// finishBatch writes the length and the CRC of the batch at dst[start:].
func finishBatch(dst []byte, start int) []byte {
	binary.BigEndian.PutUint32(dst[start+offBatchLength:], uint32(len(dst)-start-batchLengthBase))
	binary.BigEndian.PutUint32(dst[start+offCRC:], crc32.Checksum(dst[start+offAttributes:], castagnoli))
	return dst
}

func appendBatch(dst []byte, recs []engine.Record) []byte {
	start := len(dst)
	base := recs[0].Offset
	first, maxTS := recs[0].Timestamp, recs[0].Timestamp
	for i := range recs {
		maxTS = max(maxTS, recs[i].Timestamp)
	}
	dst = appendBatchHeader(dst, base, recs[len(recs)-1].Offset-base, first, maxTS, len(recs))
	for i := range recs {
		r := &recs[i]
		tsDelta, offDelta := r.Timestamp-first, r.Offset-base
		n := recordBodyLen(r, tsDelta, offDelta)
		dst = binary.AppendVarint(dst, int64(n))
		dst = append(dst, 0) // attributes
		dst = binary.AppendVarint(dst, tsDelta)
		dst = binary.AppendVarint(dst, offDelta)
		dst = appendVarBytes(dst, r.Key)
		dst = appendVarBytes(dst, r.Value)
		dst = binary.AppendVarint(dst, int64(len(r.Headers)))
		for _, h := range r.Headers {
			dst = binary.AppendVarint(dst, int64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendVarBytes(dst, h.Value)
		}
	}
	return finishBatch(dst, start)
}

// recordBodyLen is the size of r's encoding after its length varint.
func recordBodyLen(r *engine.Record, tsDelta, offDelta int64) int {
	n := 1 + varintLen(tsDelta) + varintLen(offDelta) + varBytesLen(r.Key) + varBytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + varBytesLen(h.Value)
	}
	return n
}

// varintLen is the size of v as a zig-zag varint.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// varBytesLen is the encoded size of b with its varint length (-1 for nil).
func varBytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// batchErrorCode maps a batch decoding error to a Kafka error code.
func batchErrorCode(err error) int16 {
	switch {
	case errors.Is(err, ErrTooLarge):
		return errMessageTooLarge
	case errors.Is(err, ErrUnsupported):
		return errUnsupportedForMessageFormat
	}
	return errCorruptMessage
}
