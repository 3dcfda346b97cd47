// Package plog (partition log) is one partition of a Pulse topic: a
// sequence of segments, an append buffer drained by a flusher into batches,
// group commit, the high-watermark (HWM), long-poll notification and cached
// reads.
//
// Concurrency contract: any number of goroutines may call Append, Read,
// NotifyC and the accessors at once. Two goroutines belong to the log: the
// writer drains the append buffer into batches and writes them to the active
// segment; the syncer fsyncs what was written, re-reads and CRC-verifies it,
// advances the HWM and acknowledges strict appends. The writer keeps writing
// the next batches while the syncer waits on fsync, so many producers cost
// about one fsync per drain.
package plog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// Log is one partition log. See the package comment for its concurrency contract.
//
// Lock order. A goroutine holding one of these locks takes only locks below
// it, never one above:
//
//  1. maint.mu      a whole retention or compaction pass, BeginMaintenance to
//     Pass.End (Close takes it, holding nothing, to wait for a pass)
//  2. syncMu        one sync pass: syncNow, rewind, ExposeHiddenTail (roll
//     runs syncNow before it takes segMu, not around it); a maintenance
//     pass's snapshot write after deleting a segment (Pass.remove)
//  3. maint.readMu  read-held by readers (pinReads) around segMu and the
//     segment reads
//  4. segMu
//  5. manMu         under segMu (writeManifestLocked), or under syncMu alone
//     (rewind's addGap)
//  6. maint.retiredMu  under segMu (retire) or maint.mu (closeRetired); it
//     only ever TryLocks readMu, which never waits
//
// mu, wmu, notifyMu, hwmMu, segStats.mu (info.go), readCache.mu (cache.go)
// and corruptSet.mu (corrupt.go) are leaves: taken under any of the above,
// they are released before any other lock is taken. In particular mu and
// wmu are never held together.
type Log struct {
	dir  string
	opts Options

	// mu guards the append buffer and everything assigned under it: the next
	// offset, the last commit timestamp, the closed flag and the sticky error.
	mu           sync.Mutex
	pending      []*appendReq
	pendingBytes int
	nextOffset   int64 // next offset to assign, including buffered records
	lastTS       int64 // last commit timestamp assigned (Unix ms)
	closing      bool
	// failed is the last write, fsync or verify failure, until a write
	// succeeds again. rewound says the log was put back to its durable end
	// since (rewind): until then appends are refused; after, each append
	// is a retry, so a partition whose disk recovers serves again.
	failed  error
	rewound bool

	wakeWriter chan struct{} // cap 1: the append buffer has records
	wakeSyncer chan struct{} // cap 1: written batches wait for fsync
	wakeTimer  chan struct{} // cap 1: timed work appeared; the syncer arms its timer
	wakeRewind chan struct{} // cap 1: the syncer failed; the writer rewinds
	stop       chan struct{} // closed by Close once the buffer is drained
	done       sync.WaitGroup

	// segMu guards segs. The writer takes it for writing to add a segment;
	// retention and compaction take it to remove or swap one; readers hold it
	// for reading only while they pick a segment.
	segMu  sync.RWMutex
	segs   []*segState
	nextID uint64 // segment identities for cache keys, guarded by segMu

	// wmu guards the written-but-not-durable state shared by writer and syncer.
	wmu         sync.Mutex
	written     int64         // offset after the last batch written to the OS
	committed   int64         // offset after the last write of whole appends: a sync pass exposes no further, so an append cut short by a failure is never visible in part
	unverified  []pendingSync // batches written since the last fsync
	syncWaiters []*appendReq  // strict appends waiting for their batches to be durable
	unsynced    int64         // bytes written since the last fsync
	unsyncedAt  time.Time     // when the first of them was written (zero: none)
	laxAcked    int64         // offset after the last interval-mode append acked on write
	failWaiters []*appendReq  // strict appends of a failed sync pass, answered after the rewind
	lastSync    time.Time

	// syncMu serialises fsync+verify passes (syncer, roll, Sync, Close).
	syncMu sync.Mutex

	hwm      atomic.Int64 // exclusive bound of what readers may see
	durable  atomic.Int64 // offset after the last fsynced, verified batch
	logStart atomic.Int64

	// notifyMu guards notifyC and watched.
	notifyMu   sync.Mutex
	notifyC    chan struct{} // closed and replaced on every HWM advance; closed for good by Close
	watched    bool          // NotifyC was called since the last advance
	notifyDone bool          // Close closed notifyC: it stays closed
	// shut is set by Close before it closes the segment files: reads from
	// then on fail with ErrClosed.
	shut atomic.Bool

	// hwmMu guards the persisted hwm bookkeeping.
	hwmMu        sync.Mutex
	persistedHWM int64
	persistedAt  time.Time

	syncPasses atomic.Int64 // sync passes that made new batches durable
	lastAcked  atomic.Int64 // strict appends acked by the last sync pass
	fsyncNanos atomic.Int64 // moving average of one fsync, in nanoseconds
	verifyBuf  []byte       // syncAndVerify's re-read buffer, under syncMu

	report   recovery.Report
	corrupt  corruptSet
	gaps     atomic.Pointer[[]recovery.Gap] // lost offset ranges; replaced, never changed in place
	manMu    sync.Mutex                     // serialises manifest writes (roll, retention, compaction)
	skipped  atomic.Int64                   // records skipped by reads because they sit in corrupt ranges
	cache    *readCache
	degraded atomic.Bool

	maint maintState // retention and compaction passes, see maintenance.go

	live liveOptions // the options that change while the log runs, see options.go
}

// segState is one segment and what the log tracks about it.
type segState struct {
	seg     *segment.Segment
	id      uint64
	durable atomic.Int64 // bytes fsynced and verified; readers never read past it
	stats   segStats     // for Segments(); guarded by its own mutex
}

// appendReq is one Append call waiting for its acknowledgement.
type appendReq struct {
	recs     []codec.Record      // offsets and timestamps assigned
	producer codec.ProducerStamp // stamps the batches of recs; zero: none
	bytes    int
	strict   bool
	end      int64      // offset after the last record
	done     chan error // buffered(1): nil once the sync mode's promise holds
}

// pendingSync is a batch written to the OS and not yet fsynced and verified.
type pendingSync struct {
	st  *segState
	pos int64
	len int64
	end int64 // offset after the batch
}

// Open recovers the partition in dir (see package recovery) and starts its
// writer and syncer.
func Open(dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	res, err := recovery.Run(dir, recovery.Options{
		Topic:              opts.Topic,
		Partition:          opts.Partition,
		IndexIntervalBytes: opts.IndexIntervalBytes,
		HiddenTail:         opts.HiddenTail,
		RecordedHWM:        opts.RecordedHWM,
		FilePool:           opts.FilePool,
	})
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", dir, err)
	}
	l := &Log{
		dir:        dir,
		opts:       opts,
		wakeWriter: make(chan struct{}, 1),
		wakeSyncer: make(chan struct{}, 1),
		wakeTimer:  make(chan struct{}, 1),
		wakeRewind: make(chan struct{}, 1),
		stop:       make(chan struct{}),
		notifyC:    make(chan struct{}),
		report:     res.Report,
		cache:      newReadCache(opts.CacheBytes),
		lastSync:   time.Now(),
	}
	l.live.init(opts)
	for _, s := range res.Segments {
		st := l.newSegState(s)
		st.durable.Store(s.Size())
		l.segs = append(l.segs, st)
	}
	if len(l.segs) == 0 {
		return nil, fmt.Errorf("partition %s: recovery returned no segment", dir)
	}
	l.corrupt.add(res.Corrupt...)
	gaps := res.Gaps
	l.gaps.Store(&gaps)
	l.degraded.Store(len(res.Corrupt) > 0 || len(res.Gaps) > 0 || res.Report.Degraded)
	for _, g := range res.Gaps {
		opts.Logger.Error("offsets lost", "partition", res.Report.Name(),
			"offsets", fmt.Sprintf("[%d,%d)", g.FirstOffset, g.EndOffset), "reason", g.Reason)
	}
	l.nextOffset = res.LEO
	l.written = res.LEO
	l.committed = res.LEO
	l.durable.Store(res.LEO)
	l.hwm.Store(res.HWM)
	l.logStart.Store(min(l.segs[0].seg.Base(), res.LogStart))
	l.persistedHWM = res.HWM
	l.persistedAt = time.Now()
	l.lastTS = l.lastTimestamp()
	if res.Report.NeedsWork() {
		opts.Logger.Warn("recovery", "partition", res.Report.Name(), "summary", res.Report.Summary())
	}

	l.done.Add(2)
	go l.writeLoop()
	go l.syncLoop()
	return l, nil
}

func (l *Log) newSegState(s *segment.Segment) *segState {
	l.nextID++
	st := &segState{seg: s, id: l.nextID}
	// Its files may close while idle only once every byte appended is
	// fsynced and verified: no write or fsync ever spans a reopen.
	s.SetParkable(func() bool { return st.durable.Load() >= s.Size() })
	return st
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// HWM is the high-watermark: readers see offsets below it.
func (l *Log) HWM() int64 { return l.hwm.Load() }

// LEO is the log end offset: the offset after the last batch written.
func (l *Log) LEO() int64 {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.written
}

// LogStart is the first offset still stored.
func (l *Log) LogStart() int64 { return l.logStart.Load() }

// Degraded reports whether the log holds corrupt ranges that reads skip.
func (l *Log) Degraded() bool { return l.degraded.Load() }

// SkippedRecords counts the offsets reads skipped in corrupt or lost
// ranges: every Read's, and what readers of ReadUncounted handed on as
// skipped (CountSkipped).
func (l *Log) SkippedRecords() int64 { return l.skipped.Load() }

// CorruptRanges returns the corrupt ranges known to the log.
func (l *Log) CorruptRanges() []recovery.CorruptRange { return l.corrupt.list() }

// Report is the recovery report of the open that produced l.
func (l *Log) Report() recovery.Report { return l.report }

// Options returns the options l runs with, as SetSegmentMaxBytes and
// SetSyncMode last changed them.
func (l *Log) Options() Options {
	o := l.opts
	o.SegmentMaxBytes, o.SyncMode = l.segmentMaxBytes(), l.syncMode()
	return o
}

// NotifyC returns a channel that is closed at the next HWM advance, or when
// the log closes. Take it before reading, then wait on it if the read came
// back empty: an advance between the read and the wait closes the channel
// already held.
func (l *Log) NotifyC() <-chan struct{} {
	l.notifyMu.Lock()
	defer l.notifyMu.Unlock()
	if !l.watched {
		l.watched = true
		// In interval mode a waiting reader makes the syncer fsync what
		// was written, so it becomes visible without waiting for the timer.
		if l.syncMode() == SyncInterval {
			l.kick(l.wakeSyncer)
		}
	}
	return l.notifyC
}

// advanceHWM moves the HWM forward to end (never back) and wakes readers.
func (l *Log) advanceHWM(end int64) {
	for {
		cur := l.hwm.Load()
		if end <= cur {
			return
		}
		if l.hwm.CompareAndSwap(cur, end) {
			break
		}
	}
	l.notifyMu.Lock()
	if !l.notifyDone {
		close(l.notifyC)
		l.notifyC = make(chan struct{})
		l.watched = false
	}
	l.notifyMu.Unlock()
}

func (l *Log) watching() bool {
	l.notifyMu.Lock()
	defer l.notifyMu.Unlock()
	return l.watched
}

// kick wakes a loop without blocking.
func (l *Log) kick(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Sync drains the append buffer, fsyncs and verifies everything written and
// advances the HWM over it.
func (l *Log) Sync() error {
	req, err := l.enqueue(nil, true, codec.ProducerStamp{})
	if err != nil {
		return err
	}
	return <-req.done
}

// Close drains the append buffer, makes everything durable, persists the
// HWM and the recovery snapshot, and closes the segment files. Appends after
// Close fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closing = true
	l.mu.Unlock()
	l.waitMaintenance() // a retention or compaction pass ends before files close
	l.kick(l.wakeWriter)
	close(l.stop)
	l.done.Wait()

	var errs []error
	// A failure from before the close was answered to the appends it
	// failed, and the rewind below (or the writer's) puts the log back to
	// its durable end: it left nothing unwritten, so it is not said again.
	failedBefore := l.failedErr() != nil
	if err := l.syncNow(); err != nil && !failedBefore {
		errs = append(errs, fmt.Errorf("flush: %w", err))
	}
	l.rewind() // after a failure: the writer is gone, the rewind is done here
	if l.rewindDue() {
		// The rewind failed: bytes of a failed write may still lie past
		// the durable end (the next open's recovery sees them).
		errs = append(errs, fmt.Errorf("rewind after a failed write: %w", l.failedErr()))
	}
	l.failAll(ErrClosed)
	if l.failedErr() == nil {
		if err := l.persistHWM(true); err != nil {
			errs = append(errs, err)
		}
		if err := l.writeSnapshot(); err != nil {
			errs = append(errs, err)
		}
	}
	// Wake every parked reader for good: the log will not advance again,
	// and a reader must learn that (its next read says the log is gone).
	l.shut.Store(true)
	l.notifyMu.Lock()
	close(l.notifyC)
	l.notifyDone = true
	l.notifyMu.Unlock()

	l.segMu.Lock()
	for i, st := range l.segs {
		// Sealed segments were fully synced when they rolled; the active
		// one's index entries are made durable now.
		if i == len(l.segs)-1 && l.failedErr() == nil {
			if err := st.seg.Sync(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := st.seg.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	l.segMu.Unlock()
	l.closeRetired(true)
	return joinOnce(errs)
}

// joinOnce joins errs into one error of one line, each distinct message
// once: a segment whose index could not be written at its sync fails the
// same way at its close, and the close says it once.
func joinOnce(errs []error) error {
	var kept []error
	seen := map[string]bool{}
	for _, err := range errs {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			kept = append(kept, err)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return closeErrors(kept)
}

// closeErrors are the distinct errors of one close, said on one line.
type closeErrors []error

func (c closeErrors) Error() string {
	msgs := make([]string, len(c))
	for i, err := range c {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (c closeErrors) Unwrap() []error { return c }

func (l *Log) failedErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// fail makes err the log's sticky error and fails every waiting append.
func (l *Log) fail(err error) {
	l.mu.Lock()
	l.failed = fmt.Errorf("%w: %w", ErrFailed, err)
	l.rewound = false
	l.mu.Unlock()
	l.opts.Logger.Error("partition failed", "dir", l.dir, "err", err)
}

// Failure is the reason the partition's last write failed (nil when it
// serves). Appends are retried: the first that succeeds clears it.
func (l *Log) Failure() error {
	return l.failedErr()
}

// rewind puts the log back to its last durable (fsynced, verified, hence
// acknowledged) position after a failure: every segment is truncated to
// its durable size and fsynced, and only then are the appends of the
// failed writes answered with the error, so nothing of a failed write ever
// becomes visible, not after a restart either. Offsets acked in interval
// mode past the durable end are not handed out again: they become a gap.
// Only the writer goroutine rewinds.
//
// The writer calls it before every drain, so with no failure outstanding
// it returns without taking syncMu: a sync pass holds syncMu for its fsync
// and re-read, and the writer keeps writing meanwhile.
func (l *Log) rewind() {
	if !l.rewindDue() {
		return
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if !l.rewindDue() { // a failure seen above is rewound only once
		return
	}
	l.segMu.RLock()
	segs := append([]*segState(nil), l.segs...)
	l.segMu.RUnlock()
	var rerr error
	for _, st := range segs {
		d := st.durable.Load()
		if st.seg.Size() <= d {
			continue
		}
		if err := st.seg.Truncate(d); err != nil {
			rerr = fmt.Errorf("rewind %s to %d bytes: %w", st.seg.Path(), d, err)
			break
		}
		if err := st.seg.Sync(); err != nil {
			rerr = fmt.Errorf("rewind %s: fsync: %w", st.seg.Path(), err)
			break
		}
	}
	end := l.durable.Load()
	l.wmu.Lock()
	next := max(end, l.laxAcked)
	waiters := append(l.syncWaiters, l.failWaiters...)
	l.syncWaiters, l.failWaiters = nil, nil
	if rerr == nil {
		l.unverified = nil
		l.unsynced = 0
		l.unsyncedAt = time.Time{}
		l.written = next
		l.committed = next
	}
	l.wmu.Unlock()
	l.mu.Lock()
	pending := l.pending
	l.pending = nil
	l.pendingBytes = 0
	if rerr == nil {
		l.nextOffset = next
		l.rewound = true
	} else {
		l.failed = fmt.Errorf("%w: %w", l.failed, rerr)
	}
	err := l.failed
	l.mu.Unlock()
	if rerr != nil {
		l.opts.Logger.Error("partition rewind failed", "dir", l.dir, "err", rerr)
	} else if next > end {
		l.addGap(recovery.Gap{FirstOffset: end, EndOffset: next,
			Reason: fmt.Sprintf("interval-mode appends acked before an fsync that failed (%v)", err)})
		// The gap holds no record: readers may pass over it.
		l.durable.Store(next)
		l.advanceHWM(next)
	}
	for _, r := range append(pending, waiters...) {
		r.done <- err
	}
}

// rewindDue reports whether a failure waits for its rewind.
func (l *Log) rewindDue() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed != nil && !l.rewound
}

// failAll fails every append still waiting, buffered or written.
func (l *Log) failAll(err error) {
	l.mu.Lock()
	pending := l.pending
	l.pending = nil
	l.pendingBytes = 0
	l.mu.Unlock()
	l.wmu.Lock()
	waiters := l.syncWaiters
	l.syncWaiters = nil
	l.wmu.Unlock()
	for _, r := range append(pending, waiters...) {
		r.done <- err
	}
}

// persistHWM writes the hwm file if the HWM moved and the last write is
// older than HWMInterval (or force is set).
func (l *Log) persistHWM(force bool) error {
	l.hwmMu.Lock()
	defer l.hwmMu.Unlock()
	h := l.hwm.Load()
	if h == l.persistedHWM || (!force && time.Since(l.persistedAt) < l.opts.HWMInterval) {
		return nil
	}
	if err := recovery.WriteHWM(l.dir, h); err != nil {
		return fmt.Errorf("partition %s: persist hwm: %w", l.dir, err)
	}
	l.persistedHWM = h
	l.persistedAt = time.Now()
	return nil
}

// writeSnapshot records the durable state of the active segment.
//
// A degraded log gets no snapshot (an old one is removed): the next open then
// scans in full and reports the corrupt ranges again instead of trusting
// segments it knows are damaged.
func (l *Log) writeSnapshot() error {
	if l.degraded.Load() {
		if err := os.Remove(filepath.Join(l.dir, recovery.SnapshotFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("partition %s: remove snapshot of a degraded log: %w", l.dir, err)
		}
		return nil
	}
	l.segMu.RLock()
	active := l.segs[len(l.segs)-1]
	l.segMu.RUnlock()
	end := l.durable.Load()
	snap := recovery.Snapshot{
		LEO:        end,
		ActiveBase: active.seg.Base(),
		ActiveSize: active.durable.Load(),
		ActiveNext: end,
	}
	if err := recovery.WriteSnapshot(l.dir, snap); err != nil {
		return fmt.Errorf("partition %s: %w", l.dir, err) // it says "write snapshot"
	}
	return nil
}

// Gaps are the lost offset ranges reads skip and count: the ones recovery
// reported and any a rewind added since.
func (l *Log) Gaps() []recovery.Gap {
	return append([]recovery.Gap(nil), *l.gaps.Load()...)
}

// addGap records a lost range for reads to skip and count, and in the
// manifest (best effort: the log is failing when this happens).
func (l *Log) addGap(g recovery.Gap) {
	l.manMu.Lock()
	gs := append(append([]recovery.Gap(nil), *l.gaps.Load()...), g)
	l.gaps.Store(&gs)
	l.manMu.Unlock()
	l.degraded.Store(true)
	l.opts.Logger.Error("offsets lost", "dir", l.dir, "offsets", fmt.Sprintf("[%d,%d)", g.FirstOffset, g.EndOffset), "reason", g.Reason)
	if err := l.writeManifest(-1, -1); err != nil {
		l.opts.Logger.Error("record lost offsets", "dir", l.dir, "err", err)
	}
}

// writeManifest records the log's segments durably (recovery.Manifest):
// the current ones, plus add (a segment about to be created, -1: none),
// minus retire (a segment about to be deleted, -1: none), with the lost
// ranges recovery found.
func (l *Log) writeManifest(add, retire int64) error {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.writeManifestLocked(add, retire)
}

// writeManifestLocked is writeManifest for a caller holding segMu.
func (l *Log) writeManifestLocked(add, retire int64) error {
	l.manMu.Lock()
	defer l.manMu.Unlock()
	m := recovery.Manifest{Gaps: *l.gaps.Load()}
	for _, st := range l.segs {
		if b := st.seg.Base(); b != retire {
			m.Segments = append(m.Segments, b)
		}
	}
	if add >= 0 {
		m.Segments = append(m.Segments, add)
	}
	if retire >= 0 {
		m.Retired = []int64{retire}
	}
	if err := recovery.WriteManifest(l.dir, m); err != nil {
		return fmt.Errorf("partition %s: %w", l.dir, err)
	}
	return nil
}

// lastTimestamp is the last commit timestamp stored, so timestamps stay
// monotonic across restarts.
func (l *Log) lastTimestamp() int64 {
	var last int64
	for i := len(l.segs) - 1; i >= 0 && last == 0; i-- {
		st := l.segs[i]
		_ = scanHeaders(st.seg, st.seg.Lookup(st.seg.Base()+(1<<62)), st.durable.Load(), func(_ int64, h codec.BatchHeader) bool {
			last = max(last, h.LastTimestamp)
			return true
		})
	}
	return last
}

// Append adds recs to the log as one contiguous run of offsets and waits
// until the sync mode's promise holds: fsynced and verified (every-write) or
// written to the OS (interval). It returns the first offset and the commit
// timestamp shared by all of recs. Offset and Timestamp of recs are ignored.
// If ctx ends first, Append returns its error and the records may or may not
// have been stored.
func (l *Log) Append(ctx context.Context, recs []codec.Record) (base int64, ts int64, err error) {
	return l.AppendProducer(ctx, recs, codec.ProducerStamp{})
}

// AppendProducer is Append for the records of one batch of an idempotent
// producer: they are written as one batch of their own (however many
// records or bytes, up to codec.MaxBatchBytes) stamped with producer (record
// i has sequence producer.BaseSequence+i, codec/doc.go), so that
// ProducerBatches finds exactly that batch after a restart.
func (l *Log) AppendProducer(ctx context.Context, recs []codec.Record, producer codec.ProducerStamp) (base int64, ts int64, err error) {
	if len(recs) == 0 {
		return 0, 0, fmt.Errorf("%w: no records", ErrInvalid)
	}
	if producer.ID != 0 {
		size := 0
		for i := range recs {
			size += codec.EncodedSize(&recs[i])
		}
		if size > codec.MaxBatchBytes {
			return 0, 0, fmt.Errorf("%w: %d records of %d bytes encoded, one batch holds at most %d", ErrRecordTooLarge, len(recs), size, codec.MaxBatchBytes)
		}
	}
	req, err := l.enqueue(recs, l.syncMode() == SyncEveryWrite, producer)
	if err != nil {
		return 0, 0, err
	}
	select {
	case err = <-req.done:
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	if err != nil {
		return 0, 0, err
	}
	return req.recs[0].Offset, req.recs[0].Timestamp, nil
}

// enqueue assigns offsets and a commit timestamp to recs under the writer
// lock and hands them to the writer. A nil recs is a barrier: it is acked
// once everything enqueued before it is durable.
func (l *Log) enqueue(recs []codec.Record, strict bool, producer codec.ProducerStamp) (*appendReq, error) {
	size := 0
	for i := range recs {
		n := codec.EncodedSize(&recs[i])
		if n > l.opts.MaxRecordBytes {
			return nil, fmt.Errorf("%w: record %d is %d bytes encoded, the limit is %d", ErrRecordTooLarge, i, n, l.opts.MaxRecordBytes)
		}
		size += n
	}
	req := &appendReq{bytes: size, strict: strict, producer: producer, done: make(chan error, 1)}
	l.mu.Lock()
	if l.failed != nil && !l.rewound {
		err := l.failed
		l.mu.Unlock()
		l.kick(l.wakeRewind) // a rewind that failed is tried again
		return nil, err
	}
	if l.closing {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	ts := max(time.Now().UnixMilli(), l.lastTS)
	l.lastTS = ts
	if len(recs) > 0 {
		owned := make([]codec.Record, len(recs))
		copy(owned, recs)
		for i := range owned {
			owned[i].Offset = l.nextOffset + int64(i)
			owned[i].Timestamp = ts
		}
		req.recs = owned
		l.nextOffset += int64(len(recs))
	}
	req.end = l.nextOffset
	l.pending = append(l.pending, req)
	l.pendingBytes += size
	l.mu.Unlock()
	l.kick(l.wakeWriter)
	return req, nil
}

// ExposeHiddenTail makes the records recovery kept hidden (between the HWM
// and the recovered end, under the "hide" policy) visible now: it fsyncs
// the segments holding them, moves the HWM over them, wakes readers and
// persists the hwm file. It returns how many offsets became visible.
func (l *Log) ExposeHiddenTail() (int64, error) {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	hwm, end := l.hwm.Load(), l.durable.Load()
	if end <= hwm {
		return 0, nil
	}
	l.segMu.RLock()
	segs := append([]*segState(nil), l.segs...)
	l.segMu.RUnlock()
	for i, st := range segs {
		if i+1 < len(segs) && segs[i+1].seg.Base() <= hwm {
			continue // wholly below the HWM
		}
		if err := st.seg.SyncData(); err != nil {
			return 0, fmt.Errorf("partition %s: expose hidden tail: %w", l.dir, err)
		}
	}
	l.advanceHWM(end)
	if err := l.persistHWM(true); err != nil {
		return 0, err
	}
	return end - hwm, nil
}
