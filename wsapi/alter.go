package wsapi

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/units"
	"github.com/pulselog/pulse/wsapi/wire"
)

// alterRequest is the body of an alter_topic request:
// {"op":"alter_topic","id":..,"topic":"orders","alter":{"retention_ms":0}}.
type alterRequest struct {
	Alter json.RawMessage `json:"alter"`
}

// alterableFields are the JSON names of wire.TopicAlter's fields: what an
// alter_topic can change, in the order its refusals list them; and
// configFields those of wire.TopicConfig, what create_topic takes.
var (
	alterableFields = jsonFieldNames(reflect.TypeFor[wire.TopicAlter]())
	configFields    = jsonFieldNames(reflect.TypeFor[wire.TopicConfig]())
)

// jsonFieldNames returns the JSON names of struct type t's fields.
func jsonFieldNames(t reflect.Type) []string {
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// unknownField returns the first name (in sorted order) of fields that
// is not in known.
func unknownField(fields map[string]json.RawMessage, known []string) (string, bool) {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(known, name) {
			return name, true
		}
	}
	return "", false
}

// checkConfigFields refuses a create_topic request msg whose "config"
// names a field create_topic does not know (a misspelt one would
// otherwise be dropped, and the topic created without it).
func checkConfigFields(msg []byte) *wire.Error {
	var body struct {
		Config map[string]json.RawMessage `json:"config"`
	}
	if json.Unmarshal(msg, &body) != nil {
		return nil // decodeRequest judged the types already
	}
	if name, ok := unknownField(body.Config, configFields); ok {
		return wire.Errorf(wire.CodeInvalidConfig, "config: unknown field %q (create_topic takes %s)", name, strings.Join(configFields, ", "))
	}
	return nil
}

// decodeAlter reads the "alter" object of an alter_topic request msg. A
// field alter_topic does not change (the codec and protect_cursors, fixed
// at creation; a misspelt name) is invalid_config naming it, so that no
// reply suggests it changed; a field of the wrong type is invalid_request
// naming it.
func decodeAlter(msg []byte) (*wire.TopicAlter, *wire.Error) {
	var body alterRequest
	var fields map[string]json.RawMessage
	if json.Unmarshal(msg, &body) != nil || json.Unmarshal(body.Alter, &fields) != nil || fields == nil {
		return nil, wire.Errorf(wire.CodeInvalidRequest, `alter_topic needs an "alter" object, e.g. {"retention_ms":604800000}`)
	}
	if name, ok := unknownField(fields, alterableFields); ok {
		return nil, wire.Errorf(wire.CodeInvalidConfig, "alter: field %q cannot be altered (alter_topic changes %s; the codec and protect_cursors are fixed at creation)", name, strings.Join(alterableFields, ", "))
	}
	var a wire.TopicAlter
	if e := decodeOpFields(body.Alter, "alter.", &a); e != nil {
		return nil, e
	}
	return &a, nil
}

// topicAlterer is the backend's AlterTopic (*engine.Engine has it).
type topicAlterer interface {
	AlterTopic(name string, cfg engine.TopicConfig) error
}

// applyAlter changes cfg by a.
func applyAlter(a *wire.TopicAlter, cfg engine.TopicConfig) (engine.TopicConfig, *wire.Error) {
	if a.RetentionMs != nil {
		if e := notNegative("retention_ms", *a.RetentionMs); e != nil {
			return cfg, e
		}
		d, e := msDuration("retention_ms", *a.RetentionMs)
		if e != nil {
			return cfg, e
		}
		cfg.RetentionMaxAge = d
	}
	if a.RetentionBytes != nil {
		if e := notNegative("retention_bytes", *a.RetentionBytes); e != nil {
			return cfg, e
		}
		cfg.RetentionMaxBytes = *a.RetentionBytes
	}
	if a.Cleanup != nil {
		c, err := engine.ParseCleanup(*a.Cleanup)
		if err != nil {
			return cfg, wire.Errorf(wire.CodeInvalidConfig, "cleanup %q: want delete or compact", *a.Cleanup)
		}
		cfg.Cleanup = c
	}
	if a.Partitions != nil {
		if *a.Partitions < cfg.Partitions {
			return cfg, wire.Errorf(wire.CodeInvalidConfig, "partitions %d: a topic's partitions can grow, never shrink (it has %d)", *a.Partitions, cfg.Partitions)
		}
		cfg.Partitions = *a.Partitions
	}
	if a.SegmentBytes != nil {
		if engine.CheckSegmentBytes(*a.SegmentBytes) != nil {
			return cfg, wire.Errorf(wire.CodeInvalidConfig, "segment_bytes %d: want %d..%d (1 MiB..1 GiB)", *a.SegmentBytes, engine.MinSegmentMaxBytes, engine.MaxSegmentMaxBytes)
		}
		cfg.SegmentMaxBytes = *a.SegmentBytes
	}
	if a.SyncMode != nil {
		m, err := engine.ParseSyncMode(*a.SyncMode)
		if err != nil {
			return cfg, wire.Errorf(wire.CodeInvalidConfig, "sync_mode %q: want every-write or interval", *a.SyncMode)
		}
		cfg.SyncMode = m
	}
	if a.TombstoneRetentionMs != nil {
		// The engine reads a zero tombstone retention as its 24 h default:
		// here 0 would silently mean 24 h, so it is refused.
		if ms := *a.TombstoneRetentionMs; ms < 1 {
			def := engine.DefaultTopicConfig().TombstoneRetention
			return cfg, wire.Errorf(wire.CodeInvalidConfig, "tombstone_retention_ms %d: want at least 1 (1 drops tombstones at the next compaction; there is no 0 for the default: give %d, %s)",
				ms, def.Milliseconds(), units.FormatDuration(def))
		}
		d, e := msDuration("tombstone_retention_ms", *a.TombstoneRetentionMs)
		if e != nil {
			return cfg, e
		}
		cfg.TombstoneRetention = d
	}
	return cfg, nil
}

// opAlterTopic changes a topic's configuration and replies with the topic
// as it now is. msg is the whole request (its "alter" object is read here).
func (c *conn) opAlterTopic(req *request, msg []byte) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	alt, ok := c.srv.b.(topicAlterer)
	if !ok {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeUnknownOp, "alter_topic: this server cannot change a topic's configuration"))
		return
	}
	a, perr := decodeAlter(msg)
	if perr != nil {
		c.reply(req.ID, nil, perr)
		return
	}
	t, err := c.srv.b.Describe(req.Topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	cfg, perr := applyAlter(a, t.Config)
	if perr != nil {
		c.reply(req.ID, nil, perr)
		return
	}
	if err := alt.AlterTopic(req.Topic, cfg); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	if t, err = c.srv.b.Describe(req.Topic); err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.replyJSON(req.ID, "topic", wireTopic(t))
}
