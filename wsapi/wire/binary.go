package wire

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine"
)

// A binary produce frame on /v1/ws is a produce request whose records are
// bytes, not JSON: the request's JSON header on one line, a newline, then
// the records, each
//
//	uvarint  key length + 1 (0: no key), then the key
//	uvarint  value length + 1 (0: a tombstone), then the value
//	uvarint  number of headers, then for each
//	         uvarint name length, the name (UTF-8), uvarint value length, the value
//
// up to the end of the frame. Keys, values and header values are stored as
// they are, so neither side encodes, escapes or validates them as JSON: it
// is the fast path for producing large batches (docs/websocket.md).

// MaxRecordHeaders bounds the headers of one record a client produces,
// whatever its encoding: a binary frame (here) or a JSON record object (a
// websocket produce, a POST body, NDJSON: wsapi's toRecord). Records a
// Kafka client wrote may hold more; pushes carry them all.
const MaxRecordHeaders = 64

// DecodeBinaryRecords decodes the records section of a binary produce
// frame: at least one record, at most maxRecords, each of at most
// maxRecordBytes of key, value and headers. It returns the records and the
// sum of their key and value sizes. Keys, values and header values are
// sub-slices of b. Errors are protocol errors naming what was wrong.
func DecodeBinaryRecords(b []byte, maxRecords, maxRecordBytes int) ([]engine.Record, int, *Error) {
	var recs []engine.Record
	total := 0
	i := 0
	for i < len(b) {
		n := len(recs)
		if n == maxRecords {
			return nil, 0, Errorf(CodeInvalidRequest, "more than %d records in one request", maxRecords)
		}
		var rec engine.Record
		var e *Error
		i, e = decodeBinaryRecord(b, i, n, MaxRecordHeaders, &rec, func(h int, name []byte) *Error {
			if !utf8.Valid(name) {
				return Errorf(CodeInvalidRequest, "record %d: header %d: name is not UTF-8", n, h)
			}
			for _, prev := range rec.Headers {
				if prev.Key == string(name) {
					return Errorf(CodeInvalidRequest, "record %d: header %q twice", n, name)
				}
			}
			return nil
		})
		if e != nil {
			return nil, 0, e
		}
		size := len(rec.Key) + len(rec.Value)
		for _, h := range rec.Headers {
			size += len(h.Key) + len(h.Value)
		}
		if size > maxRecordBytes {
			return nil, 0, Errorf(CodeRecordTooLarge, "record %d: %d bytes exceeds the limit of %d bytes", n, size, maxRecordBytes)
		}
		total += len(rec.Key) + len(rec.Value)
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return nil, 0, Errorf(CodeInvalidRequest, "binary frame has no records after its header")
	}
	return recs, total, nil
}

// decodeBinaryRecord decodes the key, value and headers of record n at
// b[i:] into rec (keys, values and header values are sub-slices of b) and
// returns the index after it: the per-record layout of binary produce
// frames and binary pushes. A record of more than maxHeaders headers is
// refused; check, when not nil, judges each header name before it is added
// (rec.Headers holds the record's earlier headers).
func decodeBinaryRecord(b []byte, i, n, maxHeaders int, rec *engine.Record, check func(h int, name []byte) *Error) (int, *Error) {
	key, i, e := binaryField(b, i, n, "key")
	if e != nil {
		return i, e
	}
	val, i, e := binaryField(b, i, n, "value")
	if e != nil {
		return i, e
	}
	rec.Key, rec.Value = key, val // nil Value: a tombstone
	hn, w := binary.Uvarint(b[i:])
	if w <= 0 {
		return i, Errorf(CodeInvalidRequest, "record %d: bad header count", n)
	}
	i += w
	if hn > uint64(maxHeaders) {
		return i, Errorf(CodeInvalidRequest, "record %d: %d headers (at most %d)", n, hn, maxHeaders)
	}
	if hn > 0 {
		rec.Headers = make([]engine.Header, 0, hn)
	}
	for h := range int(hn) {
		name, j, e := binaryBytes(b, i, n, "header name")
		if e != nil {
			return j, e
		}
		v, j, e := binaryBytes(b, j, n, "header value")
		if e != nil {
			return j, e
		}
		i = j
		if check != nil {
			if e := check(h, name); e != nil {
				return i, e
			}
		}
		rec.Headers = append(rec.Headers, engine.Header{Key: string(name), Value: v})
	}
	return i, nil
}

// binaryField reads a length+1-prefixed key or value at b[i:]: nil for a
// length of 0 (no key, a tombstone), else a non-nil slice.
func binaryField(b []byte, i, rec int, what string) ([]byte, int, *Error) {
	l, w := binary.Uvarint(b[i:])
	if w <= 0 {
		return nil, i, Errorf(CodeInvalidRequest, "record %d: bad %s length", rec, what)
	}
	i += w
	if l == 0 {
		return nil, i, nil
	}
	l--
	if l > uint64(len(b)-i) {
		return nil, i, Errorf(CodeInvalidRequest, "record %d: %s of %d bytes, only %d left in the frame", rec, what, l, len(b)-i)
	}
	return b[i : i+int(l) : i+int(l)], i + int(l), nil
}

// binaryBytes reads a length-prefixed byte string at b[i:].
func binaryBytes(b []byte, i, rec int, what string) ([]byte, int, *Error) {
	l, w := binary.Uvarint(b[i:])
	if w <= 0 {
		return nil, i, Errorf(CodeInvalidRequest, "record %d: bad %s length", rec, what)
	}
	i += w
	if l > uint64(len(b)-i) {
		return nil, i, Errorf(CodeInvalidRequest, "record %d: %s of %d bytes, only %d left in the frame", rec, what, l, len(b)-i)
	}
	return b[i : i+int(l) : i+int(l)], i + int(l), nil
}

// AppendBinaryRecords appends the records part of a binary produce frame.
func AppendBinaryRecords(b []byte, recs []engine.Record) []byte {
	for i := range recs {
		b = appendBinaryRecord(b, &recs[i])
	}
	return b
}

// appendBinaryRecord appends r's key, value and headers in the layout
// decodeBinaryRecord reads.
func appendBinaryRecord(b []byte, r *engine.Record) []byte {
	b = appendLenPlus1(b, r.Key)
	b = appendLenPlus1(b, r.Value)
	b = binary.AppendUvarint(b, uint64(len(r.Headers)))
	for _, h := range r.Headers {
		b = binary.AppendUvarint(b, uint64(len(h.Key)))
		b = append(b, h.Key...)
		b = binary.AppendUvarint(b, uint64(len(h.Value)))
		b = append(b, h.Value...)
	}
	return b
}

// appendLenPlus1 appends v with its length + 1 (0 for nil).
func appendLenPlus1(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}
