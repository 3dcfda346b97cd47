package plog

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// SyncMode says when an append is acknowledged (docs/architecture.md, "engine/plog").
type SyncMode string

const (
	// SyncEveryWrite acks an append only after the batch holding it was
	// fsynced and re-read with a verified CRC. Concurrent appends share one
	// batch and one fsync (group commit).
	SyncEveryWrite SyncMode = "every-write"
	// SyncInterval acks an append once it was written to the OS; fsync runs
	// every SyncInterval or SyncBytes, on roll, on Close, on Sync, and as soon
	// as a reader waits for new records (records become visible only once
	// fsynced, in every mode).
	SyncInterval SyncMode = "interval"
)

// Options configure one partition log. DefaultOptions documents the defaults.
type Options struct {
	// Topic and Partition label errors and the recovery report.
	Topic     string
	Partition int

	// Codec compresses each batch's records section.
	Codec codec.Codec // default zstd

	// SegmentMaxBytes rolls the active segment once a batch would take it
	// past this size. SetSegmentMaxBytes changes it while the log runs.
	SegmentMaxBytes int64 // default 64 MiB

	// IndexIntervalBytes is the spacing of sparse index entries.
	IndexIntervalBytes int // default 4 KiB

	// FlushBytes and FlushRecords bound one batch: the flusher drains the
	// append buffer whenever it is free, cutting what it drains into batches
	// no larger than these.
	FlushBytes   int // default 1 MiB
	FlushRecords int // default 1000

	// FlushInterval is how often an idle flusher wakes to run time-based
	// work: interval-mode fsync and hwm persistence.
	FlushInterval time.Duration // default 100ms

	SyncMode     SyncMode      // default every-write; SetSyncMode changes it while the log runs
	SyncInterval time.Duration // interval mode: fsync at least this often; default 1s
	SyncBytes    int64         // interval mode: fsync once this much is unsynced; default 8 MiB

	// VisibleWithin bounds, in interval mode, how long an acked append
	// waits before the fsync that makes it visible: the first write after
	// an fsync starts a window of this length, every write in it shares one
	// fsync at its end, so records become visible about VisibleWithin plus
	// one fdatasync after their ack, with or without readers, at no more
	// than one fsync per window. Negative: only SyncInterval, SyncBytes and
	// waiting readers trigger the fsync.
	VisibleWithin time.Duration // default 5ms

	// HWMInterval bounds how far the persisted hwm file may lag the HWM.
	HWMInterval time.Duration // default 1s

	// HiddenTail is the recovery policy for records past the persisted HWM:
	// "expose" (default) or "hide".
	HiddenTail recovery.HiddenTailPolicy

	// RecordedHWM is the high-watermark meta.db recorded for the partition
	// (0: none), which recovery counts as acknowledged (recovery.Options).
	RecordedHWM int64

	// MaxRecordBytes refuses a record whose encoding is larger.
	MaxRecordBytes int // default 16 MiB

	// CacheBytes bounds the decoded batches reads keep cached (the batch
	// read last is always kept).
	CacheBytes int // default 4 MiB

	// FilePool, when set, bounds the descriptors the partition's segments
	// keep open (shared by every partition of an engine): idle segments
	// whose bytes are all fsynced and verified close their files and
	// reopen them on the next read or append.
	FilePool *segment.Pool

	// Logger receives recovery and failure lines. Nil discards.
	Logger *slog.Logger

	// Observer receives fsync times and commit sizes (observe.go). Nil: none.
	Observer Observer
}

// DefaultOptions returns the options a partition runs with unless its
// topic or the engine says otherwise.
func DefaultOptions() Options {
	return Options{
		Codec:              codec.CodecZstd,
		SegmentMaxBytes:    64 << 20,
		IndexIntervalBytes: 4 << 10,
		FlushBytes:         1 << 20,
		FlushRecords:       1000,
		FlushInterval:      100 * time.Millisecond,
		SyncMode:           SyncEveryWrite,
		SyncInterval:       time.Second,
		SyncBytes:          8 << 20,
		VisibleWithin:      5 * time.Millisecond,
		HWMInterval:        time.Second,
		HiddenTail:         recovery.HiddenTailExpose,
		MaxRecordBytes:     16 << 20,
		CacheBytes:         4 << 20,
	}
}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	orDefault(&o.SegmentMaxBytes, d.SegmentMaxBytes)
	orDefault(&o.IndexIntervalBytes, d.IndexIntervalBytes)
	orDefault(&o.FlushBytes, d.FlushBytes)
	orDefault(&o.FlushRecords, d.FlushRecords)
	orDefault(&o.FlushInterval, d.FlushInterval)
	orDefault(&o.SyncInterval, d.SyncInterval)
	orDefault(&o.SyncBytes, d.SyncBytes)
	orDefault(&o.HWMInterval, d.HWMInterval)
	if o.VisibleWithin == 0 {
		o.VisibleWithin = d.VisibleWithin
	}
	orDefault(&o.MaxRecordBytes, d.MaxRecordBytes)
	orDefault(&o.CacheBytes, d.CacheBytes)
	if o.SyncMode == "" {
		o.SyncMode = d.SyncMode
	}
	if o.HiddenTail == "" {
		o.HiddenTail = d.HiddenTail
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// orDefault replaces a zero or negative *v with d.
func orDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// liveOptions are the options a running log lets its owner change
// (SetSegmentMaxBytes, SetSyncMode). The writer and syncer read them at
// each decision, so a change takes effect at the next one.
type liveOptions struct {
	segmentMaxBytes atomic.Int64
	interval        atomic.Bool // sync mode interval; false: every-write
}

func (lo *liveOptions) init(o Options) {
	lo.segmentMaxBytes.Store(o.SegmentMaxBytes)
	lo.interval.Store(o.SyncMode == SyncInterval)
}

// syncMode is the log's current sync mode.
func (l *Log) syncMode() SyncMode {
	if l.live.interval.Load() {
		return SyncInterval
	}
	return SyncEveryWrite
}

// segmentMaxBytes is the log's current segment size limit.
func (l *Log) segmentMaxBytes() int64 { return l.live.segmentMaxBytes.Load() }

// SetSegmentMaxBytes changes the size past which the active segment rolls.
// It applies from the next batch written: a segment already larger than n
// rolls before that batch, a smaller one grows to the new limit. n must be
// positive (the engine bounds it further).
func (l *Log) SetSegmentMaxBytes(n int64) error {
	if n <= 0 {
		return fmt.Errorf("%w: segment size %d bytes", ErrInvalidOption, n)
	}
	l.live.segmentMaxBytes.Store(n)
	return nil
}

// SetSyncMode changes when appends are acknowledged. It applies to the
// appends made from now on; an append already made keeps the promise it was
// made under (a strict one is acked only once fsynced and verified, a lax
// one once written). Visibility does not change with the mode: readers see
// only fsynced, verified records in both. Switching to every-write also
// starts a sync pass, so what interval mode left unsynced becomes durable
// without waiting for the interval.
func (l *Log) SetSyncMode(m SyncMode) error {
	switch m {
	case SyncEveryWrite, SyncInterval:
	default:
		return fmt.Errorf("%w: sync mode %q, want %q or %q", ErrInvalidOption, m, SyncEveryWrite, SyncInterval)
	}
	if was := l.live.interval.Swap(m == SyncInterval); was && m == SyncEveryWrite {
		l.kick(l.wakeSyncer)
	}
	return nil
}
