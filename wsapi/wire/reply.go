package wire

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
)

// The server's writers of the messages the client reads by the thousand
// (acks, error replies, records of pushes, tails and reads), in the forms
// docs/websocket.md and docs/http.md give. The client's fast parsers read
// exactly these forms (wsclient's client_json.go).

// AppendReply appends the reply frame to request id to b: {"id":..,
// then the error field of err, or fields (the reply's fields, without
// braces), or "ok":true when both are nil, then }.
func AppendReply(b []byte, id json.RawMessage, fields []byte, err *Error) []byte {
	b = append(b, '{')
	if len(id) > 0 {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	switch {
	case err != nil:
		b = AppendErrorField(b, err)
	case fields == nil:
		b = append(b, `"ok":true`...)
	default:
		b = append(b, fields...)
	}
	return append(b, '}')
}

// AppendErrorField appends the "error" field of an error reply,
// "error":{"code":..,"message":..}.
func AppendErrorField(b []byte, e *Error) []byte {
	b = append(b, `"error":{"code":`...)
	b = AppendJSONString(b, []byte(e.Code))
	b = append(b, `,"message":`...)
	b = AppendJSONString(b, []byte(e.Message))
	return append(b, '}')
}

// AppendAckFields appends {"partition":..,"offset":..,"timestamp":..} fields
// (without braces).
func AppendAckFields(b []byte, p int, off, ts int64) []byte {
	b = append(b, `"partition":`...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, off, 10)
	b = append(b, `,"timestamp":`...)
	return strconv.AppendInt(b, ts, 10)
}

// AppendAcks appends the "acks" field of a produce reply,
// "acks":[{"partition":..,"offset":..,"timestamp":..},...].
func AppendAcks(b []byte, acks []engine.Ack) []byte {
	b = append(b, `"acks":[`...)
	for i, a := range acks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = AppendAckFields(b, a.Partition, a.Offset, a.Timestamp)
		b = append(b, '}')
	}
	return append(b, ']')
}

// AppendRecordJSON appends the JSON form of rec (read from partition p) to
// dst: partition, offset, timestamp, key (key_b64 when not UTF-8), value
// (a string when it was produced as text, engine.AttrTextValue; else
// embedded as JSON when it was checked as JSON at produce time,
// codec.AttrJSONValue, or when the bytes are valid JSON other than null,
// else a string;
// value_b64 when not UTF-8), tombstone, headers (headers_b64 for non-UTF-8
// values).
func AppendRecordJSON(dst []byte, p int, rec *engine.Record) []byte {
	dst, _ = AppendRecordJSONLen(dst, p, rec)
	return dst
}

// AppendRecordJSONLen is AppendRecordJSON, also returning the length in
// bytes of the JSON value of the record's "value" field without the
// whitespace around it (a value stored as bytes is embedded as it is,
// whitespace included), 0 when it has none (a tombstone, or value_b64):
// what a JSON push's value_lens says of the record (AppendJSONPushTail).
func AppendRecordJSONLen(dst []byte, p int, rec *engine.Record) ([]byte, int) {
	dst = append(dst, `{"partition":`...)
	dst = strconv.AppendInt(dst, int64(p), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, rec.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, rec.Timestamp, 10)
	if rec.Key != nil {
		if utf8.Valid(rec.Key) {
			dst = append(dst, `,"key":`...)
			dst = AppendJSONString(dst, rec.Key)
		} else {
			dst = append(dst, `,"key_b64":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, rec.Key)
			dst = append(dst, '"')
		}
	}
	vlen, embed := embeddedJSON(rec)
	switch {
	case rec.Value == nil:
		dst = append(dst, `,"tombstone":true`...)
	case embed:
		dst = append(dst, `,"value":`...)
		dst = append(dst, rec.Value...)
	case utf8.Valid(rec.Value):
		dst = append(dst, `,"value":`...)
		n := len(dst)
		dst = AppendJSONString(dst, rec.Value)
		vlen = len(dst) - n
	default:
		dst = append(dst, `,"value_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, rec.Value)
		dst = append(dst, '"')
	}
	dst = appendHeaders(dst, rec.Headers, true, `,"headers":{`)
	dst = appendHeaders(dst, rec.Headers, false, `,"headers_b64":{`)
	return append(dst, '}'), vlen
}

// embeddedJSON reports whether rec's value goes into a JSON push as JSON
// (checked as JSON when produced, or valid JSON not produced as text), and
// then its length without the whitespace around it. Bytes that read as the
// JSON null go as a string instead: "value":null would read as a tombstone.
func embeddedJSON(rec *engine.Record) (int, bool) {
	v := rec.Value
	if len(v) == 0 || rec.Attributes&codec.AttrJSONValue == 0 && (rec.Attributes&engine.AttrTextValue != 0 || !ValidJSON(v)) {
		return 0, false
	}
	t := trimWS(v)
	if string(t) == "null" {
		return 0, false
	}
	return len(t), true
}

// appendHeaders appends the headers whose value is (text) or is not (!text)
// valid UTF-8 as one JSON object introduced by open; nothing when none is.
func appendHeaders(dst []byte, hs []engine.Header, text bool, open string) []byte {
	first := true
	for _, h := range hs {
		if utf8.Valid(h.Value) != text {
			continue
		}
		if first {
			dst = append(dst, open...)
			first = false
		} else {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, []byte(h.Key))
		dst = append(dst, ':')
		if text {
			dst = AppendJSONString(dst, h.Value)
		} else {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, h.Value)
			dst = append(dst, '"')
		}
	}
	if !first {
		dst = append(dst, '}')
	}
	return dst
}

// trimWS returns b without the JSON whitespace at its ends.
func trimWS(b []byte) []byte {
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
