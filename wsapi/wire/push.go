package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/pulselog/pulse/engine"
)

// A binary push is the push of a subscription made with "format":"binary"
// (docs/websocket.md, "Binary pushes"), sent as a binary websocket message:
// the push's JSON header on one line,
//
//	{"sub":S,"partition":P,"offset":O,"timestamp":T,"next":N[,"skipped":K],"count":C}
//
// with O and T the offset and timestamp of the push's first record and C
// its number of records, a newline, then the C records up to the end of
// the message, each
//
//	uvarint  offset - O (0 for the first record; strictly increasing)
//	varint   timestamp - T (zigzag, as Go's binary.AppendVarint; 0 for the first record)
//	         key, value and headers exactly as in a binary produce frame
//
// so that neither side encodes, escapes or validates keys and values.

// Binary push formats of a subscribe request's "format" field.
const (
	FormatJSON   = "json"   // the default: JSON pushes in text messages
	FormatBinary = "binary" // binary pushes in binary messages
)

// ParseFormat checks a subscribe request's "format": "" (JSON), "json" or
// "binary". It reports whether pushes are binary.
func ParseFormat(f string) (binary bool, err *Error) {
	switch f {
	case "", FormatJSON:
		return false, nil
	case FormatBinary:
		return true, nil
	}
	return false, Errorf(CodeInvalidRequest, "format %q: want %q or %q", f, FormatJSON, FormatBinary)
}

// ErrBadPush is wrapped by every error of ParseBinaryPush and
// BinaryPush.Record: the message is not a binary push as the server writes
// it.
var ErrBadPush = errors.New("malformed binary push")

// MaxPushHeaderLen bounds the header line of a binary push, newline
// included: seven fields of at most 20 digits and their names.
const MaxPushHeaderLen = len(`{"sub":,"partition":,"offset":,"timestamp":,"next":,"skipped":,"count":}`+"\n") + 7*20

// BinaryPush is a binary push's header, and its records still encoded.
type BinaryPush struct {
	Sub       int64
	Partition int
	Offset    int64 // the first record's offset
	Timestamp int64 // the first record's timestamp
	Next      int64 // the offset after the last record: what to commit
	Skipped   int64 // records of a corrupt range skipped before these
	Count     int   // records in Records
	// Records is the records section: a sub-slice of the message.
	Records []byte
}

// AppendPushHeader appends the header line of a binary push, newline
// included.
func AppendPushHeader(b []byte, h *BinaryPush) []byte {
	b = append(b, `{"sub":`...)
	b = strconv.AppendInt(b, h.Sub, 10)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(h.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, h.Offset, 10)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, h.Timestamp, 10)
	b = append(b, `,"next":`...)
	b = strconv.AppendInt(b, h.Next, 10)
	if h.Skipped != 0 {
		b = append(b, `,"skipped":`...)
		b = strconv.AppendInt(b, h.Skipped, 10)
	}
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(h.Count), 10)
	return append(b, "}\n"...)
}

// AppendPushRecord appends r as a record of a binary push whose first
// record has offset first and timestamp firstTS.
func AppendPushRecord(b []byte, first, firstTS int64, r *engine.Record) []byte {
	b = binary.AppendUvarint(b, uint64(r.Offset-first))
	b = binary.AppendVarint(b, r.Timestamp-firstTS)
	return appendBinaryRecord(b, r)
}

// AppendBinaryPush appends the whole binary push of recs (at least one, in
// offset order) with h's Sub, Partition, Next and Skipped; it sets h's
// Offset, Timestamp and Count from recs.
func AppendBinaryPush(b []byte, h *BinaryPush, recs []engine.Record) []byte {
	h.Count = len(recs)
	if len(recs) > 0 {
		h.Offset, h.Timestamp = recs[0].Offset, recs[0].Timestamp
	}
	b = AppendPushHeader(b, h)
	for i := range recs {
		b = AppendPushRecord(b, h.Offset, h.Timestamp, &recs[i])
	}
	return b
}

// ParseBinaryPush reads the header of the binary push msg. The records
// stay in msg (h.Records); Each decodes them.
func ParseBinaryPush(msg []byte) (h BinaryPush, err error) {
	p := NewParser(msg)
	var seen [7]bool // the fields below, in order; ObjectFields refuses repeats
	ok := p.ObjectFields(func(key []byte) bool {
		var n int64
		var ok bool
		switch string(key) {
		case "sub":
			seen[0] = true
			h.Sub, ok = p.Integer(64)
		case "partition":
			seen[1] = true
			n, ok = p.Integer(32)
			h.Partition = int(n)
		case "offset":
			seen[2] = true
			h.Offset, ok = p.Integer(64)
		case "timestamp":
			seen[3] = true
			h.Timestamp, ok = p.Integer(64)
		case "next":
			seen[4] = true
			h.Next, ok = p.Integer(64)
		case "skipped":
			seen[5] = true
			h.Skipped, ok = p.Integer(64)
		case "count":
			seen[6] = true
			n, ok = p.Integer(32)
			h.Count = int(n)
		default:
			_, ok = p.Value() // a field added later: skip it
		}
		return ok
	})
	if !ok || !p.Lit("\n") {
		return BinaryPush{}, fmt.Errorf("%w: no JSON header line of the expected fields", ErrBadPush)
	}
	for k, name := range []string{"sub", "partition", "offset", "timestamp", "next", "", "count"} {
		if name != "" && !seen[k] {
			return BinaryPush{}, fmt.Errorf("%w: header has no %q", ErrBadPush, name)
		}
	}
	if h.Sub <= 0 || h.Partition < 0 || h.Count < 0 || h.Skipped < 0 {
		return BinaryPush{}, fmt.Errorf("%w: header field out of range (sub %d, partition %d, count %d, skipped %d)", ErrBadPush, h.Sub, h.Partition, h.Count, h.Skipped)
	}
	// Each record takes at least 4 bytes (two deltas, key, value, header
	// count), so a count the bytes cannot hold is refused before anyone
	// allocates for it.
	h.Records = msg[p.Pos():]
	if h.Count > len(h.Records)/4 {
		return BinaryPush{}, fmt.Errorf("%w: %d records announced in %d bytes", ErrBadPush, h.Count, len(h.Records))
	}
	return h, nil
}

// Each decodes the records of h in order, exactly h.Count of them, and
// calls fn with each (r is reused: fn copies what it keeps). r's key, value
// and header values are sub-slices of h.Records; header names are copied
// into strings. It stops at the first malformed record.
func (h *BinaryPush) Each(fn func(n int, r *engine.Record)) error {
	i := 0
	var r engine.Record
	for n := range h.Count {
		prev := r.Offset
		r = engine.Record{}
		var err error
		if i, err = h.record(i, n, prev, &r); err != nil {
			return err
		}
		fn(n, &r)
	}
	if i != len(h.Records) {
		return fmt.Errorf("%w: %d bytes after the %d records announced", ErrBadPush, len(h.Records)-i, h.Count)
	}
	return nil
}

// record decodes record n of h at h.Records[i:] into r and returns the
// index of the next record; prev is the offset of record n-1 (ignored for
// n == 0), which r's must exceed.
func (h *BinaryPush) record(i, n int, prev int64, r *engine.Record) (int, error) {
	b := h.Records
	if i >= len(b) {
		return i, fmt.Errorf("%w: record %d of %d: the message ends", ErrBadPush, n, h.Count)
	}
	d, w := binary.Uvarint(b[i:])
	if w <= 0 || d > math.MaxInt64 {
		return i, fmt.Errorf("%w: record %d: bad offset delta", ErrBadPush, n)
	}
	i += w
	r.Offset = h.Offset + int64(d)
	if n > 0 && r.Offset <= prev || n == 0 && d != 0 {
		return i, fmt.Errorf("%w: record %d: offset %d does not follow %d", ErrBadPush, n, r.Offset, prev)
	}
	ts, w := binary.Varint(b[i:])
	if w <= 0 {
		return i, fmt.Errorf("%w: record %d: bad timestamp delta", ErrBadPush, n)
	}
	i += w
	if n == 0 && ts != 0 {
		return i, fmt.Errorf("%w: record 0: timestamp delta %d (the header's timestamp is the first record's)", ErrBadPush, ts)
	}
	r.Timestamp = h.Timestamp + ts
	// A header takes at least two bytes: the bound keeps a lying count
	// from allocating more than the message could hold.
	i, e := decodeBinaryRecord(b, i, n, (len(b)-i)/2, r, nil)
	if e != nil {
		return i, fmt.Errorf("%w: %s", ErrBadPush, e.Message)
	}
	return i, nil
}

// DecodePushRecords decodes every record of h (Each). Keys, values and
// header values are sub-slices of h.Records.
func DecodePushRecords(h *BinaryPush) ([]engine.Record, error) {
	recs := make([]engine.Record, h.Count)
	if err := h.Each(func(n int, r *engine.Record) { recs[n] = *r }); err != nil {
		return nil, err
	}
	return recs, nil
}

// A JSON push of a subscribe that asked for value_lens ends with the byte
// length of each record's value,
//
//	{"sub":S,"partition":P,"next":N[,"skipped":K],"records":[R1,...,Rn],"value_lens":[L1,...,Ln]}
//
// Li the length of the JSON value of record i's "value" field exactly as
// it appears in Ri (an embedded value or a string with its quotes), 0 when
// Ri has no "value" field (a tombstone, value_b64); other pushes end with
// the records. The Go client asks for it, to find the end of an object or
// array value it does not need to check again (the server checked it when
// it was produced, or when it wrote the push), and checks the rest of the
// push as before.

// valueLensField opens a JSON push's value_lens.
const valueLensField = `,"value_lens":[`

// MaxJSONPushHeadLen bounds AppendJSONPushHead: its field names and four
// numbers of at most 20 digits.
const MaxJSONPushHeadLen = len(`{"sub":,"partition":,"next":,"skipped":,"records":[`) + 4*20

// AppendJSONPushHead appends the start of a JSON push of sub for partition
// p, up to the opening bracket of its records:
// {"sub":S,"partition":P,"next":N[,"skipped":K],"records":[
// (skipped only when not 0). The records follow, separated by commas
// (AppendRecordJSONLen), then AppendJSONPushTail.
func AppendJSONPushHead(b []byte, sub int64, p int, next, skipped int64) []byte {
	b = append(b, `{"sub":`...)
	b = strconv.AppendInt(b, sub, 10)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"next":`...)
	b = strconv.AppendInt(b, next, 10)
	if skipped != 0 {
		b = append(b, `,"skipped":`...)
		b = strconv.AppendInt(b, skipped, 10)
	}
	return append(b, `,"records":[`...)
}

// AppendJSONPushTail ends a JSON push after its records: the records'
// closing bracket, value_lens with one length per record (none when lens
// is nil: the subscribe did not ask for it), and the closing brace.
func AppendJSONPushTail(b []byte, lens []int32) []byte {
	b = append(b, ']')
	if lens == nil {
		return append(b, '}')
	}
	b = append(b, valueLensField...)
	for i, n := range lens {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, "]}"...)
}

// ValueLens reads the numbers of a JSON push's value_lens in order.
type ValueLens struct {
	b []byte // the numbers and their commas
	i int
	n int // numbers in b
}

// FindValueLens finds the value_lens field that ends the JSON push msg as
// the server writes it (AppendJSONPushTail):
// at is the index of its leading comma, so that msg[:at] ends the records
// array. ok is false when msg does not end so (a push of an older server,
// or not a push).
func FindValueLens(msg []byte) (at int, lens ValueLens, ok bool) {
	end := len(msg) - 2 // the ']' of value_lens
	if end < len(valueLensField) || msg[end] != ']' || msg[end+1] != '}' {
		return 0, ValueLens{}, false
	}
	j := end
	n := 0
	for j > 0 {
		c := msg[j-1]
		if c == ',' {
			n++
		} else if c < '0' || c > '9' {
			break
		}
		j--
	}
	if j < len(valueLensField) || string(msg[j-len(valueLensField):j]) != valueLensField {
		return 0, ValueLens{}, false
	}
	if j < end {
		n++ // n commas separate n+1 numbers
	}
	return j - len(valueLensField), ValueLens{b: msg[j:end], n: n}, true
}

// Count is the number of lengths.
func (l *ValueLens) Count() int { return l.n }

// Done reports whether every length has been read.
func (l *ValueLens) Done() bool { return l.i == len(l.b) }

// Next reads the next length: digits without a leading zero (but "0"), at
// most 10 of them and under 2^31, followed by a comma or the end. ok is
// false when none is left or the bytes are not such a number.
func (l *ValueLens) Next() (n int, ok bool) {
	j := l.i
	for j < len(l.b) && l.b[j] != ',' {
		j++
	}
	d := l.b[l.i:j] // digits only (FindValueLens)
	if len(d) == 0 || len(d) > 10 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	v := 0
	for _, c := range d {
		v = v*10 + int(c-'0')
	}
	if v > math.MaxInt32 {
		return 0, false
	}
	if j < len(l.b) {
		j++ // the comma
		if j == len(l.b) {
			return 0, false // a trailing comma
		}
	}
	l.i = j
	return v, true
}
