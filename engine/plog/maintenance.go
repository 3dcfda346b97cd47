package plog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/fsutil"
)

// This file holds the hooks retention (engine/retention) and compaction
// (engine/compact) use to delete and replace sealed segments.
//
// # Locking
//
// A maintenance pass runs between BeginMaintenance and Pass.End and holds
// the log's maintenance lock (maintState.mu) the whole time, so retention and
// compaction of one partition never overlap: a segment can never be trimmed
// away while a compaction is rewriting it. Every change to the segment list
// (TrimOldest, RemoveSegment, SwapSegment) additionally takes segMu for
// writing, as log.go's contract says; the writer only ever appends to the
// active segment and a roll only adds one, so neither conflicts with a pass,
// and the active segment is never touched.
//
// # Readers in flight
//
// Read, Segments and OffsetForTimestamp pick a *segState under segMu and then
// use its segment without the lock. A pass therefore never closes a file a
// reader may still hold: a trimmed segment's files are unlinked and a swapped
// segment's files are renamed over, but the old descriptors stay open on the
// old inodes, so a reader that picked the old segState keeps reading exactly
// the bytes its in-memory index describes (the old, still consistent data).
// Its read-cache entries are dropped under segMu when it leaves the list,
// and the segment that replaces it has a new identity, so no stale entry is
// ever hit.
//
// The old segment is retired, and closed once no reader can hold it. Those
// readers pin the log (pinReads / unpinReads, a read lock on
// maintState.readMu) for as long as they use a segState picked under segMu.
// A reader that starts after the retirement cannot pick the retired segment,
// so the first moment with no pinned reader proves every retired segment
// unreachable: closeRetired (at the start and the end of every pass, and in
// Close) tries the write lock without waiting and, when it gets it, closes
// them all. A segment retired longer than retireGrace is closed in any case,
// so readers that never pause cannot make descriptors pile up; a read is
// bounded by its byte and record limits and lasts far less than that.

// retireGrace bounds how long a segment taken out of the list by a pass
// stays open while readers keep the log pinned.
const retireGrace = time.Minute

// maintState is the maintenance side of a Log.
type maintState struct {
	// mu is the maintenance lock, held from BeginMaintenance to Pass.End.
	mu         sync.Mutex
	compacting atomic.Bool // a compaction pass holds mu

	// readMu is held for reading by every reader that uses a segState
	// outside segMu (pinReads); closeRetired tries it for writing, without
	// waiting, to learn that no such reader is in flight.
	readMu sync.RWMutex

	// retiredMu guards retired.
	retiredMu sync.Mutex
	retired   []retiredSegment
}

// pinReads marks a reader in flight: segments it picks stay open until
// unpinReads. Calls nest; each pinReads needs one unpinReads.
func (l *Log) pinReads() { l.maint.readMu.RLock() }

// unpinReads ends what pinReads began.
func (l *Log) unpinReads() { l.maint.readMu.RUnlock() }

// retiredSegment is a segment taken out of the list, kept open for readers.
type retiredSegment struct {
	seg *segment.Segment
	at  time.Time
}

// PassKind says what a maintenance pass does.
type PassKind int

const (
	PassRetention PassKind = iota
	PassCompaction
)

// Pass is one maintenance pass over the log. Its hooks may only be used by
// the goroutine that began it, until End.
type Pass struct {
	l     *Log
	kind  PassKind
	ended bool
}

// BeginMaintenance waits until no other pass runs on l and starts one.
// Compacting reports true while a PassCompaction pass runs. A log that is
// closing refuses with ErrClosed; Close waits for a running pass to end, and
// the pass's hooks fail with ErrClosed from then on.
func (l *Log) BeginMaintenance(kind PassKind) (*Pass, error) {
	l.maint.mu.Lock()
	if l.isClosing() {
		l.maint.mu.Unlock()
		return nil, ErrClosed
	}
	if kind == PassCompaction {
		l.maint.compacting.Store(true)
	}
	l.closeRetired(false)
	return &Pass{l: l, kind: kind}, nil
}

// Err returns why the pass must stop: ErrPassEnded after End, ErrClosed
// once the log is closing, nil otherwise. Long passes check it between
// batches.
func (p *Pass) Err() error {
	switch {
	case p.ended:
		return ErrPassEnded
	case p.l.isClosing():
		return ErrClosed
	}
	return nil
}

func (l *Log) isClosing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closing
}

// waitMaintenance waits for a running pass to end. Close calls it after
// setting closing, so no pass starts or commits afterwards.
func (l *Log) waitMaintenance() {
	l.maint.mu.Lock()
	//lint:ignore SA2001 taking the lock is the wait: a pass holds it until End
	l.maint.mu.Unlock()
}

// End finishes the pass and releases the maintenance lock. Calling it twice
// is harmless.
func (p *Pass) End() {
	if p.ended {
		return
	}
	p.ended = true
	if p.kind == PassCompaction {
		p.l.maint.compacting.Store(false)
	}
	p.l.closeRetired(false)
	p.l.maint.mu.Unlock()
}

// Compacting reports whether a compaction pass is running on the log.
func (l *Log) Compacting() bool { return l.maint.compacting.Load() }

// Log is the partition log the pass works on.
func (p *Pass) Log() *Log { return p.l }

// ActiveSegment describes the durable prefix of the active segment.
type ActiveSegment struct {
	Base int64
	Path string
	// Durable is the length of the prefix that is fsynced and verified: it
	// ends on a batch boundary and its bytes never change.
	Durable int64
}

// Active returns the active segment's durable prefix, for compaction's
// dedupe pass. Appends may grow the segment (or roll a new one) while the
// caller reads the prefix; the prefix itself stays as it is.
func (p *Pass) Active() ActiveSegment {
	p.l.segMu.RLock()
	st := p.l.segs[len(p.l.segs)-1]
	p.l.segMu.RUnlock()
	return ActiveSegment{Base: st.seg.Base(), Path: st.seg.Path(), Durable: st.durable.Load()}
}

// Sealed describes the sealed segments, oldest first (Log.Segments without
// the active one). Their files never change while the pass holds the
// maintenance lock, so the caller may read them through Path.
func (p *Pass) Sealed() ([]SegmentInfo, error) {
	all, err := p.l.Segments()
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", p.l.dir, err)
	}
	return all[:len(all)-1], nil
}

// TrimOldest deletes the oldest segment, which must have base offset base
// and be sealed (retention). Surviving offsets do not change; the log start
// moves to the next segment's base and the recovery snapshot is rewritten.
func (p *Pass) TrimOldest(base int64) error {
	if err := p.Err(); err != nil {
		return err
	}
	l := p.l
	l.segMu.RLock()
	oldest := l.segs[0].seg.Base()
	l.segMu.RUnlock()
	if oldest != base {
		return fmt.Errorf("partition %s: trim segment %d: %w (the oldest is %d)", l.dir, base, ErrNotOldest, oldest)
	}
	return p.remove(base)
}

// RemoveSegment deletes the sealed segment with base offset base, wherever
// it is in the log: compaction uses it for a segment it emptied. Offsets
// before and after it keep their meaning; reads pass over the gap. The
// recovery snapshot is rewritten.
func (p *Pass) RemoveSegment(base int64) error {
	if err := p.Err(); err != nil {
		return err
	}
	return p.remove(base)
}

func (p *Pass) remove(base int64) error {
	l := p.l
	l.segMu.Lock()
	i, err := l.sealedIndexLocked(base)
	if err != nil {
		l.segMu.Unlock()
		return err
	}
	st := l.segs[i]
	// Readers in flight keep reading it through its descriptor after the
	// files are gone: it must not be parked from here on.
	if err := st.seg.Hold(); err != nil {
		l.segMu.Unlock()
		return fmt.Errorf("partition %s: delete segment %d: %w", l.dir, base, err)
	}
	// The manifest drops the segment first (recording it as retired, so a
	// crash before the files are gone has recovery finish the deletion).
	if err := l.writeManifestLocked(-1, base); err != nil {
		l.segMu.Unlock()
		return fmt.Errorf("partition %s: delete segment %d: %w", l.dir, base, err)
	}
	// The .log goes first: once it is gone the segment is gone for
	// recovery too (segment.List lists .log files); an .index left by a
	// crash right after is ignored.
	if err := os.Remove(st.seg.Path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.segMu.Unlock()
		return fmt.Errorf("partition %s: delete segment %d: %w", l.dir, base, err)
	}
	ierr := os.Remove(st.seg.IndexPath())
	if errors.Is(ierr, fs.ErrNotExist) {
		ierr = nil
	}
	l.segs = append(l.segs[:i:i], l.segs[i+1:]...)
	if i == 0 {
		l.logStart.Store(l.segs[0].seg.Base())
	}
	l.cache.invalidate(st.id)
	l.retire(st.seg)
	l.segMu.Unlock()

	if ierr != nil {
		ierr = fmt.Errorf("partition %s: delete index of segment %d: %w", l.dir, base, ierr)
	}
	// The snapshot pairs the log end with the active segment's durable
	// size, which a sync pass moves one after the other: taken outside
	// syncMu, the pair can be from the middle of a pass (invalid when the
	// active segment is new, wrong otherwise). syncMu is below maint.mu.
	derr := fsutil.SyncDir(l.dir)
	l.syncMu.Lock()
	serr := l.writeSnapshot()
	l.syncMu.Unlock()
	return errors.Join(ierr, derr, serr)
}

// SwapSegment replaces the sealed segment with base offset base by a
// rewritten copy (seed 002 §8's copy-and-swap commit). tmpLog and tmpIndex
// are complete, fsynced files in the partition directory whose names start
// with fsutil.TempPrefix (recovery deletes them if a crash comes first). The
// rewrite must hold the same offset range [base, next segment's base) with
// fewer records.
//
// Under segMu it re-checks that the segment is still there, renames the data
// file and then the index file over the originals, fsyncs the directory,
// opens the new files and puts them in the old segment's place with a new
// identity, dropping the old one's cache entries. A crash between the two
// renames leaves new data under the old index, which recovery's per-entry
// index check rejects and rebuilds from the data. On an error before the
// data rename nothing changed and the caller still owns the temp files.
func (p *Pass) SwapSegment(base int64, tmpLog, tmpIndex string) error {
	if err := p.Err(); err != nil {
		return err
	}
	l := p.l
	l.segMu.Lock()
	defer l.segMu.Unlock()
	i, err := l.sealedIndexLocked(base)
	if err != nil {
		return err
	}
	old := l.segs[i]
	// Readers in flight keep reading the old bytes through its descriptor:
	// it must not be parked (and reopened by name) from here on.
	if err := old.seg.Hold(); err != nil {
		return fmt.Errorf("partition %s: swap segment %d: %w", l.dir, base, err)
	}
	if err := os.Rename(tmpLog, old.seg.Path()); err != nil {
		return fmt.Errorf("partition %s: swap segment %d: %w", l.dir, base, err)
	}
	// From here on the old segment keeps serving reads from its open
	// descriptors whatever happens, so the log stays consistent in memory.
	if err := os.Rename(tmpIndex, old.seg.IndexPath()); err != nil {
		return fmt.Errorf("partition %s: swap segment %d: data replaced, index not (recovery rebuilds it): %w", l.dir, base, err)
	}
	if err := fsutil.SyncDir(l.dir); err != nil {
		return fmt.Errorf("partition %s: swap segment %d: %w", l.dir, base, err)
	}
	seg, err := segment.Open(l.dir, base, segment.Options{IndexIntervalBytes: l.opts.IndexIntervalBytes, Pool: l.opts.FilePool})
	if err != nil {
		return fmt.Errorf("partition %s: swap segment %d: reopen: %w", l.dir, base, err)
	}
	if ierr := seg.IndexErr(); ierr != nil {
		seg.Close()
		return fmt.Errorf("partition %s: swap segment %d: rewritten index: %w", l.dir, base, ierr)
	}
	st := l.newSegState(seg)
	st.durable.Store(seg.Size())
	l.segs[i] = st
	l.cache.invalidate(old.id)
	l.retire(old.seg)
	return nil
}

// sealedIndexLocked returns the position in l.segs of the sealed segment
// with base offset base. The caller holds segMu.
func (l *Log) sealedIndexLocked(base int64) (int, error) {
	for i, st := range l.segs {
		if st.seg.Base() != base {
			continue
		}
		if i == len(l.segs)-1 {
			return 0, fmt.Errorf("partition %s: segment %d: %w", l.dir, base, ErrActiveSegment)
		}
		return i, nil
	}
	return 0, fmt.Errorf("partition %s: segment %d: %w", l.dir, base, ErrNoSegment)
}

// retire keeps seg open for readers that may still hold it.
func (l *Log) retire(seg *segment.Segment) {
	l.maint.retiredMu.Lock()
	defer l.maint.retiredMu.Unlock()
	l.maint.retired = append(l.maint.retired, retiredSegment{seg: seg, at: time.Now()})
}

// closeRetired closes the retired segments no reader can hold any more:
// all of them when no reader is pinned right now (or all is set, in Close),
// else those retired longer than retireGrace.
func (l *Log) closeRetired(all bool) {
	l.maint.retiredMu.Lock()
	defer l.maint.retiredMu.Unlock()
	if len(l.maint.retired) == 0 {
		return
	}
	if !all && l.maint.readMu.TryLock() {
		l.maint.readMu.Unlock()
		all = true // no reader in flight: none holds a retired segment
	}
	kept := l.maint.retired[:0]
	for _, r := range l.maint.retired {
		if all || time.Since(r.at) >= retireGrace {
			r.seg.Close() // unlinked or renamed over: nothing left to lose
			continue
		}
		kept = append(kept, r)
	}
	clear(l.maint.retired[len(kept):])
	l.maint.retired = kept
}
