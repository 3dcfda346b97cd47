package codec

import (
	"encoding/binary"
	"fmt"
)

// Field is one field of an encoded batch header or record, for annotated hex
// views (pulse dump, the recovery inspector): its name and where it lies.
type Field struct {
	Name   string
	Offset int // from the start of the header or record
	Len    int
}

// HeaderFields lists the batch header's fields in byte order.
func HeaderFields() []Field {
	return []Field{
		{"magic", offMagic, offVersion - offMagic},
		{"version", offVersion, offFlags - offVersion},
		{"flags", offFlags, offCRC - offFlags},
		{"crc32c", offCRC, offBaseOffset - offCRC},
		{"baseOffset", offBaseOffset, offBatchLen - offBaseOffset},
		{"batchLen", offBatchLen, offFirstTS - offBatchLen},
		{"firstTimestamp", offFirstTS, offLastTS - offFirstTS},
		{"lastTimestamp", offLastTS, offRecordCount - offLastTS},
		{"recordCount", offRecordCount, offProducerID - offRecordCount},
		{"producerID", offProducerID, offProducerEpoch - offProducerID},
		{"producerEpoch", offProducerEpoch, offBaseSequence - offProducerEpoch},
		{"baseSequence", offBaseSequence, headerLen - offBaseSequence},
	}
}

// HeaderProblems says which header fields of raw (a batch's bytes as stored,
// from its header on, possibly cut short for display) are bad and why, keyed
// by field name, for annotated views; "*" means the header itself is torn.
// avail is how many bytes the file holds from the batch's position, or -1
// when unknown. The CRC is checked only when raw holds the whole batch and
// no other field is bad. Empty when the header and CRC are fine.
func HeaderProblems(raw []byte, avail int64) map[string]string {
	bad := map[string]string{}
	if len(raw) < headerLen {
		bad["*"] = fmt.Sprintf("only %d bytes: the header is torn", len(raw))
		return bad
	}
	h := readHeader(raw)
	if h.Magic != Magic {
		bad["magic"] = fmt.Sprintf("want 0x%02x", Magic)
	}
	if h.Version != Version {
		bad["version"] = fmt.Sprintf("want %d", Version)
	}
	if h.Flags&^knownFlags != 0 || h.Codec() > CodecZstd {
		bad["flags"] = "unknown bits or codec"
	}
	bl := int64(h.BatchLen)
	switch {
	case bl > MaxBatchBytes:
		bad["batchLen"] = fmt.Sprintf("over the %d.0 MiB bound", MaxBatchBytes>>20)
	case avail >= 0 && avail < headerLen+bl:
		bad["batchLen"] = fmt.Sprintf("overruns the file: %d bytes there", avail-headerLen)
	}
	if h.RecordCount == 0 {
		bad["recordCount"] = "a batch holds at least one record"
	}
	if len(bad) == 0 && int64(len(raw)) == headerLen+bl {
		if got := checksum(raw); got != h.CRC {
			bad["crc32c"] = fmt.Sprintf("computed 0x%08x", got)
		}
	}
	return bad
}

// RecordFields lists the fields of the encoded record at the start of rec
// (an uncompressed records section, or the rest of one), length field first,
// and returns the record's total encoded length. Header fields are named
// "header[i].keyLength" and so on. A record that does not parse gives
// ErrCorrupt.
func RecordFields(rec []byte) ([]Field, int, error) {
	if len(rec) < recLenSize {
		return nil, 0, corruptf("record length field needs %d bytes, have %d", recLenSize, len(rec))
	}
	l := uint64(binary.BigEndian.Uint32(rec))
	if l < recFixedBody || l > uint64(len(rec)-recLenSize) {
		return nil, 0, corruptf("record length %d out of range (%d bytes follow)", l, len(rec)-recLenSize)
	}
	body := rec[recLenSize : recLenSize+int(l)]
	fields := []Field{
		{"length", 0, recLenSize},
		{"attributes", recLenSize + bodyAttr, recAttrSize},
		{"timestampDelta", recLenSize + bodyTSDelta, recTSDeltaSize},
		{"offsetDelta", recLenSize + bodyOffDelta, recOffDeltaSize},
	}
	q := bodyKeyLen
	// field appends a length field and the bytes it announces.
	field := func(name string, after int) error {
		start := q
		b, next, err := readBytes(body, q, after)
		if err != nil {
			return corruptf("%s: %v", name, err)
		}
		fields = append(fields, Field{name + "Length", recLenSize + start, lenFieldSize})
		if b != nil {
			fields = append(fields, Field{name, recLenSize + start + lenFieldSize, len(b)})
		}
		q = next
		return nil
	}
	if err := field("key", lenFieldSize+countFieldSize); err != nil {
		return nil, 0, err
	}
	if err := field("value", countFieldSize); err != nil {
		return nil, 0, err
	}
	hc := int(binary.BigEndian.Uint32(body[q:]))
	fields = append(fields, Field{"headerCount", recLenSize + q, countFieldSize})
	q += countFieldSize
	if uint64(hc)*headerFixed > uint64(len(body)-q) {
		return nil, 0, corruptf("%d headers cannot fit in %d bytes", hc, len(body)-q)
	}
	for i := 0; i < hc; i++ {
		if err := field(fmt.Sprintf("header[%d].key", i), lenFieldSize); err != nil {
			return nil, 0, err
		}
		if err := field(fmt.Sprintf("header[%d].value", i), 0); err != nil {
			return nil, 0, err
		}
	}
	if q != len(body) {
		return nil, 0, corruptf("%d bytes after the record's last field", len(body)-q)
	}
	return fields, recLenSize + len(body), nil
}

// FieldView is one field of bytes being shown (pulse dump, the recovery
// inspector's hex view): where it lies, its value when the bytes hold it,
// and what is wrong with it.
type FieldView struct {
	Field
	Present bool   // the bytes hold the whole field
	Value   uint64 // the field's big-endian value when Present (fields of at most 8 bytes)
	Desc    string // the codec's reading of a flags field ("0x0001 codec zstd"); "" for the others
	Bad     string // why the field makes the batch bad; "" when fine
}

// ViewHeader annotates the batch header at the start of raw (a batch's
// bytes as stored, possibly cut short): every field of HeaderFields with
// its value and, from HeaderProblems, why it is bad. torn is set when raw
// is shorter than the header. avail is as for HeaderProblems.
func ViewHeader(raw []byte, avail int64) (fields []FieldView, torn string) {
	bad := HeaderProblems(raw, avail)
	for _, f := range HeaderFields() {
		v := FieldView{Field: f, Bad: bad[f.Name]}
		if f.Offset+f.Len <= len(raw) {
			v.Present = true
			for _, x := range raw[f.Offset : f.Offset+f.Len] {
				v.Value = v.Value<<8 | uint64(x)
			}
			if f.Name == "flags" {
				v.Desc = describeFlags(uint16(v.Value))
			}
		}
		fields = append(fields, v)
	}
	return fields, bad["*"]
}

// describeFlags reads a flags field: its value, codec and sparse bit.
func describeFlags(f uint16) string {
	s := fmt.Sprintf("0x%04x codec %s", f, Codec(f&FlagCodecMask))
	if f&FlagSparse != 0 {
		s += ", sparse offsets"
	}
	return s
}

// RecordView is one encoded record of a records section being shown.
type RecordView struct {
	Start, Len  int     // where it lies in the section, length field included
	Fields      []Field // RecordFields, relative to Start
	OffsetDelta uint32
	Key, Value  []byte // nil when null
	KeyNull     bool
	ValueNull   bool // a tombstone
}

// RecordsView annotates the start of an uncompressed records section.
type RecordsView struct {
	Records []RecordView
	// More is how many bytes after the annotated records were not looked at
	// (the limits of ViewRecords).
	More int
	// BadErr says why the record at byte BadAt (record number BadIndex) does
	// not parse; "" when every annotated record parsed.
	BadErr          string
	BadAt, BadIndex int
}

// ViewRecords annotates the records at the start of sec, at most
// maxRecords of them and none starting at or past byte maxBytes, stopping
// at the first that does not parse.
func ViewRecords(sec []byte, maxRecords, maxBytes int) RecordsView {
	var v RecordsView
	q := 0
	for i := 0; q < len(sec); i++ {
		if i == maxRecords || q >= maxBytes {
			v.More = len(sec) - q
			break
		}
		fields, n, err := RecordFields(sec[q:])
		if err != nil {
			v.BadErr, v.BadAt, v.BadIndex = err.Error(), q, i
			break
		}
		rv := RecordView{Start: q, Len: n, Fields: fields}
		rec := sec[q : q+n]
		for _, f := range fields {
			b := rec[f.Offset : f.Offset+f.Len]
			switch f.Name {
			case "offsetDelta":
				rv.OffsetDelta = binary.BigEndian.Uint32(b)
			case "key":
				rv.Key = b
			case "value":
				rv.Value = b
			case "keyLength":
				rv.KeyNull = binary.BigEndian.Uint32(b) == nullLen
			case "valueLength":
				rv.ValueNull = binary.BigEndian.Uint32(b) == nullLen
			}
		}
		v.Records = append(v.Records, rv)
		q += n
	}
	return v
}
