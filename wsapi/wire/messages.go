package wire

import (
	"encoding/json"

	"github.com/pulselog/pulse/engine"
)

// The messages of the protocol that both sides read or write
// (docs/websocket.md). The server's conversions to and from the engine's
// types are package wsapi's (toRecord, engineConfig, applyAlter, wireTopic).

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

// HasValue reports whether r says anything about a value.
func (r *RecordIn) HasValue() bool {
	return len(r.Value) > 0 || r.ValueB64 != nil || r.Tombstone
}

// HasRecordFields reports whether r has any field of a record besides
// Partition: a value, a key or headers. A request that carries its
// records elsewhere ("records", a binary frame) must have none.
func (r *RecordIn) HasRecordFields() bool {
	return r.HasValue() || r.Key != nil || r.KeyB64 != nil || r.Headers != nil || r.HeadersB64 != nil
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

// TopicInfo is the wire form of a topic: its configuration and partitions.
type TopicInfo struct {
	Name       string                 `json:"name"`
	Config     TopicConfig            `json:"config"`
	CreatedAt  int64                  `json:"created_at"` // Unix ms
	Partitions []engine.PartitionInfo `json:"partitions"`
}

// TopicAlter is the change of an alter_topic request: each field set is
// changed, each left out keeps its value, and every change applies live
// (engine.AlterTopic): retention, cleanup and tombstone_retention_ms from
// the next maintenance pass, segment_bytes from the next batch written,
// sync_mode from the next produce, and partitions grow at once (never
// shrink). A refused change (invalid_config, too_many_topics past the
// server's partition cap) changes nothing.
type TopicAlter struct {
	RetentionMs    *int64  `json:"retention_ms,omitempty"`    // 0: no age limit
	RetentionBytes *int64  `json:"retention_bytes,omitempty"` // 0: no size limit
	Cleanup        *string `json:"cleanup,omitempty"`         // "delete" or "compact"
	Partitions     *int    `json:"partitions,omitempty"`
	SegmentBytes   *int64  `json:"segment_bytes,omitempty"`
	SyncMode       *string `json:"sync_mode,omitempty"`
	// TombstoneRetentionMs is how long compaction keeps a tombstone after
	// its commit: at least 1 (1 drops tombstones at the next compaction;
	// unlike create_topic's, 0 is not the default).
	TombstoneRetentionMs *int64 `json:"tombstone_retention_ms,omitempty"`
}

// ConsumerCursor is one consumer's committed cursor on one partition.
type ConsumerCursor struct {
	Consumer  string `json:"consumer"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"` // the next offset the consumer reads
	Lag       int64  `json:"lag"`    // HWM minus Offset
}

// TopicConsumers is the reply of a consumers request:
// {"op":"consumers","topic":"orders"} → {"topic":{"name":..,"consumers":[..]}}.
// With "consumer", only that consumer's cursors are listed. Members lists,
// by consumer, the live members of the listed consumers (and of the one
// named) that have any: Kafka groups' members, which a running server with
// a Kafka listener reports; websocket consumers have none.
type TopicConsumers struct {
	Name      string                             `json:"name"`
	Consumers []ConsumerCursor                   `json:"consumers"`
	Members   map[string][]engine.ConsumerMember `json:"members,omitempty"`
}

// DeletedConsumer is the reply of a delete_consumer request:
// {"consumer":{"name":..,"dry_run":..,"cursors":[..]}}, the cursors deleted
// (or, with dry_run, that would be), with their lag as they were.
type DeletedConsumer struct {
	Name    string                `json:"name"`
	DryRun  bool                  `json:"dry_run"`
	Cursors []engine.ConsumerInfo `json:"cursors"`
}

// StartPos is where a subscription starts in one partition (subscribe reply).
type StartPos struct {
	Partition int   `json:"partition"`
	From      int64 `json:"from"`
}
