package codec

import (
	"encoding/binary"
	"hash/crc32"
)

// Batch header layout (doc.go). Every field access goes through these.
const (
	offMagic         = 0  // u8
	offVersion       = 1  // u8
	offFlags         = 2  // u16
	offCRC           = 4  // u32, crc32c of bytes crcStart..end
	offBaseOffset    = 8  // i64
	offBatchLen      = 16 // u32, length of the records section as stored
	offFirstTS       = 20 // i64, ms
	offLastTS        = 28 // i64, ms
	offRecordCount   = 36 // u32
	offProducerID    = 40 // u32, idempotent producer id, 0: none
	offProducerEpoch = 44 // u32, its epoch
	offBaseSequence  = 48 // i32, sequence of the first record
	headerLen        = 52 // + batchLen bytes of records

	crcStart = offBaseOffset // the CRC covers bytes 8..end
)

// Record layout, relative to the start of a record's length field.
const (
	recLenSize      = 4 // u32 length of everything that follows
	recAttrSize     = 1 // u8 attributes: the Attr* bits, any other bit is corrupt
	recTSDeltaSize  = 4 // i32
	recOffDeltaSize = 4 // u32
	lenFieldSize    = 4 // u32 key / value / header length
	countFieldSize  = 4 // u32 headerCount

	// recFixedBody is the body (after the length field) of a record with
	// empty key, empty value and no headers: attributes, timestampDelta,
	// offsetDelta, keyLength, valueLength, headerCount.
	recFixedBody = recAttrSize + recTSDeltaSize + recOffDeltaSize + 2*lenFieldSize + countFieldSize // 21
	// minRecordLen is the smallest encoded record, length field included.
	minRecordLen = recLenSize + recFixedBody // 25
	// headerFixed is the size of one record header with empty key and value.
	headerFixed = 2 * lenFieldSize

	// Offsets inside the record body (after the length field).
	bodyAttr     = 0
	bodyTSDelta  = bodyAttr + recAttrSize         // 1
	bodyOffDelta = bodyTSDelta + recTSDeltaSize   // 5
	bodyKeyLen   = bodyOffDelta + recOffDeltaSize // 9

	nullLen = 0xFFFFFFFF // keyLength / valueLength of a null key, tombstone or null header value
)

// Header field values and limits.
const (
	// HeaderLen is the size of the fixed batch header.
	HeaderLen = headerLen
	// Magic and Version are the values of the first two header bytes.
	Magic   = 0x01
	Version = 0x01
	// MaxBatchBytes bounds batchLen and the decompressed size of a records
	// section (seed 000's maxFrameBytes).
	MaxBatchBytes = 256 << 20
	// FlagSparse marks a batch whose record offsets may skip (compaction).
	FlagSparse = 0x0008
	// FlagCodecMask selects the codec bits (0–2) of the flags.
	FlagCodecMask = 0x0007
	// MaxSparseDelta is the exclusive bound of offsetDelta in a sparse batch.
	MaxSparseDelta = 1 << 31

	knownFlags = FlagCodecMask | FlagSparse
)

// castagnoli is the crc32c table; hash/crc32 uses the CPU's CRC32
// instructions for it where available.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchHeader is the decoded fixed header of a batch.
type BatchHeader struct {
	Magic          uint8
	Version        uint8
	Flags          uint16
	CRC            uint32
	BaseOffset     int64
	BatchLen       uint32 // records section length as stored
	FirstTimestamp int64  // ms, first record
	LastTimestamp  int64  // ms, last record
	RecordCount    uint32
	ProducerID     uint32 // idempotent producer id, 0: none (doc.go)
	ProducerEpoch  uint32 // the producer's epoch
	BaseSequence   int32  // the first record's sequence number
}

// Producer returns the producer stamp of the batch.
func (h BatchHeader) Producer() ProducerStamp {
	return ProducerStamp{ID: h.ProducerID, Epoch: h.ProducerEpoch, BaseSequence: h.BaseSequence}
}

// ProducerStamp names the idempotent producer of a batch's records: its
// id, its epoch and the sequence number of the batch's first record. The
// zero value is no producer (doc.go).
type ProducerStamp struct {
	ID           uint32
	Epoch        uint32
	BaseSequence int32
}

// Codec returns the codec of the records section (flags bits 0–2).
func (h BatchHeader) Codec() Codec { return Codec(h.Flags & FlagCodecMask) }

// Sparse reports whether the batch has sparse (compacted) offsets.
func (h BatchHeader) Sparse() bool { return h.Flags&FlagSparse != 0 }

// Size is the whole batch's length in bytes: HeaderLen + BatchLen.
func (h BatchHeader) Size() int64 { return HeaderLen + int64(h.BatchLen) }

// NextOffset returns BaseOffset + RecordCount, the offset after the last
// record, and true for an ordinary (contiguous) batch. A sparse batch's last
// offset is known only from its last record, so for one it returns 0, false:
// use LastOffset or the decoded records.
func (h BatchHeader) NextOffset() (next int64, ok bool) {
	if h.Sparse() {
		return 0, false
	}
	return h.BaseOffset + int64(h.RecordCount), true
}

// putHeader writes h into b[:HeaderLen] (CRC included as given).
func putHeader(b []byte, h *BatchHeader) {
	_ = b[headerLen-1]
	b[offMagic] = h.Magic
	b[offVersion] = h.Version
	binary.BigEndian.PutUint16(b[offFlags:], h.Flags)
	binary.BigEndian.PutUint32(b[offCRC:], h.CRC)
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(b[offBatchLen:], h.BatchLen)
	binary.BigEndian.PutUint64(b[offFirstTS:], uint64(h.FirstTimestamp))
	binary.BigEndian.PutUint64(b[offLastTS:], uint64(h.LastTimestamp))
	binary.BigEndian.PutUint32(b[offRecordCount:], h.RecordCount)
	binary.BigEndian.PutUint32(b[offProducerID:], h.ProducerID)
	binary.BigEndian.PutUint32(b[offProducerEpoch:], h.ProducerEpoch)
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
}

// readHeader decodes b[:HeaderLen] without any check.
func readHeader(b []byte) BatchHeader {
	_ = b[headerLen-1]
	return BatchHeader{
		Magic:          b[offMagic],
		Version:        b[offVersion],
		Flags:          binary.BigEndian.Uint16(b[offFlags:]),
		CRC:            binary.BigEndian.Uint32(b[offCRC:]),
		BaseOffset:     int64(binary.BigEndian.Uint64(b[offBaseOffset:])),
		BatchLen:       binary.BigEndian.Uint32(b[offBatchLen:]),
		FirstTimestamp: int64(binary.BigEndian.Uint64(b[offFirstTS:])),
		LastTimestamp:  int64(binary.BigEndian.Uint64(b[offLastTS:])),
		RecordCount:    binary.BigEndian.Uint32(b[offRecordCount:]),
		ProducerID:     binary.BigEndian.Uint32(b[offProducerID:]),
		ProducerEpoch:  binary.BigEndian.Uint32(b[offProducerEpoch:]),
		BaseSequence:   int32(binary.BigEndian.Uint32(b[offBaseSequence:])),
	}
}

// checksum is the crc32c of a whole batch's bytes crcStart..end.
func checksum(batch []byte) uint32 {
	return crc32.Checksum(batch[crcStart:], castagnoli)
}
