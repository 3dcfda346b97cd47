package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine/compact"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/retention"
	"github.com/pulselog/pulse/meta"
)

// Maintenance run kinds, also the meta.db report kinds of their last run.
const (
	ReportRetention  = meta.ReportRetention
	ReportCompaction = meta.ReportCompaction
)

// MaintenanceRun is one retention or compaction run over one partition.
type MaintenanceRun struct {
	Kind     string        `json:"kind"` // ReportRetention or ReportCompaction
	At       time.Time     `json:"at"`   // by Options.Now
	Duration time.Duration `json:"duration"`
	// Outcome is retention's "trimmed", "nothing to do" or "kept by a
	// consumer cursor", or compaction's "compacted", "skipped by gain
	// gate", "aborted: key cap", "nothing to do", "skipped: degraded",
	// "aborted: stopped" or "failed".
	Outcome           string `json:"outcome"`
	SegmentsRewritten int    `json:"segments_rewritten,omitempty"`
	SegmentsDeleted   int    `json:"segments_deleted"`
	SegmentsSkipped   int    `json:"segments_skipped,omitempty"` // by the gain gate
	// BytesBefore and BytesAfter: the whole log for retention, the sealed
	// segments for compaction.
	BytesBefore       int64   `json:"bytes_before"`
	BytesAfter        int64   `json:"bytes_after"`
	BytesScanned      int64   `json:"bytes_scanned,omitempty"` // compaction: read by the dedupe pass
	RecordsDropped    int64   `json:"records_dropped"`
	TombstonesDropped int64   `json:"tombstones_dropped,omitempty"`
	DirtyRatio        float64 `json:"dirty_ratio,omitempty"` // compaction: left after the run
	Keys              int     `json:"keys,omitempty"`        // compaction: distinct keys seen
	// Deleted lists retention's deletions, oldest first.
	Deleted []DeletedSegment `json:"deleted,omitempty"`
	Error   string           `json:"error,omitempty"`
}

// DeletedSegment is one segment retention deleted.
type DeletedSegment struct {
	Base    int64  `json:"base"`
	Next    int64  `json:"next"`
	Bytes   int64  `json:"bytes"`
	Records int64  `json:"records"`
	Reason  string `json:"reason"` // "age" or "size"
}

// DeletionCounters count what retention deleted for one reason.
type DeletionCounters struct {
	Segments int64 `json:"segments"`
	Bytes    int64 `json:"bytes"`
	Records  int64 `json:"records"`
}

// CompactionCounters sum the compaction runs of a partition.
type CompactionCounters struct {
	Runs              int64 `json:"runs"`
	Compacted         int64 `json:"compacted"` // runs that rewrote or deleted something
	SegmentsRewritten int64 `json:"segments_rewritten"`
	SegmentsDeleted   int64 `json:"segments_deleted"`
	RecordsDropped    int64 `json:"records_dropped"`
	TombstonesDropped int64 `json:"tombstones_dropped"`
	BytesReclaimed    int64 `json:"bytes_reclaimed"`
}

// MaintenanceStatus is what the UI shows about a partition's retention and
// compaction. Counters cover this process; the last runs come from meta.db
// when this process has not run one yet.
type MaintenanceStatus struct {
	Topic      string  `json:"topic"`
	Partition  int     `json:"partition"`
	Cleanup    Cleanup `json:"cleanup"`
	Compacting bool    `json:"compacting"` // a compaction pass runs now

	LastRetention  *MaintenanceRun `json:"last_retention,omitempty"`
	LastCompaction *MaintenanceRun `json:"last_compaction,omitempty"`

	// DirtyRatio is the share of the sealed records the last compaction
	// run left droppable (compacted topics).
	DirtyRatio float64 `json:"dirty_ratio"`

	// NextRetention and NextCompaction are when the sweeper runs next; zero
	// when its interval is 0, or for compaction when the topic is not
	// compacted.
	NextRetention  time.Time `json:"next_retention"`
	NextCompaction time.Time `json:"next_compaction"`

	RetentionDeleted map[string]DeletionCounters `json:"retention_deleted"` // by reason
	Compaction       CompactionCounters          `json:"compaction"`
}

// maintainer is the Engine's sweeper: one goroutine that runs retention
// then compaction over every partition, plus the status of each partition.
// Passes triggered by RunRetention / RunCompaction run in the caller's
// goroutine; the partition log's maintenance lock keeps any two passes on
// one partition apart.
type maintainer struct {
	// mu guards everything below.
	mu      sync.Mutex
	started bool
	stopped bool
	cancel  context.CancelFunc
	ctx     context.Context // ends at stopMaintenance; every pass runs under it
	runs    sync.WaitGroup  // the sweeper goroutine and triggered passes
	parts   map[string]*partMaint
	nextRet time.Time
	nextCmp time.Time
}

// partMaint is one partition's maintenance state.
type partMaint struct {
	owner            *topic // a topic deleted and created again starts afresh
	lastRet, lastCmp *MaintenanceRun
	deleted          map[string]DeletionCounters
	compaction       CompactionCounters
	// idle describes the log when the last compaction pass found nothing to
	// commit; while the log still looks the same and no tombstone expires,
	// the sweeper skips the pass instead of reading the whole log again.
	idle *idleLog
}

// idleLog is what a compaction pass depends on.
type idleLog struct {
	leo, logStart int64
	segments      int
	bytes         int64
	tombRetention time.Duration
	expiry        time.Time // next tombstone expiry, zero: none waiting
}

func snapshotLog(l *plog.Log, tombRetention time.Duration) idleLog {
	s := idleLog{leo: l.LEO(), logStart: l.LogStart(), tombRetention: tombRetention}
	s.segments, s.bytes = l.Size()
	return s
}

// now is the maintenance clock.
func (e *Engine) now() time.Time {
	if e.opts.Now != nil {
		return e.opts.Now()
	}
	return time.Now()
}

// startMaintenance starts the sweeper (Open calls it once the partitions
// are recovered). Calling it again does nothing.
func (e *Engine) startMaintenance() {
	m := &e.maint
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return
	}
	m.started = true
	m.ctx, m.cancel = context.WithCancel(context.Background())
	ri, ci := e.opts.RetentionInterval, e.opts.CompactionInterval
	if ri <= 0 && ci <= 0 {
		return
	}
	now := time.Now()
	if ri > 0 {
		m.nextRet = now.Add(ri)
	}
	if ci > 0 {
		m.nextCmp = now.Add(ci)
	}
	m.runs.Add(1)
	go e.sweepLoop(m.ctx)
}

// stopMaintenance stops the sweeper, ends running passes early (a
// compaction stops between batches and leaves its segment untouched) and
// waits for them. Close calls it before closing the partitions.
func (e *Engine) stopMaintenance() {
	m := &e.maint
	m.mu.Lock()
	m.stopped = true
	if m.cancel != nil {
		m.cancel()
	}
	m.nextRet, m.nextCmp = time.Time{}, time.Time{}
	m.mu.Unlock()
	m.runs.Wait()
}

// beginRun registers a pass; it fails once maintenance stopped.
func (m *maintainer) beginRun() (context.Context, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, ErrClosed
	}
	if m.ctx == nil {
		m.ctx, m.cancel = context.WithCancel(context.Background())
	}
	m.runs.Add(1)
	return m.ctx, nil
}

// sweepLoop wakes when retention or compaction is due and sweeps every
// partition: retention first, then compaction.
func (e *Engine) sweepLoop(ctx context.Context) {
	m := &e.maint
	defer m.runs.Done()
	ri, ci := e.opts.RetentionInterval, e.opts.CompactionInterval
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		m.mu.Lock()
		next := m.nextRet
		if next.IsZero() || (!m.nextCmp.IsZero() && m.nextCmp.Before(next)) {
			next = m.nextCmp
		}
		m.mu.Unlock()
		timer.Reset(max(time.Until(next), 0))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		m.mu.Lock()
		doRet := ri > 0 && !now.Before(m.nextRet)
		doCmp := ci > 0 && !now.Before(m.nextCmp)
		m.mu.Unlock()
		e.sweep(ctx, doRet, doCmp)
		m.mu.Lock()
		if doRet && !m.stopped {
			m.nextRet = time.Now().Add(ri)
		}
		if doCmp && !m.stopped {
			m.nextCmp = time.Now().Add(ci)
		}
		m.mu.Unlock()
	}
}

// sweep runs retention and/or compaction over every partition of every
// topic. Failures are logged and kept in the partition's status; the sweep
// goes on with the next partition.
func (e *Engine) sweep(ctx context.Context, doRet, doCmp bool) {
	for _, t := range e.activeTopics() {
		for p, l := range t.parts {
			if ctx.Err() != nil {
				return
			}
			if doRet {
				e.retainPartition(t, p, l)
			}
			if doCmp && t.config().Cleanup == CleanupCompact {
				e.compactPartition(ctx, t, p, l, true)
			}
		}
	}
}

// RunRetention runs a retention pass over every partition of topic now and
// returns when it is done (errors of all partitions joined).
func (e *Engine) RunRetention(topic string) error {
	t, err := e.topic(topic)
	if err != nil {
		return err
	}
	if _, err := e.maint.beginRun(); err != nil {
		return err
	}
	defer e.maint.runs.Done()
	var errs []error
	for p, l := range t.parts {
		errs = append(errs, e.retainPartition(t, p, l))
	}
	return errors.Join(errs...)
}

// RunCompaction runs a compaction pass over every partition of topic now
// and returns when it is done. A topic whose cleanup is not "compact" gets
// ErrInvalidConfig.
func (e *Engine) RunCompaction(topic string) error {
	t, err := e.topic(topic)
	if err != nil {
		return err
	}
	if c := t.config().Cleanup; c != CleanupCompact {
		return fmt.Errorf("%w: topic %s has cleanup %q, not %q", ErrInvalidConfig, topic, c, CleanupCompact)
	}
	ctx, err := e.maint.beginRun()
	if err != nil {
		return err
	}
	defer e.maint.runs.Done()
	var errs []error
	for p, l := range t.parts {
		errs = append(errs, e.compactPartition(ctx, t, p, l, false))
	}
	return errors.Join(errs...)
}

// retainPartition runs one retention pass over partition p of t.
func (e *Engine) retainPartition(t *topic, p int, l *plog.Log) error {
	cfg := t.config()
	pol := retention.Policy{MaxAge: cfg.RetentionMaxAge, MaxBytes: cfg.RetentionMaxBytes}
	if cfg.ProtectCursors && (pol.MaxAge > 0 || pol.MaxBytes > 0) {
		cs, err := e.meta.ListCursors(t.name)
		if err != nil {
			err = fmt.Errorf("retention of topic %s partition %d: cursors: %w", t.name, p, err)
			e.opts.Logger.Error("retention", "topic", t.name, "partition", p, "err", err)
			return err
		}
		pol.Cursors = []int64{}
		for _, c := range cs {
			if c.Partition == p {
				pol.Cursors = append(pol.Cursors, c.Offset)
			}
		}
	}
	res, err := retention.Run(l, pol, e.now())
	if errors.Is(err, plog.ErrClosed) {
		return nil // the topic is being deleted or the engine closed
	}
	run := &MaintenanceRun{
		Kind: ReportRetention, At: res.Start, Duration: res.Duration, Outcome: res.Outcome,
		SegmentsDeleted: len(res.Deleted), BytesBefore: res.BytesBefore, BytesAfter: res.BytesAfter, Error: res.Error,
	}
	for _, d := range res.Deleted {
		run.RecordsDropped += d.Records
		run.Deleted = append(run.Deleted, DeletedSegment{Base: d.Base, Next: d.Next, Bytes: d.Bytes, Records: d.Records, Reason: string(d.Reason)})
	}
	e.record(t, p, run, func(pm *partMaint) {
		for reason, c := range res.ByReason() {
			dc := pm.deleted[string(reason)]
			dc.Segments += c.Segments
			dc.Bytes += c.Bytes
			dc.Records += c.Records
			pm.deleted[string(reason)] = dc
		}
	})
	if err != nil {
		e.opts.Logger.Error("retention", "topic", t.name, "partition", p, "err", err)
	} else if len(res.Deleted) > 0 {
		e.opts.Logger.Info("retention", "topic", t.name, "partition", p, "segments", len(res.Deleted),
			"bytes", res.BytesBefore-res.BytesAfter, "log_start", res.LogStart)
	}
	return err
}

// compactPartition runs one compaction pass over partition p of t. A
// sweep (skipIdle) passes over a partition whose log did not change since a
// pass that committed nothing, until a tombstone comes due.
func (e *Engine) compactPartition(ctx context.Context, t *topic, p int, l *plog.Log, skipIdle bool) error {
	cfg := t.config()
	if skipIdle && e.compactionIdle(t, p, l, cfg.TombstoneRetention) {
		return nil
	}
	before := snapshotLog(l, cfg.TombstoneRetention)
	res, err := compact.Run(ctx, l, compact.Options{TombstoneRetention: cfg.TombstoneRetention, Now: e.now})
	if errors.Is(err, plog.ErrClosed) {
		return nil // the topic is being deleted or the engine closed
	}
	run := &MaintenanceRun{
		Kind: ReportCompaction, At: res.Start, Duration: res.Duration, Outcome: res.Outcome,
		SegmentsRewritten: res.SegmentsRewritten, SegmentsDeleted: res.SegmentsDeleted, SegmentsSkipped: res.SegmentsSkipped,
		BytesBefore: res.BytesBefore, BytesAfter: res.BytesAfter, BytesScanned: res.BytesScanned,
		RecordsDropped: res.RecordsDropped, TombstonesDropped: res.TombstonesDropped,
		DirtyRatio: res.DirtyAfter, Keys: res.Keys, Error: res.Error,
	}
	e.record(t, p, run, func(pm *partMaint) {
		pm.idle = nil
		switch res.Outcome {
		case compact.OutcomeNothing, compact.OutcomeSkipped, compact.OutcomeKeyCap, compact.OutcomeDegraded:
			if after := snapshotLog(l, cfg.TombstoneRetention); after == before {
				after.expiry = res.NextTombstoneExpiry
				pm.idle = &after
			}
		}
		c := &pm.compaction
		c.Runs++
		if res.Outcome == compact.OutcomeCompacted {
			c.Compacted++
		}
		c.SegmentsRewritten += int64(res.SegmentsRewritten)
		c.SegmentsDeleted += int64(res.SegmentsDeleted)
		c.RecordsDropped += res.RecordsDropped
		c.TombstonesDropped += res.TombstonesDropped
		c.BytesReclaimed += res.BytesBefore - res.BytesAfter
	})
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		e.opts.Logger.Error("compaction", "topic", t.name, "partition", p, "err", err)
	case res.Outcome == compact.OutcomeCompacted:
		e.opts.Logger.Info("compaction", "topic", t.name, "partition", p, "rewritten", res.SegmentsRewritten,
			"deleted", res.SegmentsDeleted, "bytes_before", res.BytesBefore, "bytes_after", res.BytesAfter)
	case res.Outcome == compact.OutcomeKeyCap:
		e.opts.Logger.Warn("compaction", "topic", t.name, "partition", p, "outcome", res.Outcome, "keys", res.Keys)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// record keeps run as the partition's last run of its kind, applies count
// to its counters, and stores the run in meta.db when it changed something
// or its outcome differs from the last stored one (a sweep that finds
// nothing to do costs no synced commit).
func (e *Engine) record(t *topic, p int, run *MaintenanceRun, count func(*partMaint)) {
	m := &e.maint
	m.mu.Lock()
	pm := m.partLocked(t, p)
	prev := pm.lastRet
	if run.Kind == ReportCompaction {
		prev = pm.lastCmp
	}
	if run.Kind == ReportCompaction {
		pm.lastCmp = run
	} else {
		pm.lastRet = run
	}
	count(pm)
	m.mu.Unlock()

	changed := run.SegmentsDeleted > 0 || run.SegmentsRewritten > 0 || run.Error != ""
	if !changed && prev != nil && prev.Outcome == run.Outcome {
		return
	}
	data, err := json.Marshal(run)
	if err == nil {
		err = e.meta.PutReport(run.Kind, t.name, p, data)
	}
	if err != nil && !errors.Is(err, meta.ErrTopicNotFound) {
		e.opts.Logger.Error("store maintenance report", "kind", run.Kind, "topic", t.name, "partition", p, "err", err)
	}
}

// compactionIdle reports whether the last compaction pass over the
// partition committed nothing and nothing it depends on changed since.
func (e *Engine) compactionIdle(t *topic, p int, l *plog.Log, tombRetention time.Duration) bool {
	m := &e.maint
	m.mu.Lock()
	idle := m.partLocked(t, p).idle
	m.mu.Unlock()
	if idle == nil {
		return false
	}
	now := snapshotLog(l, tombRetention)
	now.expiry = idle.expiry
	return now == *idle && (idle.expiry.IsZero() || e.now().Before(idle.expiry))
}

func (m *maintainer) partLocked(t *topic, p int) *partMaint {
	if m.parts == nil {
		m.parts = map[string]*partMaint{}
	}
	k := fmt.Sprintf("%s/%d", t.name, p)
	pm, ok := m.parts[k]
	if !ok || pm.owner != t {
		pm = &partMaint{owner: t, deleted: map[string]DeletionCounters{}}
		m.parts[k] = pm
	}
	return pm
}

// MaintenanceStatus returns the retention and compaction status of one
// partition.
func (e *Engine) MaintenanceStatus(topic string, partition int) (MaintenanceStatus, error) {
	t, err := e.topic(topic)
	if err != nil {
		return MaintenanceStatus{}, err
	}
	if partition < 0 || partition >= len(t.parts) {
		return MaintenanceStatus{}, partitionOutOfRange(topic, len(t.parts), partition)
	}
	cfg := t.config()
	st := MaintenanceStatus{
		Topic: topic, Partition: partition, Cleanup: cfg.Cleanup,
		Compacting:       t.parts[partition].Compacting(),
		RetentionDeleted: map[string]DeletionCounters{},
	}
	m := &e.maint
	m.mu.Lock()
	pm := m.partLocked(t, partition)
	st.LastRetention, st.LastCompaction = cloneRun(pm.lastRet), cloneRun(pm.lastCmp)
	for k, v := range pm.deleted {
		st.RetentionDeleted[k] = v
	}
	st.Compaction = pm.compaction
	st.NextRetention = m.nextRet
	if cfg.Cleanup == CleanupCompact {
		st.NextCompaction = m.nextCmp
	}
	m.mu.Unlock()

	if st.LastRetention == nil {
		st.LastRetention = e.storedRun(ReportRetention, topic, partition)
	}
	if st.LastCompaction == nil {
		st.LastCompaction = e.storedRun(ReportCompaction, topic, partition)
	}
	if st.LastCompaction != nil {
		st.DirtyRatio = st.LastCompaction.DirtyRatio
	}
	return st, nil
}

func cloneRun(r *MaintenanceRun) *MaintenanceRun {
	if r == nil {
		return nil
	}
	c := *r
	c.Deleted = append([]DeletedSegment(nil), r.Deleted...)
	return &c
}

// storedRun reads the last run of kind a previous process stored.
func (e *Engine) storedRun(kind, topic string, p int) *MaintenanceRun {
	data, ok, err := e.meta.GetReport(kind, topic, p)
	if err != nil || !ok {
		return nil
	}
	var r MaintenanceRun
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	return &r
}
