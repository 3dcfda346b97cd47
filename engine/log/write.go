package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
			w.drain()
		case <-l.wakeRewind:
			l.rewind()
		case <-l.stop:
			w.drain()
			return
		}
	}
}

// batchWriter holds the writer goroutine's reusable buffers.
type batchWriter struct {
	l      *Log
	buf    []byte
	recs   []codec.Record
	strict []*appendReq
	lax    []*appendReq
	stamp  codec.ProducerStamp // the producer of the records in recs
}

// drain writes everything buffered, repeating until the buffer is empty.
func (w *batchWriter) drain() {
	l := w.l
	for {
		l.rewind() // after a failure, before anything else is written
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
			return
		}
		if err := w.write(reqs); err != nil {
			if l.failedErr() == nil {
				l.fail(err)
			}
			l.rewind()
			for _, r := range reqs {
				select {
				case r.done <- l.failedErr():
				default: // already answered
				}
			}
		} else if failed != nil {
			l.opts.Logger.Info("partition writes again", "dir", l.dir, "after", failed)
		}
	}
}

// write cuts the records of reqs into batches of at most FlushRecords
// records and FlushBytes bytes, writes them, then acks interval-mode
// appends (written to the OS) and hands strict ones to the syncer.
func (w *batchWriter) write(reqs []*appendReq) error {
	l := w.l
	w.recs = w.recs[:0]
	bytes := 0
	for _, r := range reqs {
		for i := range r.recs {
			n := recordSize(&r.recs[i])
			// An idempotent producer's append is one batch of its own,
			// whatever its size, so that its stamp names it exactly.
			apart := i == 0 && (r.producer.ID != 0 || w.stamp.ID != 0)
			full := w.stamp.ID == 0 && (len(w.recs) >= l.opts.FlushRecords || bytes+n > l.opts.FlushBytes)
			if len(w.recs) > 0 && (apart || full) {
				if err := w.writeBatch(); err != nil {
					return err
				}
				bytes = 0
			}
			if len(w.recs) == 0 {
				w.stamp = r.producer
			}
			w.recs = append(w.recs, r.recs[i])
			bytes += n
		}
	}
	if len(w.recs) > 0 {
		if err := w.writeBatch(); err != nil {
			return err
		}
	}

	w.strict, w.lax = w.strict[:0], w.lax[:0]
	for _, r := range reqs {
		if r.strict {
			w.strict = append(w.strict, r)
		} else {
			w.lax = append(w.lax, r)
		}
	}
	l.wmu.Lock()
	l.committed = l.written // every batch of reqs is written
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

// writeBatch encodes w.recs as one batch and writes it to the active
// segment, rolling first if it would not fit.
func (w *batchWriter) writeBatch() error {
	l := w.l
	base := w.recs[0].Offset
	var err error
	w.buf, err = codec.AppendBatch(w.buf[:0], base, w.recs, codec.EncodeOptions{Codec: l.opts.Codec, Producer: w.stamp})
	w.recs = w.recs[:0]
	if err != nil {
		return fmt.Errorf("encode batch at offset %d: %w", base, err)
	}
	hdr, err := codec.ParseHeader(w.buf)
	if err != nil {
		return fmt.Errorf("encode batch at offset %d: %w", base, err)
	}
	l.segMu.RLock()
	active := l.segs[len(l.segs)-1]
	l.segMu.RUnlock()
	if size := active.seg.Size(); size > 0 && size+int64(len(w.buf)) > l.segmentMaxBytes() {
		if l.strayAt(base) {
			// A file Pulse did not write holds the new segment's name: it
			// is left alone, and this batch goes to the active segment,
			// past its size limit (the next roll is at a later offset).
			l.opts.Logger.Warn("segment roll postponed: a stray file holds the name", "dir", l.dir, "file", segment.LogFile(base))
		} else if active, err = l.roll(base); err != nil {
			return err
		}
	}
	pos, err := active.seg.Append(w.buf, hdr)
	if err != nil {
		return fmt.Errorf("partition %s: append batch at offset %d: %w", l.dir, base, err)
	}
	end := base + int64(hdr.RecordCount)
	l.wmu.Lock()
	l.written = end
	l.unverified = append(l.unverified, pendingSync{st: active, pos: pos, len: int64(len(w.buf)), end: end})
	if l.unsynced == 0 {
		l.unsyncedAt = time.Now()
	}
	l.unsynced += int64(len(w.buf))
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
	var buf []byte
	for _, b := range batches {
		raw, hdr, err := b.st.seg.ReadBatch(b.pos, buf)
		if err == nil && int64(len(raw)) != b.len {
			err = fmt.Errorf("%w: re-read %d bytes, wrote %d", codec.ErrCorrupt, len(raw), b.len)
		}
		if err == nil {
			_, err = codec.VerifyBatch(raw)
		}
		if err == nil && hdr.BaseOffset+int64(hdr.RecordCount) != b.end {
			err = fmt.Errorf("%w: re-read batch ends at offset %d, wrote %d", codec.ErrCorrupt, hdr.BaseOffset+int64(hdr.RecordCount), b.end)
		}
		if err != nil {
			return fmt.Errorf("verify %s at position %d: %w", b.st.seg.Path(), b.pos, errors.Join(ErrVerify, err))
		}
		buf = raw[:0]
		b.st.durable.Store(b.pos + b.len)
	}
	return nil
}
