package compact

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/fsutil"
)

// TempPrefix starts the names of compaction's temp files in a partition
// directory. It extends fsutil.TempPrefix, so recovery deletes them, and
// never ends in .log, so segment.List ignores them.
const TempPrefix = fsutil.TempPrefix + "compact-"

// segWriter writes a rewritten segment to a temp data file and builds its
// sparse index the way segment.Append does: the first batch, then a batch
// every IndexIntervalBytes.
type segWriter struct {
	base       int64
	interval   int64
	codec      codec.Codec
	f          *os.File
	w          *bufio.Writer
	pos        int64
	sinceIndex int64
	index      []segment.IndexEntry
	buf        []byte
}

func newSegWriter(dir string, base int64, c codec.Codec, interval int) (*segWriter, error) {
	f, err := os.CreateTemp(dir, TempPrefix+segment.Name(base)+"-log-*")
	if err != nil {
		return nil, fmt.Errorf("segment %d: rewrite: %w", base, err)
	}
	return &segWriter{base: base, interval: int64(interval), codec: c, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// writeBatch encodes recs (strictly increasing offsets) as one sparse batch.
func (w *segWriter) writeBatch(recs []codec.Record) error {
	first := recs[0].Offset
	var err error
	w.buf, err = codec.AppendBatch(w.buf[:0], first, recs, codec.EncodeOptions{Codec: w.codec, Sparse: true})
	if err != nil {
		return fmt.Errorf("segment %d: encode batch at offset %d: %w", w.base, first, err)
	}
	rel, end := first-w.base, w.pos+int64(len(w.buf))
	if rel > math.MaxUint32 || end > math.MaxUint32 {
		return fmt.Errorf("segment %d: batch at offset %d does not fit a 32-bit index", w.base, first)
	}
	if len(w.index) == 0 || w.sinceIndex >= w.interval {
		w.index = append(w.index, segment.IndexEntry{RelOffset: uint32(rel), RelPosition: uint32(w.pos)})
		w.sinceIndex = 0
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("segment %d: rewrite: %w", w.base, err)
	}
	w.pos = end
	w.sinceIndex += int64(len(w.buf))
	return nil
}

// finish flushes and fsyncs the data file and writes and fsyncs the index
// temp file. It returns the two paths.
func (w *segWriter) finish(dir string) (logPath, indexPath string, err error) {
	if err := w.w.Flush(); err != nil {
		return "", "", fmt.Errorf("segment %d: rewrite: %w", w.base, err)
	}
	if err := w.f.Sync(); err != nil {
		return "", "", fmt.Errorf("segment %d: rewrite: fsync: %w", w.base, err)
	}
	if err := w.f.Close(); err != nil {
		return "", "", fmt.Errorf("segment %d: rewrite: %w", w.base, err)
	}
	idx, err := os.CreateTemp(dir, TempPrefix+segment.Name(w.base)+"-index-*")
	if err != nil {
		return "", "", fmt.Errorf("segment %d: rewrite index: %w", w.base, err)
	}
	_, err = idx.Write(segment.EncodeIndex(w.index))
	if err == nil {
		err = idx.Sync()
	}
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = errors.Join(os.Chmod(w.f.Name(), fsutil.FileMode), os.Chmod(idx.Name(), fsutil.FileMode))
	}
	if err != nil {
		os.Remove(idx.Name())
		return "", "", fmt.Errorf("segment %d: rewrite index: %w", w.base, err)
	}
	return w.f.Name(), idx.Name(), nil
}

// abort removes the data temp file.
func (w *segWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// batcher groups surviving records into output batches bounded by records,
// bytes, the int32 timestamp delta and the sparse offset delta of the batch
// format. Survivors are copied into an arena, since the decoded input
// records alias buffers the stream reuses.
type batcher struct {
	w          *segWriter
	maxRecords int
	maxBytes   int
	recs       []codec.Record
	bytes      int
	arena      []byte
}

func (b *batcher) add(r *codec.Record) error {
	n := codec.EncodedSize(r)
	if len(b.recs) > 0 {
		first := &b.recs[0]
		if len(b.recs) >= b.maxRecords || b.bytes+n > b.maxBytes ||
			r.Timestamp-first.Timestamp > math.MaxInt32 || first.Timestamp-r.Timestamp > math.MaxInt32 || r.Offset-first.Offset >= codec.MaxSparseDelta {
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
	need := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		need += len(h.Value)
	}
	if cap(b.arena)-len(b.arena) < need {
		// Records already batched keep the old array alive until the flush.
		b.arena = make([]byte, 0, max(b.maxBytes, need))
	}
	c := codec.Record{Offset: r.Offset, Timestamp: r.Timestamp, Attributes: r.Attributes}
	c.Key, b.arena = b.copyBytes(r.Key)
	c.Value, b.arena = b.copyBytes(r.Value)
	if len(r.Headers) > 0 {
		c.Headers = make([]codec.Header, len(r.Headers))
		for i, h := range r.Headers {
			c.Headers[i].Key = h.Key // strings never alias the input
			c.Headers[i].Value, b.arena = b.copyBytes(h.Value)
		}
	}
	b.recs = append(b.recs, c)
	b.bytes += n
	return nil
}

// copyBytes copies p into the arena, keeping nil as nil (null key,
// tombstone) and empty as empty.
func (b *batcher) copyBytes(p []byte) ([]byte, []byte) {
	if p == nil {
		return nil, b.arena
	}
	start := len(b.arena)
	a := append(b.arena, p...)
	return a[start:len(a):len(a)], a
}

func (b *batcher) flush() error {
	if len(b.recs) == 0 {
		return nil
	}
	err := b.w.writeBatch(b.recs)
	clear(b.recs)
	b.recs, b.bytes, b.arena = b.recs[:0], 0, b.arena[:0]
	return err
}

// segmentOutcome is what rewriting one sealed segment came to.
type segmentOutcome struct {
	survivors  int64
	dropped    int64
	tombstones int64 // tombstones among dropped
	bypass     bool  // dropped an expired tombstone or a value one superseded
	newSize    int64
	logTmp     string
	indexTmp   string
	// touched are the keys whose older count was decremented, to undo
	// when the rewrite is discarded.
	touched []keyHash
}

// rewrite streams the sealed segment at path (size bytes, base offset base)
// and writes its survivors to temp files. With no survivors no file is left
// behind. On an error the map changes are undone and no file is left.
func (c *compactor) rewrite(path string, size, base int64) (out segmentOutcome, err error) {
	s, err := openStream(path, size, c.buf, c.recs)
	if err != nil {
		return out, err
	}
	defer func() {
		c.buf, c.recs = s.buffers()
		s.close()
	}()
	w, err := newSegWriter(c.dir, base, c.codec, c.index)
	if err != nil {
		return out, err
	}
	defer func() {
		if err != nil {
			w.abort()
			c.undo(out.touched)
			out.touched = nil
		}
	}()
	bt := &batcher{w: w, maxRecords: c.opts.BatchRecords, maxBytes: c.opts.BatchBytes, arena: c.arena}
	defer func() { c.arena = bt.arena[:0] }()
	for {
		if err := c.stopped(); err != nil {
			return out, err
		}
		b, _, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		for k := range b.Records {
			r := &b.Records[k]
			if c.keep(r, &out) {
				out.survivors++
				if err := bt.add(r); err != nil {
					return out, err
				}
			}
		}
	}
	if err := bt.flush(); err != nil {
		return out, err
	}
	if out.survivors == 0 {
		w.abort()
		return out, nil
	}
	out.newSize = w.pos
	out.logTmp, out.indexTmp, err = w.finish(c.dir)
	return out, err
}

// keep decides whether r survives, updating the map and out.
func (c *compactor) keep(r *codec.Record, out *segmentOutcome) bool {
	if r.Key == nil {
		return true
	}
	h := hashKey(r.Key)
	e, ok := c.d.keys[h]
	if !ok {
		return true // not in the map: cannot happen after pass 1; keep
	}
	expired := e.tomb && e.ts <= c.cutoff
	if r.Offset < e.offset {
		e.older--
		c.d.keys[h] = e
		out.touched = append(out.touched, h)
		out.dropped++
		if r.Value == nil {
			out.tombstones++
		}
		if expired {
			out.bypass = true
		}
		return false
	}
	if r.Offset == e.offset && expired && e.older == 0 {
		out.dropped++
		out.tombstones++
		out.bypass = true
		return false
	}
	return true
}

// undo restores the older counts a discarded rewrite decremented.
func (c *compactor) undo(touched []keyHash) {
	for _, h := range touched {
		e := c.d.keys[h]
		e.older++
		c.d.keys[h] = e
	}
}

// discard removes the temp files of a rewrite that is not committed.
func (o *segmentOutcome) discard() {
	if o.logTmp != "" {
		os.Remove(o.logTmp)
	}
	if o.indexTmp != "" {
		os.Remove(o.indexTmp)
	}
}
