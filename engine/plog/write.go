package plog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// writeLoop is the writer goroutine: it drains the append buffer into
// batches and writes them to the active segment until Close.
func (l *Log) writeLoop() {
	defer l.done.Done()
	w := &batchWriter{l: l}
	for {
		select {
		case <-l.wakeWriter:
			if l.syncMode() == SyncEveryWrite {
				// Group commit starts here: the producers a sync pass
				// just acked are runnable and about to append again.
				// Letting them run first makes their appends one
				// drain (one write, one hand-over to the syncer)
				// instead of one drain for every two or three of them
				// (BenchmarkEveryWrite64: 19 drains per fsync before,
				// 3 after). With no other goroutine runnable, it
				// returns at once.
				runtime.Gosched()
				l.awaitCohort()
			}
			w.drain()
		case <-l.wakeRewind:
			l.rewind()
		case <-l.stop:
			w.drain()
			return
		}
	}
}

// Bounds of awaitCohort's wait.
const (
	cohortYields = 16
	cohortWait   = 50 * time.Microsecond
)

// awaitCohort is the writer's side of group commit in every-write mode:
// when the last sync pass acked several appends, it keeps yielding (at most
// cohortYields times and cohortWait) until as many appends are buffered, so
// that the producers still being woken by the pass's acks append before the
// drain, and one fsync's appends are written in one or two drains (one
// write and one hand-over to the syncer each) instead of three or four
// (BenchmarkEveryWrite64 with a drain counter added: 3.1–3.5 drains per 64
// appends before, 1.8–2.2 after). A lone producer never waits; with no
// other goroutine runnable each yield returns at once.
func (l *Log) awaitCohort() {
	want := int(l.lastAcked.Load())
	if want < 2 {
		return
	}
	start := time.Now()
	for range cohortYields {
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n >= want || time.Since(start) >= cohortWait {
			return
		}
		runtime.Gosched()
	}
}

// batchWriter holds the writer goroutine's reusable buffers.
type batchWriter struct {
	l      *Log
	free   []*batchJob // encoded and written jobs, kept for their buffers
	queue  []*drainJob // drains taken and not yet written, oldest first
	strict []*appendReq
	lax    []*appendReq
}

// drainJob is what one drain took from the append buffer: its appends and
// the batches they were cut into, in offset order.
type drainJob struct {
	reqs    []*appendReq
	failed  error // the log's failure the drain retries after, or nil
	batches []*batchJob
	async   bool // some batch is encoded on its own goroutine
	acked   int  // reqs[:acked] were answered as their batches were written
}

// batchJob is one batch of a drain. Its encoding (compression, CRC) runs on
// its own goroutine for a large zstd batch, so that the writer can take the
// next drain and another core can compress it while this one is written;
// otherwise it is encoded in line. The bytes are those codec.AppendBatch
// makes either way.
type batchJob struct {
	recs  []codec.Record
	stamp codec.ProducerStamp // the idempotent producer of recs, zero for none
	buf   []byte
	hdr   codec.BatchHeader
	err   error
	done  chan struct{} // closed once buf, hdr and err are set
}

// pipelineDepth is how many drains the writer holds taken but not yet
// written: while the oldest is compressed or written, the next one is
// compressed too. A drain encoded in line (codec none, small batches) is
// written at once, exactly as without the pipeline.
const pipelineDepth = 2

// asyncEncodeBytes is the smallest zstd batch (records bytes) encoded off
// the writer's goroutine: below it the hand-over costs about what it saves.
const asyncEncodeBytes = 16 << 10

// drain writes everything buffered, repeating until the buffer is empty.
// Up to pipelineDepth drains are in flight (the next is taken only while
// the last one taken is still being compressed): each is written, in order,
// once its batches are encoded, and only while no failure is outstanding (a
// failure voids the offsets of every drain taken and not yet written, as it
// voids those of the appends still buffered).
func (w *batchWriter) drain() {
	l := w.l
	for {
		if len(w.queue) == 0 {
			l.rewind() // after a failure, before anything else is written
		}
		var d *drainJob
		if len(w.queue) == 0 || l.failedErr() == nil {
			d = w.take()
		}
		if d != nil {
			w.queue = append(w.queue, d)
			if d.async && len(w.queue) < pipelineDepth {
				continue
			}
		}
		if len(w.queue) == 0 {
			return
		}
		head := w.queue[0]
		w.queue = w.queue[1:]
		err := l.failedErr()
		if err == nil {
			err = w.write(head)
		}
		if err == nil {
			if head.failed != nil {
				l.opts.Logger.Info("partition writes again", "dir", l.dir, "after", head.failed)
			}
			continue
		}
		if l.failedErr() == nil {
			l.fail(err)
		}
		l.rewind()
		for _, d := range append([]*drainJob{head}, w.queue...) {
			w.abandon(d)
			for _, r := range d.reqs[d.acked:] {
				select {
				case r.done <- l.failedErr():
				default: // already answered
				}
			}
		}
		clear(w.queue)
		w.queue = w.queue[:0]
	}
}

// takeAhead is called by write while it waits for a batch still being
// compressed: it takes the appends buffered meanwhile (those of producers
// acked by the drain's earlier batches) as the next drain, so that they
// compress now, on the core the waited-for batch leaves idle, instead of
// after the whole drain is written. At most pipelineDepth drains are in
// flight, and none is taken while a failure is outstanding.
func (w *batchWriter) takeAhead() {
	if 1+len(w.queue) >= pipelineDepth || w.l.failedErr() != nil {
		return
	}
	if d := w.take(); d != nil {
		w.queue = append(w.queue, d)
	}
}

// take empties the append buffer into a drain and starts encoding its
// batches; nil when the buffer is empty.
func (w *batchWriter) take() *drainJob {
	l := w.l
	l.mu.Lock()
	reqs := l.pending
	l.pending = nil
	l.pendingBytes = 0
	failed := l.failed
	if failed != nil && l.rewound && len(reqs) > 0 {
		// A retry: the log is back at its durable end; if the disk
		// recovered, this write succeeds and the partition serves again.
		l.failed, l.rewound = nil, false
	}
	l.mu.Unlock()
	if len(reqs) == 0 {
		return nil
	}
	d := &drainJob{reqs: reqs, failed: failed}
	w.cut(d)
	return d
}

// cut cuts the records of d's appends into batches and starts encoding
// each. A batch holds at most FlushRecords records and FlushBytes bytes; a
// drain that needs several is cut into batches of about equal size (not
// full ones and a small rest), and a large zstd drain into at least one
// batch per core that compresses (so that its batches compress side by
// side) and, when it holds several appends, up to two per core.
func (w *batchWriter) cut(d *drainJob) {
	l := w.l
	total, count := 0, 0
	for _, r := range d.reqs {
		for i := range r.recs {
			total += codec.EncodedSize(&r.recs[i])
		}
		count += len(r.recs)
	}
	if count == 0 {
		return
	}
	k := max(ceilDiv(count, l.opts.FlushRecords), ceilDiv(total, l.opts.FlushBytes))
	if l.opts.Codec == codec.CodecZstd && total >= splitZstdBytes {
		// One batch per compressing core at least, and one per append up
		// to two per core, so that the first appends are acked while the
		// last are still being compressed.
		k = max(k, codec.Compressors(), min(len(d.reqs), 2*codec.Compressors()))
	}
	k = min(k, count)
	maxRecs := min(l.opts.FlushRecords, ceilDiv(count, k))
	maxBytes := ceilDiv(total, k)
	var job *batchJob
	bytes := 0
	for _, r := range d.reqs {
		for i := range r.recs {
			n := codec.EncodedSize(&r.recs[i])
			// An idempotent producer's append is one batch of its own,
			// whatever its size, so that its stamp names it exactly.
			apart := i == 0 && job != nil && (r.producer.ID != 0 || job.stamp.ID != 0)
			full := job != nil && job.stamp.ID == 0 && (len(job.recs) >= maxRecs || bytes >= maxBytes || bytes+n > l.opts.FlushBytes)
			if apart || full {
				d.async = w.encode(job, bytes) || d.async
				job = nil
			}
			if job == nil {
				job = w.newJob()
				job.stamp = r.producer
				d.batches = append(d.batches, job)
				bytes = 0
			}
			job.recs = append(job.recs, r.recs[i])
			bytes += n
		}
	}
	d.async = w.encode(job, bytes) || d.async
}

// splitZstdBytes is the smallest zstd drain (records bytes) cut into a batch
// per compressing core.
const splitZstdBytes = 128 << 10

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (w *batchWriter) newJob() *batchJob {
	if n := len(w.free); n > 0 {
		j := w.free[n-1]
		w.free = w.free[:n-1]
		j.recs, j.buf, j.err, j.stamp = j.recs[:0], j.buf[:0], nil, codec.ProducerStamp{}
		j.done = make(chan struct{})
		return j
	}
	return &batchJob{done: make(chan struct{})}
}

// encode encodes job's records, on another goroutine when it is a large
// zstd batch (then it reports true).
func (w *batchWriter) encode(job *batchJob, bytes int) bool {
	opts := codec.EncodeOptions{Codec: w.l.opts.Codec, Producer: job.stamp}
	if opts.Codec == codec.CodecZstd && bytes >= asyncEncodeBytes {
		go job.run(opts)
		return true
	}
	job.run(opts)
	return false
}

// run encodes the batch and closes done.
func (j *batchJob) run(opts codec.EncodeOptions) {
	defer close(j.done)
	base := j.recs[0].Offset
	j.buf, j.err = codec.AppendBatch(j.buf[:0], base, j.recs, opts)
	if j.err != nil {
		j.err = fmt.Errorf("encode batch at offset %d: %w", base, j.err)
		return
	}
	if j.hdr, j.err = codec.ParseHeader(j.buf); j.err != nil {
		j.err = fmt.Errorf("encode batch at offset %d: %w", base, j.err)
	}
}

// abandon waits for the encoding of d's batches and keeps their buffers.
func (w *batchWriter) abandon(d *drainJob) {
	for _, job := range d.batches {
		<-job.done
		w.recycle(job)
	}
	d.batches = nil
}

func (w *batchWriter) recycle(job *batchJob) {
	clear(job.recs) // the records' bytes belong to the appenders
	job.recs = job.recs[:0]
	if cap(job.buf) > 2*w.l.opts.FlushBytes+codec.HeaderLen {
		job.buf = nil
	}
	if len(w.free) < 2*pipelineDepth {
		w.free = append(w.free, job)
	}
}

// write writes d's batches in order, then acks interval-mode appends
// (written to the OS) and hands strict ones to the syncer. The leading
// interval-mode appends are acked as soon as their last batch is written,
// so that their producers append again while the drain's later batches are
// still being compressed.
func (w *batchWriter) write(d *drainJob) error {
	l := w.l
	for i, job := range d.batches {
		select {
		case <-job.done:
		default:
			w.takeAhead()
			<-job.done
		}
		err := job.err
		if err == nil {
			err = w.writeBatch(job)
		}
		end := job.hdr.BaseOffset + int64(job.hdr.RecordCount)
		w.recycle(job)
		if err != nil {
			d.batches = d.batches[i+1:]
			return err
		}
		if i < len(d.batches)-1 {
			w.ackWritten(d, end)
		}
	}
	d.batches = nil

	w.strict, w.lax = w.strict[:0], w.lax[:0]
	for _, r := range d.reqs[d.acked:] {
		if r.strict {
			w.strict = append(w.strict, r)
		} else {
			w.lax = append(w.lax, r)
		}
	}
	d.acked = len(d.reqs)
	l.wmu.Lock()
	l.committed = l.written // every batch of d is written
	l.syncWaiters = append(l.syncWaiters, w.strict...)
	needSync := len(l.syncWaiters) > 0 ||
		(l.unsynced > 0 && (l.unsynced >= l.opts.SyncBytes || time.Since(l.lastSync) >= l.opts.SyncInterval))
	l.wmu.Unlock()
	if len(w.lax) > 0 {
		l.wmu.Lock()
		l.laxAcked = max(l.laxAcked, w.lax[len(w.lax)-1].end)
		l.wmu.Unlock()
	}
	for _, r := range w.lax {
		r.done <- nil
	}
	if needSync || l.watching() || (l.syncMode() == SyncInterval && l.opts.VisibleWithin > 0) {
		l.kick(l.wakeSyncer) // interval mode: the syncer holds the fsync for the visibility window
	} else {
		l.kick(l.wakeTimer) // unsynced data: the syncer's timer must be armed
	}
	return nil
}

// ackWritten acks the interval-mode appends at the front of d's unanswered
// ones whose records all lie below end (written): they are acked exactly as
// at the end of the drain, only sooner. It stops at the first strict append.
func (w *batchWriter) ackWritten(d *drainJob, end int64) {
	l := w.l
	k := d.acked
	for k < len(d.reqs) && !d.reqs[k].strict && len(d.reqs[k].recs) > 0 && d.reqs[k].end <= end {
		k++
	}
	if k == d.acked {
		return
	}
	l.wmu.Lock()
	l.laxAcked = max(l.laxAcked, d.reqs[k-1].end)
	l.wmu.Unlock()
	for _, r := range d.reqs[d.acked:k] {
		r.done <- nil
	}
	d.acked = k
}

// writeBatch writes one encoded batch to the active segment, rolling first
// if it would not fit.
func (w *batchWriter) writeBatch(job *batchJob) error {
	l := w.l
	hdr := job.hdr
	base := hdr.BaseOffset
	l.segMu.RLock()
	active := l.segs[len(l.segs)-1]
	l.segMu.RUnlock()
	var err error
	if size := active.seg.Size(); size > 0 && size+int64(len(job.buf)) > l.segmentMaxBytes() {
		if l.strayAt(base) {
			// A file Pulse did not write holds the new segment's name: it
			// is left alone, and this batch goes to the active segment,
			// past its size limit (the next roll is at a later offset).
			l.opts.Logger.Warn("segment roll postponed: a stray file holds the name", "dir", l.dir, "file", segment.LogFile(base))
		} else if active, err = l.roll(base); err != nil {
			return err
		}
	}
	pos, err := active.seg.Append(job.buf, hdr)
	if err != nil {
		return fmt.Errorf("partition %s: append batch at offset %d: %w", l.dir, base, err)
	}
	end := base + int64(hdr.RecordCount)
	l.wmu.Lock()
	l.written = end
	l.unverified = append(l.unverified, pendingSync{st: active, pos: pos, len: int64(len(job.buf)), end: end})
	if l.unsynced == 0 {
		l.unsyncedAt = time.Now()
	}
	l.unsynced += int64(len(job.buf))
	l.wmu.Unlock()
	return nil
}

// strayAt reports whether a .log file named for base exists (a file the
// manifest does not list: recovery reported it as stray).
func (l *Log) strayAt(base int64) bool {
	_, err := os.Lstat(filepath.Join(l.dir, segment.LogFile(base)))
	return err == nil
}

// roll seals the active segment and starts a new one at base. Everything
// written so far is made durable first, so a sealed segment is always fully
// fsynced and verified; the recovery snapshot is rewritten afterwards.
// Only the writer goroutine rolls.
func (l *Log) roll(base int64) (*segState, error) {
	// The sealed segment is made durable whole, so the batches of an
	// append that straddles the roll are exposed with it: the one case in
	// which a later failure of the same append leaves its first part.
	l.wmu.Lock()
	l.committed = l.written
	l.wmu.Unlock()
	if err := l.syncNow(); err != nil {
		return nil, err
	}
	l.segMu.RLock()
	sealed := l.segs[len(l.segs)-1]
	l.segMu.RUnlock()
	if err := sealed.seg.Sync(); err != nil { // its index too, now that it is sealed
		l.fail(err)
		return nil, err
	}
	// The manifest lists the new segment before its file exists: a crash in
	// between leaves a listed segment that was never created (nothing lost),
	// never a file recovery would take for a stray. segMu is held from the
	// manifest to the new segment's place in segs, so that no other
	// manifest write (retention, compaction) records the segments without it.
	l.segMu.Lock()
	if err := l.writeManifestLocked(base, -1); err != nil {
		l.segMu.Unlock()
		return nil, fmt.Errorf("partition %s: roll at offset %d: %w", l.dir, base, err)
	}
	seg, err := segment.Create(l.dir, base, segment.Options{IndexIntervalBytes: l.opts.IndexIntervalBytes, Pool: l.opts.FilePool})
	if err != nil {
		l.segMu.Unlock()
		return nil, fmt.Errorf("partition %s: roll at offset %d: %w", l.dir, base, err)
	}
	st := l.newSegState(seg)
	l.segs = append(l.segs, st)
	l.segMu.Unlock()
	if err := l.writeSnapshot(); err != nil {
		return nil, err
	}
	return st, nil
}

// syncLoop is the syncer goroutine: it runs a sync pass whenever the writer
// asks for one, and on its timer for interval mode and hwm persistence. The
// timer is armed only while such timed work waits, so an idle partition
// costs no wakeups at all.
func (l *Log) syncLoop() {
	defer l.done.Done()
	t := time.NewTimer(l.opts.FlushInterval)
	defer t.Stop()
	armed := true
	for {
		select {
		case <-l.wakeSyncer:
			l.gatherCommitters()
			l.awaitVisibilityWindow()
			_ = l.syncNow() // a failure is answered to every waiter after the rewind
		case <-l.wakeTimer:
		case <-t.C:
			armed = false
			l.wmu.Lock()
			due := l.unsynced > 0 && time.Since(l.lastSync) >= l.opts.SyncInterval
			l.wmu.Unlock()
			if due {
				_ = l.syncNow()
			}
			if err := l.persistHWM(false); err != nil {
				l.opts.Logger.Error("persist hwm", "dir", l.dir, "err", err)
			}
		case <-l.stop:
			return
		}
		if !armed && l.timedWorkPending() {
			t.Reset(l.opts.FlushInterval)
			armed = true
		}
	}
}

// timedWorkPending reports whether the syncer's timer has work: written
// data waiting for an interval-mode fsync, or an HWM not yet persisted.
func (l *Log) timedWorkPending() bool {
	l.wmu.Lock()
	unsynced := l.unsynced > 0
	l.wmu.Unlock()
	if unsynced {
		return true
	}
	l.hwmMu.Lock()
	defer l.hwmMu.Unlock()
	return l.hwm.Load() != l.persistedHWM
}

// awaitVisibilityWindow is interval mode's coalescing: when only lax
// appends wait for their fsync (no strict waiter, less than SyncBytes
// unsynced), it sleeps until VisibleWithin after the first unsynced write,
// so every write of the window shares one fsync and none waits longer.
func (l *Log) awaitVisibilityWindow() {
	if l.syncMode() != SyncInterval || l.opts.VisibleWithin <= 0 {
		return
	}
	l.wmu.Lock()
	strict := len(l.syncWaiters) > 0
	at, big := l.unsyncedAt, l.unsynced >= l.opts.SyncBytes
	l.wmu.Unlock()
	if strict || big || at.IsZero() {
		return
	}
	d := time.Until(at.Add(l.opts.VisibleWithin))
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.stop:
	}
}

// gatherCommitters is group commit's bounded wait (PostgreSQL's
// commit_delay, made adaptive): when the last pass acked several strict
// appends, their producers are likely about to append again, so the syncer
// waits until as many appends are waiting again, or half an fsync time
// passes, before it starts the next fsync. Without it the producers acked by
// one pass always miss the next one, and two half-sized cohorts alternate. A
// lone producer never waits.
func (l *Log) gatherCommitters() {
	want := int(l.lastAcked.Load())
	if want < 2 {
		return
	}
	budget := time.Duration(l.fsyncNanos.Load()) / 2
	budget = min(budget, 2*time.Millisecond)
	if budget <= 0 {
		return
	}
	timer := time.NewTimer(budget)
	defer timer.Stop()
	for {
		l.wmu.Lock()
		n := len(l.syncWaiters)
		l.wmu.Unlock()
		if n >= want {
			return
		}
		select {
		case <-l.wakeSyncer: // the writer handed over more appends
		case <-timer.C:
			return
		case <-l.stop:
			return
		}
	}
}

// syncNow fsyncs every segment written since the last pass, re-reads and
// CRC-verifies the new batches, advances the HWM over them and acks the
// strict appends they hold. The HWM therefore only ever covers data that is
// both fsynced and verified.
func (l *Log) syncNow() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.wmu.Lock()
	// Only the batches of appends written whole: those of a write still
	// under way wait for the next pass (or go with a rewind).
	end := l.committed
	k := 0
	for k < len(l.unverified) && l.unverified[k].end <= end {
		k++
	}
	batches := l.unverified[:k:k]
	l.unverified = append([]pendingSync(nil), l.unverified[k:]...)
	waiters := l.syncWaiters
	l.syncWaiters = nil
	l.unsynced = 0
	for _, b := range l.unverified {
		l.unsynced += b.len
	}
	if l.unsynced == 0 {
		l.unsyncedAt = time.Time{}
	}
	l.lastSync = time.Now()
	l.wmu.Unlock()

	if err := l.failedErr(); err != nil {
		// The writer rewinds, then answers them.
		l.wmu.Lock()
		l.failWaiters = append(l.failWaiters, waiters...)
		l.wmu.Unlock()
		l.kick(l.wakeRewind)
		return err
	}
	if len(batches) > 0 {
		if err := l.syncAndVerify(batches); err != nil {
			l.fail(err)
			l.wmu.Lock()
			l.failWaiters = append(l.failWaiters, waiters...)
			l.wmu.Unlock()
			l.kick(l.wakeRewind)
			return l.failedErr()
		}
		l.syncPasses.Add(1)
		l.observeCommit(end-l.durable.Load(), len(waiters))
		l.durable.Store(end)
		l.advanceHWM(end)
	}
	for _, r := range waiters {
		r.done <- nil
	}
	l.lastAcked.Store(int64(len(waiters)))
	if err := l.persistHWM(false); err != nil {
		l.opts.Logger.Error("persist hwm", "dir", l.dir, "err", err)
	}
	return nil
}

// verifyReadBytes bounds one re-read of syncAndVerify (a single larger
// batch is read whole).
const verifyReadBytes = 1 << 20

// syncAndVerify fsyncs the segments holding batches, then re-reads each
// batch from the file and checks its header and CRC (seed 000's
// VerifyDurable) before the caller exposes it.
func (l *Log) syncAndVerify(batches []pendingSync) error {
	var last *segState
	for _, b := range batches {
		if b.st == last {
			continue
		}
		last = b.st
		t0 := time.Now()
		if err := b.st.seg.SyncData(); err != nil {
			return fmt.Errorf("fsync %s: %w", b.st.seg.Path(), err)
		}
		// Moving average of the fsync time, for gatherCommitters.
		d := time.Since(t0).Nanoseconds()
		l.fsyncNanos.Store((3*l.fsyncNanos.Load() + d) / 4)
		l.observeFsync(time.Duration(d))
	}
	// The batches of one segment lie back to back: each run of them (up to
	// verifyReadBytes, or one larger batch) is re-read with one read, not
	// two per batch, and each batch in it is checked on its own.
	for i := 0; i < len(batches); {
		run := batches[i]
		j, size := i+1, run.len
		for j < len(batches) && batches[j].st == run.st && batches[j].pos == run.pos+size && size+batches[j].len <= verifyReadBytes {
			size += batches[j].len
			j++
		}
		if int64(cap(l.verifyBuf)) < size {
			l.verifyBuf = make([]byte, size)
		}
		raw := l.verifyBuf[:size]
		if n, err := run.st.seg.ReadAt(raw, run.pos); n < len(raw) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: re-read %d bytes, wrote %d", codec.ErrTorn, n, size)
			}
			return fmt.Errorf("verify %s at position %d: %w", run.st.seg.Path(), run.pos, errors.Join(ErrVerify, err))
		}
		for _, b := range batches[i:j] {
			hdr, err := codec.VerifyBatch(raw[:b.len])
			if err == nil && hdr.BaseOffset+int64(hdr.RecordCount) != b.end {
				err = fmt.Errorf("%w: re-read batch ends at offset %d, wrote %d", codec.ErrCorrupt, hdr.BaseOffset+int64(hdr.RecordCount), b.end)
			}
			if err != nil {
				return fmt.Errorf("verify %s at position %d: %w", b.st.seg.Path(), b.pos, errors.Join(ErrVerify, err))
			}
			raw = raw[b.len:]
			b.st.durable.Store(b.pos + b.len)
		}
		i = j
	}
	if cap(l.verifyBuf) > verifyReadBytes {
		l.verifyBuf = nil // one large batch: not kept
	}
	return nil
}
