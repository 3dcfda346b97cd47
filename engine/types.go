package engine

import (
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/compact"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/recovery"
)

// Record is one event: see codec.Record. On produce, Offset and Timestamp are
// ignored (the log assigns them); on read they are set.
type Record = codec.Record

// Header is one record header.
type Header = codec.Header

// AttrTextValue is the Record.Attributes bit of a value produced as text:
// it reads back as text even when its bytes are valid JSON
// (engine/codec/doc.go).
const AttrTextValue = codec.AttrTextValue

// SyncMode says when an append is acknowledged: the partition log's
// type (engine/plog.SyncMode), the one definition.
type SyncMode = plog.SyncMode

const (
	// SyncEveryWrite acks only after the batch holding the record is fsynced
	// and re-read with a verified CRC (group commit). Strict.
	SyncEveryWrite = plog.SyncEveryWrite
	// SyncInterval acks once the write reached the OS; fsync happens every
	// SyncInterval / SyncBytes, on roll, on close and on explicit Sync. Lax.
	SyncInterval = plog.SyncInterval
)

// Cleanup is a topic's cleanup policy.
type Cleanup string

const (
	CleanupDelete  Cleanup = "delete"
	CleanupCompact Cleanup = "compact"
)

// HiddenTailPolicy says what recovery does with records between the
// persisted high-watermark and the recovered log end (recovery.HiddenTailPolicy).
type HiddenTailPolicy = recovery.HiddenTailPolicy

const (
	// HiddenTailExpose fsyncs the recovered tail and makes it visible (default).
	HiddenTailExpose = recovery.HiddenTailExpose
	// HiddenTailHide keeps it hidden until the next commit moves the HWM over it.
	HiddenTailHide = recovery.HiddenTailHide
)

// TopicConfig is a topic's configuration. Zero fields take the defaults of
// DefaultTopicConfig when a topic is created.
type TopicConfig struct {
	Partitions         int           `json:"partitions"`
	Codec              string        `json:"codec"`               // "zstd" (default) or "none"
	SegmentMaxBytes    int64         `json:"segment_max_bytes"`   // default 64 MiB, at least 1 MiB
	SyncMode           SyncMode      `json:"sync_mode"`           // default every-write
	RetentionMaxAge    time.Duration `json:"retention_max_age"`   // 0: no age limit
	RetentionMaxBytes  int64         `json:"retention_max_bytes"` // 0: no size limit
	Cleanup            Cleanup       `json:"cleanup"`             // default delete
	TombstoneRetention time.Duration `json:"tombstone_retention"` // default 24h (compacted topics)
	ProtectCursors     bool          `json:"protect_cursors"`     // retention keeps segments holding a live cursor
}

// DefaultTopicConfig is the configuration of a topic created without one,
// including topics auto-created on first produce.
//
// The codec, segment size and sync mode are the partition log's defaults
// (plog.DefaultOptions), the tombstone retention compaction's
// (compact.DefaultOptions).
func DefaultTopicConfig() TopicConfig {
	l := plog.DefaultOptions()
	return TopicConfig{
		Partitions:         1,
		Codec:              l.Codec.String(),
		SegmentMaxBytes:    l.SegmentMaxBytes,
		SyncMode:           l.SyncMode,
		Cleanup:            CleanupDelete,
		TombstoneRetention: compact.DefaultOptions().TombstoneRetention,
	}
}

// Ack is the acknowledgement of one produced record.
type Ack struct {
	Partition int   `json:"partition"`
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"` // commit time, Unix ms
}

// ReadResult is what a read of one partition returns.
type ReadResult struct {
	Records  []Record
	Next     int64 // offset to read from next time
	HWM      int64 // high-watermark at the time of the read
	LogStart int64 // first offset still stored (after retention)
	Skipped  int64 // records skipped because they sit in a corrupt range
	// Skips are the ranges Skipped adds up, in offset order (nil from a
	// source that does not say where it skipped).
	Skips []plog.Skip
}

// SkippedBelow returns the offsets of r's Skipped that lie below offset:
// what a reader that hands on r's records up to offset (and reads from
// offset next) has passed over; a range that goes on past offset counts up
// to it. At or past r.Next it is all of Skipped.
func (r *ReadResult) SkippedBelow(offset int64) int64 {
	if offset >= r.Next || r.Skips == nil {
		return r.Skipped
	}
	var n int64
	for _, s := range r.Skips {
		if s.First < offset {
			n += min(s.End, offset) - s.First
		}
	}
	return n
}

// TopicInfo describes a topic for listings.
type TopicInfo struct {
	Name       string          `json:"name"`
	Config     TopicConfig     `json:"config"`
	CreatedAt  time.Time       `json:"created_at"`
	Partitions []PartitionInfo `json:"partitions"`
}

// PartitionInfo describes one partition's log.
type PartitionInfo struct {
	Topic          string `json:"topic"`
	Partition      int    `json:"partition"`
	LogStart       int64  `json:"log_start"`
	HWM            int64  `json:"hwm"`
	LEO            int64  `json:"leo"`         // log end offset (next offset to assign)
	HiddenTail     int64  `json:"hidden_tail"` // records in [HWM, LEO) kept hidden after recovery
	Segments       int    `json:"segments"`
	Bytes          int64  `json:"bytes"` // on disk, all segments
	Degraded       bool   `json:"degraded"`
	SkippedRecords int64  `json:"skipped_records"`
	Compacting     bool   `json:"compacting"`
	// Failed is why the partition's last write failed (an I/O error, a full
	// disk), empty while it serves. Every append is a retry: the first that
	// succeeds clears it.
	Failed string `json:"failed,omitempty"`
}

// SegmentInfo describes one segment of a partition.
type SegmentInfo struct {
	Base           int64  `json:"base"`
	Next           int64  `json:"next"` // exclusive end offset
	Bytes          int64  `json:"bytes"`
	Records        int64  `json:"records"`
	Batches        int64  `json:"batches"`
	FirstTimestamp int64  `json:"first_timestamp"`
	LastTimestamp  int64  `json:"last_timestamp"`
	Codec          string `json:"codec"`     // "none", "zstd" or "mixed"
	RawBytes       int64  `json:"raw_bytes"` // records sections before compression
	Sealed         bool   `json:"sealed"`
	Sparse         bool   `json:"sparse"` // holds compacted (sparse-offset) batches
}
