package crashlab

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/compact"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// hwmAheadBy is how far past the recovered end hwm:ahead persists the HWM.
const hwmAheadBy = 100

// compactBatchRecords bounds the records of one rewritten sparse batch.
const compactBatchRecords = 100

// copyPartition copies the regular files of src into dst (created). Source
// files are opened read-only; subdirectories are not copied.
func copyPartition(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("partition %s: %w", src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// apply damages the partition copy in dir with the resolved fault f and
// says what it did. healthy is the report of the untouched copy (for
// hwm:ahead); seed drives the garbage bytes.
func apply(dir string, f Fault, healthy *recovery.Report, seed uint64) (string, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	garbage := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	logPath := filepath.Join(dir, segment.LogFile(f.Segment))
	idxPath := filepath.Join(dir, segment.IndexFile(f.Segment))
	switch f.Kind {
	case Cut:
		fi, err := os.Stat(logPath)
		if err != nil {
			return "", err
		}
		rolled, err := unacknowledge(dir, f)
		if err != nil {
			return "", err
		}
		if err := os.Truncate(logPath, f.Pos); err != nil {
			return "", err
		}
		return fmt.Sprintf("truncated %s from %d to %d bytes (%d bytes lost)%s", segment.LogFile(f.Segment), fi.Size(), f.Pos, fi.Size()-f.Pos, rolled), nil
	case Flip:
		fl, err := os.OpenFile(logPath, os.O_RDWR, 0)
		if err != nil {
			return "", err
		}
		defer fl.Close()
		b := make([]byte, 1)
		if _, err := fl.ReadAt(b, f.Pos); err != nil {
			return "", fmt.Errorf("flip: read byte %d: %w", f.Pos, err)
		}
		old := b[0]
		b[0] ^= 1 << f.Bit
		if _, err := fl.WriteAt(b, f.Pos); err != nil {
			return "", err
		}
		return fmt.Sprintf("flipped bit %d of byte %d of %s (0x%02x -> 0x%02x)%s", f.Bit, f.Pos, segment.LogFile(f.Segment), old, b[0], fieldAt(dir, f)), fl.Close()
	case IndexDelete:
		if err := os.Remove(idxPath); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("%w: %s: segment %d has no index file", ErrNotApplicable, f.Kind, f.Segment)
			}
			return "", err
		}
		return "deleted " + segment.IndexFile(f.Segment), nil
	case IndexCorrupt:
		fl, err := os.OpenFile(idxPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return "", err
		}
		g := garbage(13) // one whole bogus entry and a partial one
		if _, err := fl.Write(g); err != nil {
			fl.Close()
			return "", err
		}
		return fmt.Sprintf("appended %d random bytes to %s", len(g), segment.IndexFile(f.Segment)), fl.Close()
	case SnapshotDelete, HWMDelete:
		name := recovery.SnapshotFile
		if f.Kind == HWMDelete {
			name = recovery.HWMFile
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("%w: %s: the partition has no %s file (the log writes it on rotation and clean shutdown)", ErrNotApplicable, f.Kind, name)
			}
			return "", err
		}
		return "deleted " + name, nil
	case SnapshotCorrupt:
		if err := os.WriteFile(filepath.Join(dir, recovery.SnapshotFile), garbage(recovery.SnapshotLen), 0o644); err != nil {
			return "", err
		}
		return fmt.Sprintf("overwrote %s with %d random bytes", recovery.SnapshotFile, recovery.SnapshotLen), nil
	case HWMCorrupt:
		bad := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} // -1: not an offset
		if err := os.WriteFile(filepath.Join(dir, recovery.HWMFile), bad, 0o644); err != nil {
			return "", err
		}
		return "overwrote hwm with ff ff ff ff ff ff ff ff (-1)", nil
	case HWMAhead:
		v := healthy.RecoveredEnd + hwmAheadBy
		if err := recovery.WriteHWM(dir, v); err != nil {
			return "", err
		}
		return fmt.Sprintf("persisted hwm %d, %d past the log end %d", v, hwmAheadBy, healthy.RecoveredEnd), nil
	case OrphanTmp:
		base := f.Segment // orphan-tmp takes no segment: named for the first one
		if segs, err := Layout(dir); base < 0 && err == nil && len(segs) > 0 {
			base = segs[0].Base
		}
		name := compact.TempPrefix + segment.Name(max(base, 0)) + "-log-crashlab"
		if err := os.WriteFile(filepath.Join(dir, name), garbage(4096), 0o644); err != nil {
			return "", err
		}
		return "left " + name + " (4096 bytes) behind", nil
	case CompactionCrash:
		return compactionCrash(dir, f.Segment)
	}
	return "", fmt.Errorf("%w: kind %q", ErrBadFault, f.Kind)
}

// unacknowledge makes a cut of the active segment what a crash leaves: the
// batch the cut falls in (and everything after it) was being written, so it
// was never acknowledged. The persisted hwm and the snapshot are put back
// before that batch, since recovery rightly treats a cut below them as
// damage to acknowledged data, never as a torn write.
func unacknowledge(dir string, f Fault) (string, error) {
	bases, err := segment.List(dir)
	if err != nil || len(bases) == 0 || bases[len(bases)-1] != f.Segment {
		return "", err
	}
	sl, err := segmentLayout(filepath.Join(dir, segment.LogFile(f.Segment)), f.Segment)
	if err != nil {
		return "", nil
	}
	cutAt := int64(-1)
	for _, b := range sl.Batches {
		if f.Pos < b.Pos+b.Size {
			cutAt = b.BaseOffset
			break
		}
	}
	if cutAt < 0 {
		return "", nil
	}
	var notes string
	if h, err := recovery.ReadHWM(dir); err == nil && h > cutAt {
		if err := recovery.WriteHWM(dir, cutAt); err != nil {
			return "", err
		}
		notes += fmt.Sprintf("; persisted hwm %d put back to %d (the cut batch was never acknowledged)", h, cutAt)
	}
	if snap, err := recovery.ReadSnapshot(dir); err == nil && snap.LEO > cutAt {
		if err := os.Remove(filepath.Join(dir, recovery.SnapshotFile)); err != nil {
			return "", err
		}
		notes += "; snapshot removed (it checkpointed the cut batch)"
	}
	return notes, nil
}

// fieldAt names the header field a flip hit, when it hit a header.
func fieldAt(dir string, f Fault) string {
	sl, err := segmentLayout(filepath.Join(dir, segment.LogFile(f.Segment)), f.Segment)
	if err != nil {
		return ""
	}
	for _, b := range sl.Batches {
		if f.Pos >= b.Pos && f.Pos < b.Pos+b.Size {
			rel := int(f.Pos - b.Pos)
			for _, fl := range codec.HeaderFields() {
				if rel >= fl.Offset && rel < fl.Offset+fl.Len {
					return fmt.Sprintf(", header field %s of the batch at %d", fl.Name, b.Pos)
				}
			}
			return fmt.Sprintf(", records of the batch at %d", b.Pos)
		}
	}
	return ""
}

// compactionCrash rewrites the sealed segment base the way a compaction
// would (newest record per key across the partition, sparse batches), puts
// the new data in place of the old and leaves the old index and the new
// index's temp file: the state after a crash between the two renames.
func compactionCrash(dir string, base int64) (string, error) {
	bases, err := segment.List(dir)
	if err != nil {
		return "", err
	}
	// Newest offset of every key in the partition.
	newest := map[string]int64{}
	for _, b := range bases {
		err := eachRecord(dir, b, func(r codec.Record, _ codec.BatchHeader) {
			if r.Key != nil {
				newest[string(r.Key)] = r.Offset
			}
		})
		if err != nil {
			return "", err
		}
	}
	var keep []codec.Record
	var total int
	c := codec.CodecNone
	err = eachRecord(dir, base, func(r codec.Record, h codec.BatchHeader) {
		if total == 0 {
			c = h.Codec()
		}
		total++
		if r.Key != nil && newest[string(r.Key)] != r.Offset {
			return
		}
		keep = append(keep, codec.Record{
			Offset: r.Offset, Timestamp: r.Timestamp, Attributes: r.Attributes,
			Key: clone(r.Key), Value: clone(r.Value), Headers: cloneHeaders(r.Headers),
		})
	})
	if err != nil {
		return "", err
	}
	if len(keep) == 0 {
		return "", fmt.Errorf("%w: %s: every record of segment %d is superseded; a compaction would delete the segment, not rewrite it", ErrNotApplicable, CompactionCrash, base)
	}
	var data []byte
	var index []segment.IndexEntry
	for i := 0; i < len(keep); i += compactBatchRecords {
		batch := keep[i:min(i+compactBatchRecords, len(keep))]
		pos := int64(len(data))
		data, err = codec.AppendBatch(data, batch[0].Offset, batch, codec.EncodeOptions{Codec: c, Sparse: true})
		if err != nil {
			return "", fmt.Errorf("rewrite segment %d: %w", base, err)
		}
		index = append(index, segment.IndexEntry{RelOffset: uint32(batch[0].Offset - base), RelPosition: uint32(pos)})
	}
	name := segment.Name(base)
	tmpIdx := compact.TempPrefix + name + "-index-crashlab"
	if err := os.WriteFile(filepath.Join(dir, tmpIdx), segment.EncodeIndex(index), 0o644); err != nil {
		return "", err
	}
	tmpLog := filepath.Join(dir, compact.TempPrefix+name+"-log-crashlab")
	if err := os.WriteFile(tmpLog, data, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmpLog, filepath.Join(dir, segment.LogFile(base))); err != nil {
		return "", err
	}
	return fmt.Sprintf("rewrote %s as a compaction would (%d of %d records kept, %d sparse batches, %d bytes), left the old %s and %s",
		segment.LogFile(base), len(keep), total, (len(keep)+compactBatchRecords-1)/compactBatchRecords, len(data), segment.IndexFile(base), tmpIdx), nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func cloneHeaders(hs []codec.Header) []codec.Header {
	if hs == nil {
		return nil
	}
	out := make([]codec.Header, len(hs))
	for i, h := range hs {
		out[i] = codec.Header{Key: h.Key, Value: clone(h.Value)}
	}
	return out
}

// eachRecord decodes the valid batches of one segment from the start,
// stopping at the first that does not decode.
func eachRecord(dir string, base int64, fn func(codec.Record, codec.BatchHeader)) error {
	return walkBatches(filepath.Join(dir, segment.LogFile(base)), nil, func(_ int64, b codec.Batch) {
		for _, r := range b.Records {
			fn(r, b.Header)
		}
	})
}
