// Package segment manages one segment of a partition log: a .log file of
// batches (engine/codec) and its sparse .index, both named by the segment's
// base offset zero-padded to 20 digits (docs/architecture.md, "engine/segment").
//
// The index holds one 8-byte entry (relativeOffset u32, relativePosition
// u32, big-endian) for the first batch of the segment and then for a batch
// about every Options.IndexIntervalBytes of appended data. It is kept in
// memory; entries reach the .index file on Sync, after the .log data they
// point at has been fsynced, so an index file is never ahead of durable data
// (a crash can only leave it short, which recovery rebuilds).
//
// Reader (reader.go) is the one walker of a .log file's bytes, at the level
// a caller needs (headers, CRC and offsets, decoded records), with resync
// past damage: recovery, compaction, the crash lab, pulse verify and dump,
// the partition log and the UI's frame browser read through it and so give
// one verdict on the same bytes.
package segment

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/internal/fsutil"
)

// Options configures a writable segment.
type Options struct {
	// IndexIntervalBytes is how many bytes are appended between two index
	// entries (the first batch is always indexed). Default 4096; values
	// below 1 take the default.
	IndexIntervalBytes int
	// Pool, when set, bounds the descriptors open across segments: the
	// segment's files may be closed while idle and reopened on use.
	Pool *Pool
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{IndexIntervalBytes: DefaultIndexIntervalBytes}
}

func (o Options) withDefaults() Options {
	if o.IndexIntervalBytes < 1 {
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	return o
}

// Segment is one open .log + .index pair.
//
// Concurrency contract: one writer, many readers. Append, Sync, SyncData,
// Truncate, SetIndex, Close and Remove are the writer's; they are serialized
// internally, and Sync and SyncData never block Append for the length of an
// fsync.
// ReadAt (so a Reader over the segment), ReadBatch, Lookup, Index, Size and the name accessors may be
// called from any goroutine at any time, concurrently with Append and Sync:
// they see a batch once the Append that wrote it has returned. Truncate,
// SetIndex, Close and Remove change what positions mean or close the files,
// so the caller must not run reads of the affected range at the same time
// (the partition log holds its writer and scan locks around them).
type Segment struct {
	dir      string
	base     int64
	opts     Options
	readOnly bool

	// fmu guards the descriptors (closed while parked, see Pool) and the
	// pool bookkeeping below. Taken after wmu and mu; held only briefly.
	fmu         sync.Mutex
	log         *os.File // pread/pwrite only, safe for concurrent use; nil while parked
	users       int      // operations using the files now (acquire/release)
	held        bool     // never park (Hold)
	recent      bool     // used since the pool's last pass over it
	parkable    func() bool
	elem        *list.Element // in opts.Pool's LRU while files are open
	closedFiles bool          // Close or Remove ran: never reopen

	// syncMu serializes Sync with Truncate, SetIndex, Close and Remove (the
	// operations that replace or close the index file Sync writes). Taken
	// before wmu.
	syncMu      sync.Mutex
	idxUnsynced bool // the .index file was written since its last fsync; guarded by syncMu

	// wmu guards the writer's state: the fields below and the order of
	// writes to both files. Taken before mu.
	wmu        sync.Mutex
	idx        *os.File // nil when read-only or parked; replaced under fmu
	written    int      // index entries [0, written) are in the .index file
	idxLen     int64    // bytes in the .index file
	sinceIndex int64    // bytes appended since the last indexed batch started
	lastRel    int64    // relative base offset of the last batch known, -1: none

	// mu guards the state readers see.
	mu       sync.RWMutex
	size     int64        // valid bytes in the .log file; appends go here
	index    []IndexEntry // in memory, ascending; appended to, replaced on Truncate/SetIndex
	indexErr error        // what was wrong with the .index file at open
	closed   bool
}

// Create creates the files of a new, empty segment with base offset base in
// dir and fsyncs dir. A .log file of that name must not exist; a leftover
// .index without its .log is replaced.
func Create(dir string, base int64, opts Options) (*Segment, error) {
	if base < 0 {
		return nil, fmt.Errorf("create segment in %s: negative base offset %d", dir, base)
	}
	s := &Segment{dir: dir, base: base, opts: opts.withDefaults(), lastRel: -1}
	log, err := os.OpenFile(s.Path(), os.O_RDWR|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	idx, err := os.OpenFile(s.IndexPath(), os.O_RDWR|os.O_CREATE|os.O_TRUNC, fsutil.FileMode)
	if err != nil {
		log.Close()
		os.Remove(s.Path())
		return nil, fmt.Errorf("create segment: %w", err)
	}
	s.log, s.idx = log, idx
	if err := fsutil.SyncDir(dir); err != nil {
		s.closeFiles()
		return nil, fmt.Errorf("create segment %s: %w", s.Path(), err)
	}
	s.register()
	return s, nil
}

// Open opens the existing segment with base offset base in dir for reading
// and appending. It checks nothing about the .log bytes (that is recovery's
// job): Size is the file's size, torn tail included. The .index file is
// loaded as far as it is valid; what was wrong with it (missing, partial
// entry, out of order, pointing past the log end) is kept in IndexErr and the
// bad part is dropped and rewritten on the next Sync. A missing .index is
// created empty.
func Open(dir string, base int64, opts Options) (*Segment, error) {
	return open(dir, base, opts, false)
}

// OpenReadOnly opens an existing segment for reading only (pulse inspect,
// verify, dump): it never creates, writes, truncates or removes a file.
// Writer methods return ErrReadOnly.
func OpenReadOnly(dir string, base int64) (*Segment, error) {
	return open(dir, base, Options{}, true)
}

func open(dir string, base int64, opts Options, readOnly bool) (*Segment, error) {
	s := &Segment{dir: dir, base: base, opts: opts.withDefaults(), readOnly: readOnly}
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	log, err := os.OpenFile(s.Path(), flag, 0)
	if err != nil {
		return nil, fmt.Errorf("open segment: %w", err)
	}
	fi, err := log.Stat()
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("open segment: %w", err)
	}
	s.log, s.size = log, fi.Size()

	raw, err := os.ReadFile(s.IndexPath())
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.indexErr = fmt.Errorf("index %s: %w", s.IndexPath(), err)
	case err != nil:
		log.Close()
		return nil, fmt.Errorf("open segment: %w", err)
	default:
		s.index, s.indexErr = DecodeIndex(raw)
		for i, e := range s.index {
			if int64(e.RelPosition) >= s.size {
				s.index = s.index[:i]
				if s.indexErr == nil {
					s.indexErr = fmt.Errorf("%w: entry %d: position %d past the log end %d", ErrBadIndex, i, e.RelPosition, s.size)
				}
				break
			}
		}
		if s.indexErr != nil {
			s.indexErr = fmt.Errorf("index %s: %w", s.IndexPath(), s.indexErr)
		}
	}
	s.written, s.idxLen = len(s.index), int64(len(raw))
	s.sinceIndex, s.lastRel = s.sinceLastEntry(), s.lastIndexedRel()
	if readOnly {
		return s, nil
	}
	idx, err := os.OpenFile(s.IndexPath(), os.O_RDWR|os.O_CREATE, fsutil.FileMode)
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("open segment: %w", err)
	}
	s.idx = idx
	if raw == nil && errors.Is(s.indexErr, os.ErrNotExist) {
		if err := fsutil.SyncDir(dir); err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("open segment %s: %w", s.Path(), err)
		}
	}
	s.register()
	return s, nil
}

// sinceLastEntry is the byte count since the last indexed batch started.
func (s *Segment) sinceLastEntry() int64 {
	if len(s.index) == 0 {
		return s.size
	}
	return s.size - int64(s.index[len(s.index)-1].RelPosition)
}

// lastIndexedRel is the relative offset of the last index entry, or -1.
func (s *Segment) lastIndexedRel() int64 {
	if len(s.index) == 0 {
		return -1
	}
	return int64(s.index[len(s.index)-1].RelOffset)
}

// Base returns the segment's base offset.
func (s *Segment) Base() int64 { return s.base }

// Path returns the .log file's path.
func (s *Segment) Path() string { return filepath.Join(s.dir, LogFile(s.base)) }

// IndexPath returns the .index file's path.
func (s *Segment) IndexPath() string { return filepath.Join(s.dir, IndexFile(s.base)) }

// ReadOnly reports whether the segment was opened with OpenReadOnly.
func (s *Segment) ReadOnly() bool { return s.readOnly }

// Size returns the .log file's valid length: where the next batch goes.
// This is what rotation compares with segment-max-bytes.
func (s *Segment) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.size
}

// IndexErr returns what was wrong with the .index file when the segment was
// opened (wrapping os.ErrNotExist or ErrBadIndex), or nil. Create, Truncate
// and SetIndex clear it.
func (s *Segment) IndexErr() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.indexErr
}

// Index returns a copy of the in-memory index.
func (s *Segment) Index() []IndexEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]IndexEntry(nil), s.index...)
}

// Lookup returns the position of the greatest index entry whose offset is
// at most offset (0 when there is none): the place to start decoding forward
// to find the batch holding offset.
func (s *Segment) Lookup(offset int64) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return lookup(s.index, offset-s.base)
}

// LookupEntry is Lookup that also returns the offset the entry names (the
// segment's base when there is none), so a caller can check the batch at pos
// against it before trusting the entry.
func (s *Segment) LookupEntry(offset int64) (pos, entryOffset int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pos, rel := lookupEntry(s.index, offset-s.base)
	return pos, s.base + rel
}

// Append writes one whole encoded batch (h is its parsed header, checked
// against the bytes; the CRC is not checked) at the end
// of the .log file with a single positioned write, and indexes it when it is
// the segment's first batch or IndexIntervalBytes were appended since the
// last indexed one. It returns the batch's position. On a failed write the
// file is truncated back, so the segment is unchanged. The data is not
// durable until Sync.
func (s *Segment) Append(batch []byte, h codec.BatchHeader) (pos int64, err error) {
	if s.readOnly {
		return 0, fmt.Errorf("segment %s: append: %w", s.Path(), ErrReadOnly)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("segment %s: append: %w", s.Path(), ErrClosed)
	}
	if ph, err := codec.ParseHeader(batch); err != nil || ph != h {
		return 0, fmt.Errorf("segment %s: %w: the batch bytes do not start with the given header (%v)", s.Path(), ErrBadAppend, err)
	}
	if int64(len(batch)) != h.Size() {
		return 0, fmt.Errorf("segment %s: %w: %d bytes given, header says %d", s.Path(), ErrBadAppend, len(batch), h.Size())
	}
	rel := h.BaseOffset - s.base
	if rel < 0 {
		return 0, fmt.Errorf("segment %s: %w: base offset %d below the segment base %d", s.Path(), ErrBadAppend, h.BaseOffset, s.base)
	}
	pos = s.size // only the writer changes size, and it holds wmu
	end := pos + int64(len(batch))
	if rel > maxRel || end > maxRel {
		return 0, fmt.Errorf("segment %s: %w: batch at offset %d, bytes [%d, %d) exceed the 32-bit index", s.Path(), ErrFull, h.BaseOffset, pos, end)
	}
	if rel <= s.lastRel {
		return 0, fmt.Errorf("segment %s: %w: base offset %d not above the previous batch's %d", s.Path(), ErrBadAppend, h.BaseOffset, s.base+s.lastRel)
	}
	indexIt := len(s.index) == 0 || s.sinceIndex >= int64(s.opts.IndexIntervalBytes)
	f, err := s.acquire()
	if err != nil {
		return 0, err
	}
	defer s.release()
	if _, err := f.WriteAt(batch, pos); err != nil {
		werr := fmt.Errorf("segment %s: append at position %d: %w", s.Path(), pos, err)
		if terr := f.Truncate(pos); terr != nil {
			return 0, errors.Join(werr, fmt.Errorf("segment %s: undo partial append: %w", s.Path(), terr))
		}
		return 0, werr
	}
	s.mu.Lock()
	s.size = end
	if indexIt {
		s.index = append(s.index, IndexEntry{RelOffset: uint32(rel), RelPosition: uint32(pos)})
		s.sinceIndex = 0
	}
	s.mu.Unlock()
	s.sinceIndex += int64(len(batch))
	s.lastRel = rel
	return pos, nil
}

// Sync makes everything appended before the call durable: it fsyncs the
// .log file, then writes the index entries for that data to the .index file
// and fsyncs it. Appends may continue meanwhile.
func (s *Segment) Sync() error {
	if s.readOnly {
		return fmt.Errorf("segment %s: sync: %w", s.Path(), ErrReadOnly)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.RLock()
	size, closed := s.size, s.closed
	s.mu.RUnlock()
	if closed {
		return fmt.Errorf("segment %s: sync: %w", s.Path(), ErrClosed)
	}
	f, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.release()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("segment %s: fsync: %w", s.Path(), err)
	}
	s.wmu.Lock()
	err = s.writeIndexLocked(size)
	s.wmu.Unlock()
	if err != nil {
		return err
	}
	return s.syncIndex()
}

// syncIndex fsyncs the .index file if it was written since the last fsync
// (most Syncs add no index entry and skip this). The caller holds syncMu.
func (s *Segment) syncIndex() error {
	if !s.idxUnsynced {
		return nil
	}
	idx, err := s.indexFile()
	if err != nil {
		return err
	}
	if err := idx.Sync(); err != nil {
		return fmt.Errorf("segment %s: fsync: %w", s.IndexPath(), err)
	}
	s.idxUnsynced = false
	return nil
}

// writeIndexLocked writes the in-memory entries not yet in the .index file
// whose batches start before limit, and cuts off anything stale after them.
// The caller holds syncMu and wmu.
func (s *Segment) writeIndexLocked(limit int64) error {
	s.mu.RLock()
	entries := s.index
	s.mu.RUnlock()
	k := s.written
	for k < len(entries) && int64(entries[k].RelPosition) < limit {
		k++
	}
	if k == s.written && s.idxLen <= int64(s.written)*IndexEntryLen {
		return nil
	}
	idx, err := s.indexFile()
	if err != nil {
		return err
	}
	if k > s.written {
		if _, err := idx.WriteAt(EncodeIndex(entries[s.written:k]), int64(s.written)*IndexEntryLen); err != nil {
			return fmt.Errorf("segment %s: write index: %w", s.IndexPath(), err)
		}
		s.written = k
		s.idxLen = max(s.idxLen, int64(k)*IndexEntryLen)
		s.idxUnsynced = true
	}
	if want := int64(s.written) * IndexEntryLen; s.idxLen > want {
		if err := idx.Truncate(want); err != nil {
			return fmt.Errorf("segment %s: truncate index: %w", s.IndexPath(), err)
		}
		s.idxLen = want
		s.idxUnsynced = true
	}
	return nil
}

// ReadAt reads len(p) bytes of the .log file at pos (io.ReaderAt). It does
// not stop at Size: bytes past it may be an append in progress.
func (s *Segment) ReadAt(p []byte, pos int64) (int, error) {
	f, err := s.acquire()
	if err != nil {
		return 0, err
	}
	defer s.release()
	return f.ReadAt(p, pos)
}

// ReadBatch reads the batch at pos into buf (grown if needed) and returns
// its bytes and parsed header. It checks the header (codec.ParseHeader) and
// that the batch ends within Size, but not the CRC: pass the bytes to
// codec.VerifyBatch or codec.DecodeBatch. A batch that does not fit gives a
// *codec.CorruptError wrapping codec.ErrTorn; a bad header one wrapping
// codec.ErrCorrupt. Records decoded from the result alias buf.
func (s *Segment) ReadBatch(pos int64, buf []byte) ([]byte, codec.BatchHeader, error) {
	size := s.Size()
	if pos < 0 || pos+codec.HeaderLen > size {
		return nil, codec.BatchHeader{}, s.corrupt(pos, -1, fmt.Errorf("%w: batch header at position %d overruns the segment end %d", codec.ErrTorn, pos, size))
	}
	buf = grow(buf, codec.HeaderLen)
	if err := s.readFull(buf, pos); err != nil {
		return nil, codec.BatchHeader{}, err
	}
	h, err := codec.ParseHeader(buf)
	if err != nil {
		return nil, h, s.corrupt(pos, -1, err)
	}
	if end := pos + h.Size(); end > size {
		return nil, h, s.corrupt(pos, h.BaseOffset, fmt.Errorf("%w: batch of %d bytes at position %d overruns the segment end %d", codec.ErrTorn, h.Size(), pos, size))
	}
	buf = grow(buf, int(h.Size()))
	if err := s.readFull(buf[codec.HeaderLen:], pos+codec.HeaderLen); err != nil {
		return nil, h, err
	}
	return buf, h, nil
}

// readFull fills p from pos; a short file is a torn batch.
func (s *Segment) readFull(p []byte, pos int64) error {
	_, err := s.ReadAt(p, pos)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return s.corrupt(pos, -1, fmt.Errorf("%w: file ends before position %d", codec.ErrTorn, pos+int64(len(p))))
	}
	return fmt.Errorf("segment %s: read at position %d: %w", s.Path(), pos, err)
}

func (s *Segment) corrupt(pos, offset int64, err error) error {
	return &codec.CorruptError{Path: s.Path(), Position: pos, Offset: offset, Err: err}
}

// grow returns buf resized to n bytes, reallocating only when too small.
func grow(buf []byte, n int) []byte {
	if cap(buf) < n {
		nb := make([]byte, n)
		copy(nb, buf)
		return nb
	}
	return buf[:n]
}

// Truncate cuts the .log file to size (at most Size), drops the index
// entries of batches at or past it, and makes both durable. Recovery uses it
// to remove a torn tail.
func (s *Segment) Truncate(size int64) error {
	if s.readOnly {
		return fmt.Errorf("segment %s: truncate: %w", s.Path(), ErrReadOnly)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return fmt.Errorf("segment %s: truncate: %w", s.Path(), ErrClosed)
	}
	if size < 0 || size > s.size {
		return fmt.Errorf("segment %s: truncate to %d: outside [0, %d]", s.Path(), size, s.size)
	}
	f, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.release()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("segment %s: truncate to %d: %w", s.Path(), size, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("segment %s: fsync: %w", s.Path(), err)
	}
	s.mu.Lock()
	s.size = size
	keep := len(s.index)
	for keep > 0 && int64(s.index[keep-1].RelPosition) >= size {
		keep--
	}
	s.index = s.index[:keep:keep]
	s.indexErr = nil
	s.mu.Unlock()
	s.written = min(s.written, keep)
	s.sinceIndex, s.lastRel = s.sinceLastEntry(), s.lastIndexedRel()
	if err := s.writeIndexLocked(size); err != nil {
		return err
	}
	s.idxUnsynced = true // the file may be unchanged, but make sure
	return s.syncIndex()
}

// SetIndex replaces the index, in memory and on disk, with entries (after
// checking them against the log with ValidateIndex). The .index file is
// rewritten atomically with fsutil.WriteFileAtomic. Recovery uses it to
// rebuild a missing or bad index.
func (s *Segment) SetIndex(entries []IndexEntry) error {
	if s.readOnly {
		return fmt.Errorf("segment %s: set index: %w", s.Path(), ErrReadOnly)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return fmt.Errorf("segment %s: set index: %w", s.Path(), ErrClosed)
	}
	if err := ValidateIndex(entries, s.size); err != nil {
		return fmt.Errorf("segment %s: set index: %w", s.Path(), err)
	}
	data := EncodeIndex(entries)
	if err := fsutil.WriteFileAtomic(s.dir, IndexFile(s.base), data); err != nil {
		return fmt.Errorf("segment %s: set index: %w", s.Path(), err)
	}
	// The old descriptor points at the replaced file.
	idx, err := os.OpenFile(s.IndexPath(), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("segment %s: set index: %w", s.Path(), err)
	}
	s.fmu.Lock()
	if s.idx != nil {
		s.idx.Close()
	}
	s.idx = idx
	s.fmu.Unlock()
	s.mu.Lock()
	s.index = append([]IndexEntry(nil), entries...)
	s.indexErr = nil
	s.mu.Unlock()
	s.written, s.idxLen, s.idxUnsynced = len(entries), int64(len(data)), false
	s.sinceIndex, s.lastRel = s.sinceLastEntry(), s.lastIndexedRel()
	return nil
}

// Close writes index entries not yet in the .index file (without fsync: call
// Sync first for durability) and closes both files. Reads after Close fail.
func (s *Segment) Close() error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	var err error
	if !s.readOnly {
		err = s.writeIndexLocked(s.size)
	}
	s.markClosed()
	return errors.Join(err, s.closeFiles())
}

// Remove closes the segment and deletes its .log then its .index file, and
// fsyncs the directory. A crash in between leaves an .index without a .log,
// which List ignores and Create replaces.
func (s *Segment) Remove() error {
	if s.readOnly {
		return fmt.Errorf("segment %s: remove: %w", s.Path(), ErrReadOnly)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if !s.closed {
		s.markClosed()
		s.closeFiles()
	}
	if err := os.Remove(s.Path()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove segment: %w", err)
	}
	if err := os.Remove(s.IndexPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove segment: %w", err)
	}
	if err := fsutil.SyncDir(s.dir); err != nil {
		return fmt.Errorf("remove segment %s: %w", s.Path(), err)
	}
	return nil
}

func (s *Segment) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *Segment) closeFiles() error {
	if s.opts.Pool != nil {
		s.opts.Pool.forget(s)
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.closedFiles = true
	var err error
	if s.log != nil {
		err = s.log.Close()
		s.log = nil
	}
	if s.idx != nil {
		err = errors.Join(err, s.idx.Close())
		s.idx = nil
	}
	return err
}

// register enters a newly opened segment in its pool.
func (s *Segment) register() {
	if s.opts.Pool == nil {
		return
	}
	s.fmu.Lock()
	s.opts.Pool.add(s, false)
	s.fmu.Unlock()
}
