// Package compact is log compaction for topics with cleanup "compact"
// (docs/architecture.md, "engine/retention and engine/compact"): older records of a key are dropped so that the
// log converges to the newest value of every key, keeping every surviving
// record at its offset.
//
// One Run is a bounded, incremental pass over one partition log:
//
//  1. Dedupe map. Every sealed segment, oldest first, then the durable prefix
//     of the active segment is streamed to find each key's newest offset,
//     whether it is a tombstone, and its timestamp. Keyless records are never
//     deduplicated. The map holds at most Options.MaxKeys keys (1<<18); a log
//     with more distinct keys aborts the pass (OutcomeKeyCap), so memory is
//     bounded by the cap whatever the log size.
//  2. Rewrite. Sealed segments holding droppable records are re-encoded
//     oldest first into sparse-offset batches (Options.BatchRecords /
//     BatchBytes), at most Options.MaxSegmentsPerRun rewritten or deleted
//     per pass (segments the gain gate turns down do not count, so a clean
//     prefix never stalls the segments after it). A record
//     survives if it is keyless, or the newest occurrence of its key and not
//     a tombstone committed more than Options.TombstoneRetention ago. An
//     expired tombstone is dropped only once no older value of its key is
//     stored any more, so nothing is resurrected; rewriting a segment that
//     holds such a value always passes the gain gate.
//  3. Gain gate. A rewrite that does not shrink its segment by
//     Options.MinGainRatio (0.1) and drops nothing tied to an expired
//     tombstone is discarded; the segment waits for a later pass. A segment
//     whose droppable records (by encoded size) are under half the gate is
//     turned down without being rewritten at all.
//  4. Commit. A segment left empty is deleted. Otherwise the rewrite is
//     written to .tmp-compact-* files in the partition directory, fsynced,
//     and swapped in by log.Pass.SwapSegment (rename data, rename index,
//     directory fsync, reopen, caches invalidated).
//
// The active segment is never rewritten. Run holds the log's maintenance
// lock, so it never runs concurrently with retention of the same log.
package compact

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
)

// Options configure compaction. Zero fields take DefaultOptions' values.
type Options struct {
	// MaxKeys caps the dedupe map; a log with more distinct keys is not
	// compacted (seed 002's MaxCompactionKeys).
	MaxKeys int // default 1<<18
	// MaxSegmentsPerRun bounds the sealed segments rewritten or deleted by
	// one pass.
	MaxSegmentsPerRun int // default 4
	// BatchRecords and BatchBytes bound one rewritten batch.
	BatchRecords int // default 1000
	BatchBytes   int // default 1 MiB
	// MinGainRatio is the gain gate: the share of a segment's bytes a
	// rewrite must remove to be kept.
	MinGainRatio float64 // default 0.1
	// TombstoneRetention is how long a tombstone is kept after its commit.
	TombstoneRetention time.Duration // default 24h
	// Now is the clock tombstone expiry is measured with.
	Now func() time.Time // default time.Now
}

// DefaultOptions returns seed 002's figures.
func DefaultOptions() Options {
	return Options{
		MaxKeys:            1 << 18,
		MaxSegmentsPerRun:  4,
		BatchRecords:       1000,
		BatchBytes:         1 << 20,
		MinGainRatio:       0.1,
		TombstoneRetention: 24 * time.Hour,
		Now:                time.Now,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxKeys <= 0 {
		o.MaxKeys = d.MaxKeys
	}
	if o.MaxSegmentsPerRun <= 0 {
		o.MaxSegmentsPerRun = d.MaxSegmentsPerRun
	}
	if o.BatchRecords <= 0 {
		o.BatchRecords = d.BatchRecords
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = d.BatchBytes
	}
	if o.MinGainRatio <= 0 {
		o.MinGainRatio = d.MinGainRatio
	}
	if o.TombstoneRetention <= 0 {
		o.TombstoneRetention = d.TombstoneRetention
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	return o
}

// Outcomes of a pass.
const (
	OutcomeCompacted = "compacted"            // at least one segment rewritten or deleted
	OutcomeSkipped   = "skipped by gain gate" // droppable records, but no rewrite paid
	OutcomeKeyCap    = "aborted: key cap"     // more distinct keys than MaxKeys
	OutcomeNothing   = "nothing to do"        // no sealed segment holds a droppable record
	OutcomeStopped   = "aborted: stopped"     // the context ended
	OutcomeDegraded  = "skipped: degraded"    // the log has corrupt ranges; it is left as it is
	OutcomeFailed    = "failed"               // an error; see Result.Error
)

// Result is one pass over one partition.
type Result struct {
	Start    time.Time     `json:"start"` // by Options.Now
	Duration time.Duration `json:"duration"`
	Outcome  string        `json:"outcome"`

	SegmentsRewritten int `json:"segments_rewritten"`
	SegmentsDeleted   int `json:"segments_deleted"` // emptied by the pass
	SegmentsSkipped   int `json:"segments_skipped"` // by the gain gate

	// BytesBefore and BytesAfter are the sealed segments' total size.
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`
	// BytesScanned is what the dedupe pass read (sealed segments and the
	// active segment's durable prefix).
	BytesScanned int64 `json:"bytes_scanned"`

	// RecordsDropped counts every record removed, TombstonesDropped the
	// tombstones among them.
	RecordsDropped    int64 `json:"records_dropped"`
	TombstonesDropped int64 `json:"tombstones_dropped"`

	Keys int `json:"keys"` // distinct keys in the dedupe map
	// NextTombstoneExpiry is when the next tombstone of a sealed segment
	// passes its retention (zero: none is waiting). Until then, and while
	// the log does not change, another pass would find the same.
	NextTombstoneExpiry time.Time `json:"next_tombstone_expiry"`
	// DirtyBefore and DirtyAfter are the share of the sealed segments'
	// records that compaction would drop, before and after the pass.
	DirtyBefore float64 `json:"dirty_before"`
	DirtyAfter  float64 `json:"dirty_after"`

	Error string `json:"error,omitempty"`
}

// compactor carries one pass.
type compactor struct {
	ctx    context.Context
	pass   *plog.Pass
	dir    string
	opts   Options
	codec  codec.Codec
	index  int // index interval bytes
	cutoff int64
	d      *dedupe
	// buffers reused across segments
	buf   []byte
	recs  []codec.Record
	arena []byte
}

// Run compacts the log l once (see the package comment). A pass that ends
// in OutcomeKeyCap, OutcomeSkipped or OutcomeNothing is not an error. On an
// error the segments committed before it stay committed and are counted.
func Run(ctx context.Context, l *plog.Log, opts Options) (res Result, err error) {
	opts = opts.withDefaults()
	started := time.Now()
	res.Start = opts.Now()
	defer func() {
		res.Duration = time.Since(started)
		if err != nil {
			res.Outcome = OutcomeFailed
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, plog.ErrClosed) {
				res.Outcome = OutcomeStopped
			}
			res.Error = err.Error()
			err = fmt.Errorf("compaction of %s: %w", l.Dir(), err)
		}
	}()
	pass, err := l.BeginMaintenance(plog.PassCompaction)
	if err != nil {
		return res, err
	}
	defer pass.End()
	lopts := l.Options()
	c := &compactor{
		ctx: ctx, pass: pass, dir: l.Dir(), opts: opts, codec: lopts.Codec, index: lopts.IndexIntervalBytes,
		cutoff: res.Start.UnixMilli() - opts.TombstoneRetention.Milliseconds(),
	}
	sealed, err := pass.Sealed()
	if err != nil {
		return res, err
	}
	for _, s := range sealed {
		res.BytesBefore += s.Bytes
	}
	res.BytesAfter = res.BytesBefore
	if l.Degraded() {
		// A rewrite cannot carry a corrupt range over, and the keys in it
		// are unknown: leave a damaged partition exactly as recovery and
		// reads report it.
		res.Outcome = OutcomeDegraded
		return res, nil
	}
	if len(sealed) == 0 {
		res.Outcome = OutcomeNothing
		return res, nil
	}

	// Pass 1: the dedupe map.
	err = c.buildMap(pass, sealed, &res)
	res.Keys = len(c.d.keys)
	if errors.Is(err, errKeyCap) {
		res.Outcome = OutcomeKeyCap
		return res, nil
	}
	if err != nil {
		return res, err
	}
	blocked, nextTS := c.d.markExpired(c.cutoff)
	if nextTS != 0 {
		res.NextTombstoneExpiry = time.UnixMilli(nextTS).Add(opts.TombstoneRetention)
	}
	var records, droppable int64
	for _, st := range c.d.stats {
		records += st.records
		droppable += st.dropRecords + st.expiredTombs
	}
	res.DirtyBefore = ratio(droppable, records)

	// Pass 2: rewrite, oldest first.
	committed := 0
	for i, s := range sealed {
		if committed >= opts.MaxSegmentsPerRun {
			break
		}
		st := c.d.stats[i]
		if st.dropRecords == 0 && st.expiredTombs == 0 {
			continue
		}
		// Cheap pre-check of the gate on encoded record sizes, with a wide
		// margin since the stored bytes may be compressed differently.
		if !blocked && st.expiredTombs == 0 && ratio(st.dropBytes, st.rawBytes) < opts.MinGainRatio/2 {
			res.SegmentsSkipped++
			continue
		}
		out, err := c.rewrite(s.Path, s.Bytes, s.Base)
		if err != nil {
			return res, err
		}
		switch {
		case out.survivors == 0:
			if err := pass.RemoveSegment(s.Base); err != nil {
				c.undo(out.touched)
				return res, err
			}
			res.SegmentsDeleted++
			res.BytesAfter -= s.Bytes
		case !out.bypass && float64(out.newSize) > float64(s.Bytes)*(1-opts.MinGainRatio):
			out.discard()
			c.undo(out.touched)
			res.SegmentsSkipped++
			continue
		default:
			if err := pass.SwapSegment(s.Base, out.logTmp, out.indexTmp); err != nil {
				out.discard()
				c.undo(out.touched)
				return res, err
			}
			res.SegmentsRewritten++
			res.BytesAfter += out.newSize - s.Bytes
		}
		committed++
		res.RecordsDropped += out.dropped
		res.TombstonesDropped += out.tombstones
	}
	res.DirtyAfter = ratio(max(droppable-res.RecordsDropped, 0), records-res.RecordsDropped)
	switch {
	case committed > 0:
		res.Outcome = OutcomeCompacted
	case res.SegmentsSkipped > 0:
		res.Outcome = OutcomeSkipped
	default:
		res.Outcome = OutcomeNothing
	}
	return res, nil
}

// buildMap streams every sealed segment, then the active segment's durable
// prefix, into a new dedupe map.
func (c *compactor) buildMap(pass *plog.Pass, sealed []plog.SegmentInfo, res *Result) error {
	c.d = newDedupe(c.opts.MaxKeys, len(sealed))
	scan := func(path string, size int64, seg int32) error {
		s, err := openStream(path, size, c.buf, c.recs)
		if err != nil {
			return err
		}
		n, err := c.d.addStream(s, seg)
		c.buf, c.recs = s.buffers()
		s.close()
		res.BytesScanned += n
		return err
	}
	for i, s := range sealed {
		if err := c.stopped(); err != nil {
			return err
		}
		if err := scan(s.Path, s.Bytes, int32(i)); err != nil {
			return err
		}
	}
	active := pass.Active()
	return scan(active.Path, active.Durable, int32(len(sealed)))
}

// stopped says why the pass must stop early: its context ended or the log
// is closing.
func (c *compactor) stopped() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	return c.pass.Err()
}

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
