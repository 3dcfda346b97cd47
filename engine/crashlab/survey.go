package crashlab

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// walkBatches decodes the batches of the .log file at path in order with
// segment.Reader at LevelDecode, one at a time (never the whole file). At a
// batch that does not decode it asks skip for the position of the next
// valid batch (a corrupt range recovery reported); without one the walk
// ends there.
func walkBatches(path string, skip func(pos int64) (int64, bool), fn func(pos int64, b codec.Batch)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var (
		buf  []byte
		recs []codec.Record
		next int64
	)
	for pos := int64(0); pos < fi.Size(); {
		rd := segment.NewReader(f, fi.Size(), segment.ReaderOptions{Level: segment.LevelDecode, Start: pos, Next: next, Buf: buf, Records: recs})
		for {
			fr, ok := rd.Next()
			if !ok {
				return nil
			}
			if !fr.OK() {
				break
			}
			fn(fr.Position, fr.Batch)
		}
		buf, recs, next, pos = rd.Buf(), rd.Records(), rd.NextOffset(), rd.Position()
		if skip == nil {
			return nil
		}
		np, ok := skip(pos)
		if !ok || np <= pos {
			return nil
		}
		pos = np
	}
	return nil
}

// recordSum is one record as the lab compares it: its offset and a hash of
// its timestamp, key, value and headers.
type recordSum struct {
	off  int64
	hash uint64
}

// survey lists every record readable from the partition in dir after
// recovery, in offset order, skipping the corrupt ranges of rep as reads do.
// Damage recovery did not see (the snapshot path trusts checksummed sealed
// data) is found the way the partition log's reads find it: the walk
// searches forward for the next batch whose header and CRC check out, and
// the skipped region is returned in onRead.
func survey(dir string, rep *recovery.Report) (recs []recordSum, onRead []recovery.CorruptRange, err error) {
	bases, err := segment.List(dir)
	if err != nil {
		return nil, nil, err
	}
	for i, base := range bases {
		name := segment.LogFile(base)
		path := filepath.Join(dir, name)
		endOff := int64(-1) // exclusive end of a range that reaches the file end
		if i+1 < len(bases) {
			endOff = bases[i+1]
		}
		next := base // offset after the last record read
		skip := func(pos int64) (int64, bool) {
			for _, c := range rep.Corrupt {
				if filepath.Base(c.Segment) == name && pos >= c.StartPos && pos < c.EndPos {
					return c.EndPos, true
				}
			}
			r := recovery.CorruptRange{Segment: name, StartPos: pos, FirstOffset: next, EndOffset: endOff, Err: "found on read"}
			np, nb, ok, err := resync(path, pos+1)
			if err != nil {
				r.Err = err.Error()
			}
			if ok {
				r.EndPos, r.EndOffset = np, nb
			} else {
				r.EndPos = fileSize(path)
			}
			onRead = append(onRead, r)
			return np, ok
		}
		err := walkBatches(path, skip, func(_ int64, b codec.Batch) {
			for _, r := range b.Records {
				recs = append(recs, recordSum{off: r.Offset, hash: hashRecord(&r)})
				next = r.Offset + 1
			}
		})
		if err != nil {
			return nil, nil, fmt.Errorf("survey %s: %w", name, err)
		}
	}
	return recs, onRead, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// resync finds the first position at or after from holding a whole batch
// whose header parses and whose CRC checks out, and its base offset, with
// recovery's own search.
func resync(path string, from int64) (pos, base int64, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false, err
	}
	defer f.Close()
	pos, base, ok = segment.NextValidBatch(f, fileSize(path), from, 0, math.MaxInt64)
	return pos, base, ok, nil
}

func hashRecord(r *codec.Record) uint64 {
	h := fnv.New64a()
	var n [9]byte
	put := func(b []byte, null bool) {
		l := uint64(len(b))
		if null {
			l = 1 << 63
		}
		for i := 0; i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:8])
		h.Write(b)
	}
	put([]byte(fmt.Sprint(r.Timestamp)), false)
	put(r.Key, r.Key == nil)
	put(r.Value, r.Value == nil)
	for _, hd := range r.Headers {
		put([]byte(hd.Key), false)
		put(hd.Value, hd.Value == nil)
	}
	return h.Sum64()
}

// OffsetRange is a half-open range of offsets [From, To).
type OffsetRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Len is the number of offsets in the range.
func (r OffsetRange) Len() int64 { return r.To - r.From }

func (r OffsetRange) String() string { return fmt.Sprintf("[%d, %d)", r.From, r.To) }

// diff compares the records of the healthy and the faulted copy.
type diff struct {
	lost    []int64 // offsets of healthy records missing after the fault
	changed []int64 // offsets present in both with different contents
	extra   []int64 // offsets only the faulted copy has
}

func compare(healthy, faulted []recordSum) diff {
	var d diff
	i, j := 0, 0
	for i < len(healthy) || j < len(faulted) {
		switch {
		case j == len(faulted) || (i < len(healthy) && healthy[i].off < faulted[j].off):
			d.lost = append(d.lost, healthy[i].off)
			i++
		case i == len(healthy) || faulted[j].off < healthy[i].off:
			d.extra = append(d.extra, faulted[j].off)
			j++
		default:
			if healthy[i].hash != faulted[j].hash {
				d.changed = append(d.changed, healthy[i].off)
			}
			i++
			j++
		}
	}
	return d
}

// ranges merges sorted offsets into ranges of consecutive offsets.
func ranges(offs []int64) []OffsetRange {
	var out []OffsetRange
	for _, o := range offs {
		if n := len(out); n > 0 && out[n-1].To == o {
			out[n-1].To++
			continue
		}
		out = append(out, OffsetRange{From: o, To: o + 1})
	}
	return out
}
