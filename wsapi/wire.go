package wsapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/internal/units"
	"github.com/pulselog/pulse/wsapi/wire"
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
	wire.RecordIn
	Records []wire.RecordIn `json:"records,omitempty"`

	// subscribe, commit, unsubscribe.
	From     json.RawMessage `json:"from,omitempty"`
	Consumer string          `json:"consumer,omitempty"`
	Sub      int64           `json:"sub,omitempty"`
	Offset   *int64          `json:"offset,omitempty"`
	Format   string          `json:"format,omitempty"` // subscribe: "json" or "binary" pushes
	// ValueLens (subscribe) ends each JSON push with value_lens.
	ValueLens bool `json:"value_lens,omitempty"`

	// create_topic.
	Config *wire.TopicConfig `json:"config,omitempty"`

	// spare is an array for Records that fastDecode fills before it
	// allocates one, and lastTopic the topic of the previous request that
	// fastDecode reuses when the topic is the same (decodeRequestInto
	// keeps both from request to request).
	spare     []wire.RecordIn
	lastTopic string
}

// toRecord validates r and turns it into an engine record. maxBytes bounds
// key + value + headers.
func toRecord(r *wire.RecordIn, maxBytes int) (engine.Record, error) {
	var rec engine.Record
	switch {
	case r.Key != nil && r.KeyB64 != nil:
		return rec, wire.Errorf(wire.CodeInvalidRequest, "record has both key and key_b64")
	case r.Key != nil:
		rec.Key = []byte(*r.Key)
	case r.KeyB64 != nil:
		k, err := decodeB64("key_b64", *r.KeyB64)
		if err != nil {
			return rec, err
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
		return rec, wire.Errorf(wire.CodeInvalidRequest, `record has no value (use "value", "value_b64", or "tombstone": true)`)
	case n > 1:
		return rec, wire.Errorf(wire.CodeInvalidRequest, "record has more than one of value, value_b64 and tombstone")
	case r.Tombstone:
		// rec.Value stays nil.
	case r.ValueB64 != nil:
		v, err := decodeB64("value_b64", *r.ValueB64)
		if err != nil {
			return rec, err
		}
		rec.Value = v
	case string(r.Value) == "null":
		// tombstone
	case r.Value[0] == '"':
		var s string
		if err := json.Unmarshal(r.Value, &s); err != nil {
			return rec, wire.Errorf(wire.CodeInvalidRequest, "value: %v", err)
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
		if _, twice := r.Headers[k]; twice {
			return rec, wire.Errorf(wire.CodeInvalidRequest, "header %q is in both headers and headers_b64: give each name once", k)
		}
		b, err := decodeB64(fmt.Sprintf("headers_b64[%q]", k), v)
		if err != nil {
			return rec, err
		}
		rec.Headers = append(rec.Headers, engine.Header{Key: k, Value: b})
		size += len(k) + len(b)
	}
	if n := len(rec.Headers); n > wire.MaxRecordHeaders {
		// The same limit as a binary frame's, whatever the encoding.
		return rec, wire.Errorf(wire.CodeInvalidRequest, "%d headers (at most %d per record)", n, wire.MaxRecordHeaders)
	}
	if len(rec.Headers) > 1 {
		// Maps iterate in no order: store the headers in their names'
		// order, the same every time.
		slices.SortFunc(rec.Headers, func(a, b engine.Header) int { return strings.Compare(a.Key, b.Key) })
	}
	if size > maxBytes {
		return rec, wire.Errorf(wire.CodeRecordTooLarge, "record of %d bytes exceeds the limit of %d bytes", size, maxBytes)
	}
	return rec, nil
}

// decodeB64 decodes s, the standard padded base64 of field. Base64 that
// is not that form is refused saying what it is (unpadded, or of the
// URL-safe alphabet) rather than with the decoder's "illegal base64 data
// at input byte 0", where byte 0 is fine.
func decodeB64(field, s string) ([]byte, *wire.Error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err == nil {
		return b, nil
	}
	if _, e := base64.RawStdEncoding.DecodeString(s); e == nil {
		return nil, wire.Errorf(wire.CodeInvalidRequest, `%s: base64 without its "=" padding: send %q`, field, s+strings.Repeat("=", (4-len(s)%4)%4))
	}
	raw := strings.TrimRight(s, "=")
	if _, e := base64.RawURLEncoding.DecodeString(raw); e == nil {
		return nil, wire.Errorf(wire.CodeInvalidRequest, `%s: URL-safe base64 ("-" and "_"): send standard base64 ("+" and "/"), padded`, field)
	}
	return nil, wire.Errorf(wire.CodeInvalidRequest, "%s: %v (want standard base64, padded)", field, err)
}

// engineConfig turns c into an engine configuration, defaults filled in.
func engineConfig(c *wire.TopicConfig) (engine.TopicConfig, error) {
	cfg := engine.DefaultTopicConfig()
	if c == nil {
		return cfg, nil
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"partitions", int64(c.Partitions)}, {"segment_bytes", c.SegmentBytes}, {"retention_ms", c.RetentionMs},
		{"retention_bytes", c.RetentionBytes}, {"tombstone_retention_ms", c.TombstoneRetentionMs},
	} {
		if e := notNegative(f.name, f.v); e != nil {
			return cfg, e
		}
	}
	if c.TombstoneRetentionMs > 0 {
		d, e := msDuration("tombstone_retention_ms", c.TombstoneRetentionMs)
		if e != nil {
			return cfg, e
		}
		cfg.TombstoneRetention = d
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
	d, e := msDuration("retention_ms", c.RetentionMs)
	if e != nil {
		return cfg, e
	}
	cfg.RetentionMaxAge = d
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

// notNegative refuses a negative value of the config field name, naming
// it: create_topic's and alter_topic's refusal.
func notNegative(name string, v int64) *wire.Error {
	if v < 0 {
		return wire.Errorf(wire.CodeInvalidConfig, "%s %d: must not be negative", name, v)
	}
	return nil
}

// msDuration turns a config field's milliseconds (not negative) into a
// time.Duration, refusing a value past what one holds rather than letting
// it wrap around.
func msDuration(field string, ms int64) (time.Duration, *wire.Error) {
	if ms > units.MaxDurationMillis {
		return 0, wire.Errorf(wire.CodeInvalidConfig, "%s %d: at most %d (about 292 years)", field, ms, units.MaxDurationMillis)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// wireConfig is the wire form of an engine configuration.
func wireConfig(c engine.TopicConfig) wire.TopicConfig {
	return wire.TopicConfig{
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

func wireTopic(t engine.TopicInfo) wire.TopicInfo {
	ti := wire.TopicInfo{Name: t.Name, Config: wireConfig(t.Config), Partitions: t.Partitions}
	if !t.CreatedAt.IsZero() {
		ti.CreatedAt = t.CreatedAt.UnixMilli()
	}
	if ti.Partitions == nil {
		ti.Partitions = []engine.PartitionInfo{}
	}
	return ti
}

// decodeRequest parses one JSON request: the fast path when it can, else
// encoding/json. A message that is not a JSON object (or not UTF-8) is
// CodeInvalidJSON without an id; an object with a field of the wrong type
// is CodeInvalidRequest naming the field, with the request's id when it
// could be read, so that a client matching replies by id gets its answer.
func decodeRequest(msg []byte, what string) (*request, *wire.Error) {
	return decodeRequestInto(msg, what, new(request))
}

// decodeRequestInto is decodeRequest decoding into req, which it clears
// first (keeping the array of its records for the next request's), and
// returns on success.
func decodeRequestInto(msg []byte, what string, req *request) (*request, *wire.Error) {
	if !utf8.Valid(msg) {
		return nil, wire.Errorf(wire.CodeInvalidJSON, "%s is not valid UTF-8 (text is UTF-8 on the wire: send bytes with value_b64 or in a binary produce frame)", what)
	}
	spare := req.Records
	if spare == nil {
		spare = req.spare
	}
	clear(spare[:cap(spare)]) // no record of an earlier request stays reachable
	*req = request{spare: spare[:0], lastTopic: req.Topic}
	if fastDecode(msg, req) {
		return req, nil
	}
	*req = request{}
	err := json.Unmarshal(msg, req)
	if err == nil {
		return req, nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		// encoding/json decodes every other field before it reports the
		// first mistyped one, so req.ID is the request's id.
		if strings.HasPrefix(te.Field, "records.") {
			if e := recordsTypeError(msg); e != nil {
				return req, e
			}
		}
		return req, wire.JSONError("", err)
	}
	return nil, wire.JSONError(what, err)
}

// recordsTypeError is the error of the first of msg's "records" that does
// not decode, named by its place ("record 2: field \"key\": ..."), as a
// POST body's records are: encoding/json names the field, not the record.
func recordsTypeError(msg []byte) *wire.Error {
	var body struct {
		Records []json.RawMessage `json:"records"`
	}
	if json.Unmarshal(msg, &body) != nil {
		return nil
	}
	for i, raw := range body.Records {
		var r wire.RecordIn
		if e := wire.DecodeRecord(raw, &r, fmt.Sprintf("record %d", i), false, ""); e != nil {
			return e
		}
	}
	return nil
}

// decodeOpFields parses msg (JSON) into v, the fields that one op reads
// beyond the request's: a value of the wrong type is invalid_request naming
// the field (prefix + its JSON name), as decodeRequest names the others.
func decodeOpFields(msg []byte, prefix string, v any) *wire.Error {
	err := json.Unmarshal(msg, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return wire.FieldTypeError(te, prefix+te.Field)
	}
	return wire.Errorf(wire.CodeInvalidRequest, "%s: %v", strings.TrimSuffix(prefix, "."), err)
}
