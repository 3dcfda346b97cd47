package wsapi

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/pulselog/pulse/engine"
)

// TopicAlter is the change of an alter_topic request: each field set is
// changed, each left out keeps its value, and every change applies live
// (engine.AlterTopic): retention and cleanup from the next maintenance
// pass, segment_bytes from the next batch written, sync_mode from the next
// produce, and partitions grow at once (never shrink). A refused change
// (invalid_config, too_many_topics past the server's partition cap)
// changes nothing.
type TopicAlter struct {
	RetentionMs    *int64  `json:"retention_ms,omitempty"`    // 0: no age limit
	RetentionBytes *int64  `json:"retention_bytes,omitempty"` // 0: no size limit
	Cleanup        *string `json:"cleanup,omitempty"`         // "delete" or "compact"
	Partitions     *int    `json:"partitions,omitempty"`
	SegmentBytes   *int64  `json:"segment_bytes,omitempty"`
	SyncMode       *string `json:"sync_mode,omitempty"`
}

// alterRequest is the body of an alter_topic request:
// {"op":"alter_topic","id":..,"topic":"orders","alter":{"retention_ms":0}}.
type alterRequest struct {
	Alter *TopicAlter `json:"alter"`
}

// topicAlterer is the backend's AlterTopic (*engine.Engine has it).
type topicAlterer interface {
	AlterTopic(name string, cfg engine.TopicConfig) error
}

// apply changes cfg by a.
func (a *TopicAlter) apply(cfg engine.TopicConfig) (engine.TopicConfig, *Error) {
	if a.RetentionMs != nil {
		if *a.RetentionMs < 0 {
			return cfg, errorf(CodeInvalidConfig, "retention_ms %d: must not be negative", *a.RetentionMs)
		}
		cfg.RetentionMaxAge = time.Duration(*a.RetentionMs) * time.Millisecond
	}
	if a.RetentionBytes != nil {
		if *a.RetentionBytes < 0 {
			return cfg, errorf(CodeInvalidConfig, "retention_bytes %d: must not be negative", *a.RetentionBytes)
		}
		cfg.RetentionMaxBytes = *a.RetentionBytes
	}
	if a.Cleanup != nil {
		switch c := engine.Cleanup(*a.Cleanup); c {
		case engine.CleanupDelete, engine.CleanupCompact:
			cfg.Cleanup = c
		default:
			return cfg, errorf(CodeInvalidConfig, "cleanup %q: want delete or compact", *a.Cleanup)
		}
	}
	if a.Partitions != nil {
		if *a.Partitions < cfg.Partitions {
			return cfg, errorf(CodeInvalidConfig, "partitions %d: a topic's partitions can grow, never shrink (it has %d)", *a.Partitions, cfg.Partitions)
		}
		cfg.Partitions = *a.Partitions
	}
	if a.SegmentBytes != nil {
		if n := *a.SegmentBytes; n < engine.MinSegmentMaxBytes || n > engine.MaxSegmentMaxBytes {
			return cfg, errorf(CodeInvalidConfig, "segment_bytes %d: want %d..%d (1 MiB..1 GiB)", n, engine.MinSegmentMaxBytes, engine.MaxSegmentMaxBytes)
		}
		cfg.SegmentMaxBytes = *a.SegmentBytes
	}
	if a.SyncMode != nil {
		switch m := engine.SyncMode(*a.SyncMode); m {
		case engine.SyncEveryWrite, engine.SyncInterval:
			cfg.SyncMode = m
		default:
			return cfg, errorf(CodeInvalidConfig, "sync_mode %q: want every-write or interval", *a.SyncMode)
		}
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
		c.reply(req.ID, nil, errorf(CodeUnknownOp, "alter_topic: this server cannot change a topic's configuration"))
		return
	}
	var body alterRequest
	dec := json.NewDecoder(bytes.NewReader(msg))
	if err := dec.Decode(&body); err != nil || body.Alter == nil {
		c.reply(req.ID, nil, errorf(CodeInvalidRequest, `alter_topic needs an "alter" object, e.g. {"retention_ms":604800000}`))
		return
	}
	t, err := c.srv.b.Describe(req.Topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	cfg, perr := body.Alter.apply(t.Config)
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
