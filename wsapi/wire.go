package wsapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
)

// request is every client message of /v1/ws. Which fields matter depends on
// Op; unknown fields are ignored so that newer clients can talk to older
// servers.
type request struct {
	Op string          `json:"op"`
	ID json.RawMessage `json:"id,omitempty"`

	Topic     string `json:"topic,omitempty"`
	Partition *int   `json:"partition,omitempty"`

	// produce: one record inline, or Records.
	RecordIn
	Records []RecordIn `json:"records,omitempty"`

	// subscribe, commit, unsubscribe.
	From     json.RawMessage `json:"from,omitempty"`
	Consumer string          `json:"consumer,omitempty"`
	Sub      int64           `json:"sub,omitempty"`
	Offset   *int64          `json:"offset,omitempty"`

	// create_topic.
	Config *TopicConfig `json:"config,omitempty"`
}

// RecordIn is one record of a produce request. Value is any JSON: a JSON
// string is stored as its text, anything else as the JSON bytes as sent;
// ValueB64 carries arbitrary bytes; "value": null or Tombstone is a
// tombstone. Key (text) and KeyB64 (bytes) are optional: no key means a
// keyless record.
type RecordIn struct {
	Key        *string           `json:"key,omitempty"`
	KeyB64     *string           `json:"key_b64,omitempty"`
	Value      json.RawMessage   `json:"value,omitempty"`
	ValueB64   *string           `json:"value_b64,omitempty"`
	Tombstone  bool              `json:"tombstone,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	HeadersB64 map[string]string `json:"headers_b64,omitempty"`
	Partition  *int              `json:"partition,omitempty"`
}

// hasValue reports whether r says anything about a value.
func (r *RecordIn) hasValue() bool {
	return len(r.Value) > 0 || r.ValueB64 != nil || r.Tombstone
}

// toRecord validates r and turns it into an engine record. maxBytes bounds
// key + value + headers.
func (r *RecordIn) toRecord(maxBytes int) (engine.Record, error) {
	var rec engine.Record
	switch {
	case r.Key != nil && r.KeyB64 != nil:
		return rec, errorf(CodeInvalidRequest, "record has both key and key_b64")
	case r.Key != nil:
		rec.Key = []byte(*r.Key)
	case r.KeyB64 != nil:
		k, err := base64.StdEncoding.DecodeString(*r.KeyB64)
		if err != nil {
			return rec, errorf(CodeInvalidRequest, "key_b64: %v", err)
		}
		rec.Key = k
	}
	n := 0
	if len(r.Value) > 0 {
		n++
	}
	if r.ValueB64 != nil {
		n++
	}
	if r.Tombstone {
		n++
	}
	switch {
	case n == 0:
		return rec, errorf(CodeInvalidRequest, `record has no value (use "value", "value_b64", or "tombstone": true)`)
	case n > 1:
		return rec, errorf(CodeInvalidRequest, "record has more than one of value, value_b64 and tombstone")
	case r.Tombstone:
		// rec.Value stays nil.
	case r.ValueB64 != nil:
		v, err := base64.StdEncoding.DecodeString(*r.ValueB64)
		if err != nil {
			return rec, errorf(CodeInvalidRequest, "value_b64: %v", err)
		}
		rec.Value = v
	case string(r.Value) == "null":
		// tombstone
	case r.Value[0] == '"':
		var s string
		if err := json.Unmarshal(r.Value, &s); err != nil {
			return rec, errorf(CodeInvalidRequest, "value: %v", err)
		}
		rec.Value = []byte(s)
		rec.Attributes = engine.AttrTextValue // reads back as this text, "42" as "42"
	default:
		rec.Value = r.Value
		// r.Value is one JSON value: the request it came in was parsed as
		// JSON. Pushes embed it without checking it again.
		rec.Attributes = codec.AttrJSONValue
	}
	size := len(rec.Key) + len(rec.Value)
	for k, v := range r.Headers {
		rec.Headers = append(rec.Headers, engine.Header{Key: k, Value: []byte(v)})
		size += len(k) + len(v)
	}
	for k, v := range r.HeadersB64 {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return rec, errorf(CodeInvalidRequest, "headers_b64[%q]: %v", k, err)
		}
		rec.Headers = append(rec.Headers, engine.Header{Key: k, Value: b})
		size += len(k) + len(b)
	}
	if size > maxBytes {
		return rec, errorf(CodeRecordTooLarge, "record of %d bytes exceeds the limit of %d bytes", size, maxBytes)
	}
	return rec, nil
}

// appendRecordJSON appends the JSON form of rec (read from partition p) to
// dst: partition, offset, timestamp, key (key_b64 when not UTF-8), value
// (a string when it was produced as text, engine.AttrTextValue; else
// embedded as JSON when it was checked as JSON at produce time,
// codec.AttrJSONValue, or when the bytes are valid JSON, else a string;
// value_b64 when not UTF-8), tombstone, headers (headers_b64 for non-UTF-8
// values).
func appendRecordJSON(dst []byte, p int, rec *engine.Record) []byte {
	dst = append(dst, `{"partition":`...)
	dst = strconv.AppendInt(dst, int64(p), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, rec.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, rec.Timestamp, 10)
	if rec.Key != nil {
		if utf8.Valid(rec.Key) {
			dst = append(dst, `,"key":`...)
			dst = appendJSONString(dst, rec.Key)
		} else {
			dst = append(dst, `,"key_b64":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, rec.Key)
			dst = append(dst, '"')
		}
	}
	switch {
	case rec.Value == nil:
		dst = append(dst, `,"tombstone":true`...)
	case rec.Attributes&codec.AttrJSONValue != 0 && len(rec.Value) > 0:
		dst = append(dst, `,"value":`...)
		dst = append(dst, rec.Value...)
	case rec.Attributes&engine.AttrTextValue == 0 && len(rec.Value) > 0 && validJSON(rec.Value):
		dst = append(dst, `,"value":`...)
		dst = append(dst, rec.Value...)
	case utf8.Valid(rec.Value):
		dst = append(dst, `,"value":`...)
		dst = appendJSONString(dst, rec.Value)
	default:
		dst = append(dst, `,"value_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, rec.Value)
		dst = append(dst, '"')
	}
	dst = appendHeaders(dst, rec.Headers, true, `,"headers":{`)
	dst = appendHeaders(dst, rec.Headers, false, `,"headers_b64":{`)
	return append(dst, '}')
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
		dst = appendJSONString(dst, []byte(h.Key))
		dst = append(dst, ':')
		if text {
			dst = appendJSONString(dst, h.Value)
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 sequences are
// replaced by U+FFFD (callers pass valid UTF-8 except for header keys).
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// TopicConfig is the wire form of a topic's configuration. Zero fields take
// the defaults of engine.DefaultTopicConfig.
type TopicConfig struct {
	Partitions     int    `json:"partitions,omitempty"`
	Codec          string `json:"codec,omitempty"`         // "zstd" or "none"
	SegmentBytes   int64  `json:"segment_bytes,omitempty"` // segment roll size
	SyncMode       string `json:"sync_mode,omitempty"`     // "every-write" or "interval"
	RetentionMs    int64  `json:"retention_ms"`            // 0: no age limit (always in replies)
	RetentionBytes int64  `json:"retention_bytes"`         // 0: no size limit (always in replies)
	Cleanup        string `json:"cleanup,omitempty"`       // "delete" or "compact"
	// TombstoneRetentionMs is how long compaction keeps a tombstone after
	// its commit (0: the default, 24 h); ProtectCursors makes retention keep
	// the segments holding a consumer's cursor.
	TombstoneRetentionMs int64 `json:"tombstone_retention_ms,omitempty"`
	ProtectCursors       bool  `json:"protect_cursors,omitempty"`
}

// engineConfig turns c into an engine configuration, defaults filled in.
func (c *TopicConfig) engineConfig() (engine.TopicConfig, error) {
	cfg := engine.DefaultTopicConfig()
	if c == nil {
		return cfg, nil
	}
	if c.Partitions < 0 || c.SegmentBytes < 0 || c.RetentionMs < 0 || c.RetentionBytes < 0 || c.TombstoneRetentionMs < 0 {
		return cfg, errorf(CodeInvalidConfig, "partitions, segment_bytes, retention_ms, retention_bytes and tombstone_retention_ms must not be negative")
	}
	if c.TombstoneRetentionMs > 0 {
		cfg.TombstoneRetention = time.Duration(c.TombstoneRetentionMs) * time.Millisecond
	}
	cfg.ProtectCursors = c.ProtectCursors
	if c.Partitions > 0 {
		cfg.Partitions = c.Partitions
	}
	// The values are the engine's to judge (engine.ParseSyncMode and its
	// siblings); the ranges too, in CreateTopic, or the cluster's.
	if c.Codec != "" {
		if err := engine.CheckCodec(c.Codec); err != nil {
			return cfg, toError(err)
		}
		cfg.Codec = c.Codec
	}
	if c.SegmentBytes > 0 {
		cfg.SegmentMaxBytes = c.SegmentBytes
	}
	if c.SyncMode != "" {
		m, err := engine.ParseSyncMode(c.SyncMode)
		if err != nil {
			return cfg, toError(err)
		}
		cfg.SyncMode = m
	}
	cfg.RetentionMaxAge = time.Duration(c.RetentionMs) * time.Millisecond
	cfg.RetentionMaxBytes = c.RetentionBytes
	if c.Cleanup != "" {
		cl, err := engine.ParseCleanup(c.Cleanup)
		if err != nil {
			return cfg, toError(err)
		}
		cfg.Cleanup = cl
	}
	return cfg, nil
}

// wireConfig is the wire form of an engine configuration.
func wireConfig(c engine.TopicConfig) TopicConfig {
	return TopicConfig{
		Partitions:     c.Partitions,
		Codec:          c.Codec,
		SegmentBytes:   c.SegmentMaxBytes,
		SyncMode:       string(c.SyncMode),
		RetentionMs:    c.RetentionMaxAge.Milliseconds(),
		RetentionBytes: c.RetentionMaxBytes,
		Cleanup:        string(c.Cleanup),

		TombstoneRetentionMs: c.TombstoneRetention.Milliseconds(),
		ProtectCursors:       c.ProtectCursors,
	}
}

// TopicInfo is the wire form of a topic: its configuration and partitions.
type TopicInfo struct {
	Name       string                 `json:"name"`
	Config     TopicConfig            `json:"config"`
	CreatedAt  int64                  `json:"created_at"` // Unix ms
	Partitions []engine.PartitionInfo `json:"partitions"`
}

func wireTopic(t engine.TopicInfo) TopicInfo {
	ti := TopicInfo{Name: t.Name, Config: wireConfig(t.Config), Partitions: t.Partitions}
	if !t.CreatedAt.IsZero() {
		ti.CreatedAt = t.CreatedAt.UnixMilli()
	}
	if ti.Partitions == nil {
		ti.Partitions = []engine.PartitionInfo{}
	}
	return ti
}

// parseFrom parses a subscribe "from": "earliest", "latest", {"offset":N}
// or {"timestamp":ms}. An absent from means latest.
func parseFrom(raw json.RawMessage) (fromSpec, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return fromSpec{kind: fromLatest}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parseFromString(s)
	}
	var o struct {
		Offset    *int64 `json:"offset"`
		Timestamp *int64 `json:"timestamp"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || (o.Offset == nil) == (o.Timestamp == nil) {
		return fromSpec{}, errorf(CodeInvalidRequest, `from %s: want "earliest", "latest", {"offset":N} or {"timestamp":ms}`, raw)
	}
	if o.Offset != nil {
		if *o.Offset < 0 {
			return fromSpec{}, errorf(CodeOffsetOutOfRange, "from offset %d is negative", *o.Offset)
		}
		return fromSpec{kind: fromOffset, n: *o.Offset}, nil
	}
	return fromSpec{kind: fromTimestamp, n: *o.Timestamp}, nil
}

// parseFromString parses the text forms used by the tail endpoint's query:
// earliest, latest, an offset, or @ms for a timestamp.
func parseFromString(s string) (fromSpec, error) {
	switch s {
	case "", "latest":
		return fromSpec{kind: fromLatest}, nil
	case "earliest":
		return fromSpec{kind: fromEarliest}, nil
	}
	if len(s) > 1 && s[0] == '@' {
		ms, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil {
			return fromSpec{}, errorf(CodeInvalidRequest, "from %q: timestamp is not an integer of Unix milliseconds", s)
		}
		return fromSpec{kind: fromTimestamp, n: ms}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fromSpec{}, errorf(CodeInvalidRequest, "from %q: want earliest, latest, an offset or @timestamp-ms", s)
	}
	if n < 0 {
		return fromSpec{}, errorf(CodeOffsetOutOfRange, "from offset %d is negative", n)
	}
	return fromSpec{kind: fromOffset, n: n}, nil
}

type fromKind int

const (
	fromLatest fromKind = iota
	fromEarliest
	fromOffset
	fromTimestamp
)

// fromSpec is a parsed subscribe position.
type fromSpec struct {
	kind fromKind
	n    int64 // offset or timestamp
}

// decodeRequest parses one JSON request: the fast path when it can, else
// encoding/json. A message that is not a JSON object (or not UTF-8) is
// CodeInvalidJSON without an id; an object with a field of the wrong type
// is CodeInvalidRequest naming the field, with the request's id when it
// could be read, so that a client matching replies by id gets its answer.
func decodeRequest(msg []byte, what string) (*request, *Error) {
	if !utf8.Valid(msg) {
		return nil, errorf(CodeInvalidJSON, "%s is not valid UTF-8 (text is UTF-8 on the wire: send bytes with value_b64 or in a binary produce frame)", what)
	}
	var req request
	if fastDecode(msg, &req) {
		return &req, nil
	}
	req = request{}
	err := json.Unmarshal(msg, &req)
	if err == nil {
		return &req, nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		// encoding/json decodes every other field before it reports the
		// first mistyped one, so req.ID is the request's id.
		// The inline record's fields are the request's own.
		field := strings.ReplaceAll(te.Field, "RecordIn.", "")
		return &req, errorf(CodeInvalidRequest, "field %q: got %s, want %s", field, te.Value, jsonKind(te.Type))
	}
	return nil, errorf(CodeInvalidJSON, "%s is not a JSON object: %v", what, err)
}

// jsonKind names the JSON value that a Go type of a request field takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return t.String()
}
