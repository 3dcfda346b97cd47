package engine

import (
	"log/slog"
	"time"

	"github.com/pulselog/pulse/engine/plog"
)

// Options configure an Engine. DefaultOptions documents every default.
type Options struct {
	// Dir is the data directory (created if missing).
	Dir string

	// FlushBytes, FlushRecords and FlushInterval bound one drain of a
	// partition's append buffer: all records drained together become one batch.
	FlushBytes    int           // default 1 MiB
	FlushRecords  int           // default 1000
	FlushInterval time.Duration // default 100ms

	// SyncInterval and SyncBytes pace fsync for topics in sync-mode interval.
	SyncInterval time.Duration // default 1s
	SyncBytes    int64         // default 8 MiB

	// IndexIntervalBytes is the spacing of sparse index entries.
	IndexIntervalBytes int // default 4 KiB

	// HWMInterval bounds how stale the persisted hwm file may be.
	HWMInterval time.Duration // default 1s

	// HiddenTail says what recovery does with records past the persisted HWM.
	HiddenTail HiddenTailPolicy // default expose

	// RetentionInterval and CompactionInterval pace the maintenance sweeper;
	// zero disables the sweep (a pass can still be triggered by hand).
	RetentionInterval  time.Duration // default 30s
	CompactionInterval time.Duration // default 30s

	// Now is the clock retention ages and tombstone expiry are measured
	// with. Nil is time.Now; tests inject one instead of waiting a day.
	Now func() time.Time

	// MaxTopics and MaxPartitions cap what CreateTopic (and so a produce
	// that auto-creates a topic) may add: past them it fails with
	// ErrTooManyTopics. Every partition holds open file descriptors (two per
	// open segment), so the caps keep any local process from exhausting
	// the process's descriptors by creating topics. A data dir that already
	// holds more still opens. Negative: no cap.
	MaxTopics     int // default 1,000
	MaxPartitions int // default 4,000 (all topics together)

	// MaxOpenSegments bounds the segments whose files (a .log and an .index
	// descriptor each) are open at once, whatever the number of partitions:
	// past it the least recently used idle segments whose bytes are all
	// fsynced close their files and reopen them on the next read or append.
	// Negative: no bound.
	MaxOpenSegments int // default 2,048

	// Logger receives one line per partition whose recovery did work, and
	// maintenance outcomes. Nil discards.
	Logger *slog.Logger

	// Observer receives every partition's fsync times and commit sizes
	// (engine/plog/observe.go), for metrics. Nil: none.
	Observer Observer
}

// Observer is the partition logs' metrics hook (engine/plog.Observer).
type Observer = plog.Observer

// DefaultOptions returns the options Pulse runs with on dir. The partition
// logs' settings are engine/plog's defaults (plog.DefaultOptions, the one
// table of them); the facade adds its own.
func DefaultOptions(dir string) Options {
	l := plog.DefaultOptions()
	return Options{
		Dir:                dir,
		FlushBytes:         l.FlushBytes,
		FlushRecords:       l.FlushRecords,
		FlushInterval:      l.FlushInterval,
		SyncInterval:       l.SyncInterval,
		SyncBytes:          l.SyncBytes,
		IndexIntervalBytes: l.IndexIntervalBytes,
		HWMInterval:        l.HWMInterval,
		HiddenTail:         l.HiddenTail,
		RetentionInterval:  30 * time.Second,
		CompactionInterval: 30 * time.Second,
		MaxTopics:          DefaultMaxTopics,
		MaxPartitions:      DefaultMaxPartitions,
		MaxOpenSegments:    DefaultMaxOpenSegments,
	}
}

// The default caps of Options.MaxTopics and Options.MaxPartitions.
const (
	DefaultMaxTopics     = 1000
	DefaultMaxPartitions = 4000
	// DefaultMaxOpenSegments keeps at most 4,096 segment descriptors open.
	DefaultMaxOpenSegments = 2048
)
