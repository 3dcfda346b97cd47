package segment

import (
	"container/list"
	"fmt"
	"os"
	"sync"
)

// Pool bounds the file descriptors segments keep open, whatever the number
// of partitions: past Limit open segments, the least recently used ones
// that nobody is using close their files ("park"), and reopen them on the
// next use. A segment is only parked when it is idle and its owner says it
// may be (Segment.SetParkable: the partition log allows it once every byte
// appended is fsynced and verified, so no write or fsync ever spans a
// close), and never while held (Segment.Hold: a segment swapped out or
// deleted must keep reading the bytes of its open descriptor).
//
// One Pool is shared by every segment of an engine; a nil *Pool bounds
// nothing (files stay open for the segment's life).
type Pool struct {
	limit int
	// mu guards lru; it is taken after a segment's fmu, and only ever
	// TryLocks another segment's fmu, so it cannot deadlock.
	mu  sync.Mutex
	lru list.List // of *Segment with open files, most recently used first

	parked, reopened int64 // counters, guarded by mu
}

// NewPool returns a pool keeping at most limit segments' files open
// (limit < 1: 1).
func NewPool(limit int) *Pool {
	return &Pool{limit: max(limit, 1)}
}

// PoolStats are a pool's counters.
type PoolStats struct {
	Open, Limit      int
	Parked, Reopened int64
}

// Stats returns the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Open: p.lru.Len(), Limit: p.limit, Parked: p.parked, Reopened: p.reopened}
}

// add enters s (whose fmu the caller holds, files just opened) and parks
// idle segments past the limit, oldest first with a second chance (CLOCK):
// a segment used since the last pass (Segment.recent, set by every
// acquire without touching the pool's lock) goes back to the front once.
func (p *Pool) add(s *Segment, reopened bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if reopened {
		p.reopened++
	}
	if s.elem == nil {
		s.elem = p.lru.PushFront(s)
	}
	for steps := 2 * p.lru.Len(); steps > 0 && p.lru.Len() > p.limit; steps-- {
		e := p.lru.Back()
		v := e.Value.(*Segment)
		if v == s || !v.fmu.TryLock() {
			p.lru.MoveToFront(e)
			continue
		}
		switch {
		case v.recent:
			v.recent = false
			p.lru.MoveToFront(e)
		case v.parkLocked():
			p.lru.Remove(e)
			v.elem = nil
			p.parked++
		default:
			p.lru.MoveToFront(e) // busy or not parkable now
		}
		v.fmu.Unlock()
	}
}

// forget drops s (closing) from the pool.
func (p *Pool) forget(s *Segment) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.elem != nil {
		p.lru.Remove(s.elem)
		s.elem = nil
	}
}

// SetParkable tells the pool when s may close its files while idle: f is
// called (quickly, without blocking) before parking. Without it an idle
// segment may always be parked.
func (s *Segment) SetParkable(f func() bool) {
	s.fmu.Lock()
	s.parkable = f
	s.fmu.Unlock()
}

// Hold opens s's files if parked and keeps them open until Close: for a
// segment about to be swapped out or deleted, whose readers in flight must
// keep reading the bytes of the descriptor they picked.
func (s *Segment) Hold() error {
	if _, err := s.acquire(); err != nil {
		return err
	}
	s.fmu.Lock()
	s.held = true
	s.fmu.Unlock()
	s.release()
	return nil
}

// parkLocked closes the files of an idle, parkable segment. The caller
// holds fmu.
func (s *Segment) parkLocked() bool {
	if s.users > 0 || s.held || s.log == nil || (s.parkable != nil && !s.parkable()) {
		return false
	}
	s.log.Close()
	s.log = nil
	if s.idx != nil {
		s.idx.Close()
		s.idx = nil
	}
	return true
}

// acquire returns the open .log file, reopening it when parked, and counts
// a user until release.
func (s *Segment) acquire() (*os.File, error) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	reopened := false
	if s.log == nil {
		if s.closedFiles {
			return nil, fmt.Errorf("segment %s: %w", s.Path(), ErrClosed)
		}
		flag := os.O_RDWR
		if s.readOnly {
			flag = os.O_RDONLY
		}
		f, err := os.OpenFile(s.Path(), flag, 0)
		if err != nil {
			return nil, fmt.Errorf("segment %s: reopen: %w", s.Path(), err)
		}
		s.log, reopened = f, true
	}
	s.users++
	s.recent = true
	if reopened && s.opts.Pool != nil {
		s.opts.Pool.add(s, true)
	}
	return s.log, nil
}

func (s *Segment) release() {
	s.fmu.Lock()
	s.users--
	s.fmu.Unlock()
}

// indexFile returns the open .index file, reopening it when parked. The
// caller holds wmu and has acquired the segment (so it is not parked
// meanwhile).
func (s *Segment) indexFile() (*os.File, error) {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.idx == nil {
		f, err := os.OpenFile(s.IndexPath(), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("segment %s: reopen index: %w", s.Path(), err)
		}
		s.idx = f
	}
	return s.idx, nil
}
