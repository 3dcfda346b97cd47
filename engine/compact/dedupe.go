package compact

import (
	"crypto/sha256"
	"io"

	"github.com/pulselog/pulse/engine/codec"
)

// keyHash identifies a key in the dedupe map: the first 128 bits of its
// SHA-256. Storing a fixed-size digest instead of the key bounds the map's
// memory by the key cap whatever the key sizes (a colliding pair of keys
// would need 2^64 distinct keys to be likely, and cannot be crafted).
type keyHash [16]byte

func hashKey(k []byte) keyHash {
	sum := sha256.Sum256(k)
	return keyHash(sum[:16])
}

// keyEntry is what the dedupe map knows about one key.
type keyEntry struct {
	offset int64 // newest occurrence
	ts     int64 // its commit timestamp, Unix ms
	// older counts the occurrences before the newest that are still stored
	// in sealed segments. An expired tombstone may only be dropped once it is
	// 0, so that no value it superseded can come back.
	older int64
	size  uint32 // encoded size of the newest occurrence
	seg   int32  // index of the segment holding it (len(sealed) = active)
	tomb  bool
}

// segStats are the pass-1 figures of one sealed segment.
type segStats struct {
	records      int64 // every record
	rawBytes     int64 // encoded record bytes
	dropRecords  int64 // records superseded by a newer occurrence
	dropBytes    int64
	expiredTombs int64 // newest occurrences that are expired tombstones
}

// dedupe is pass 1: the newest occurrence of every key of the log.
type dedupe struct {
	max    int
	keys   map[keyHash]keyEntry
	stats  []segStats // per sealed segment
	sealed int        // number of sealed segments
}

func newDedupe(maxKeys, sealed int) *dedupe {
	return &dedupe{max: maxKeys, keys: map[keyHash]keyEntry{}, stats: make([]segStats, sealed), sealed: sealed}
}

// addStream folds the records of segment seg (streamed in offset order)
// into the map and returns the bytes read. It returns errKeyCap when a new
// key does not fit.
func (d *dedupe) addStream(s *stream, seg int32) (int64, error) {
	var read int64
	for {
		b, _, err := s.next()
		if err == io.EOF {
			return read, nil
		}
		if err != nil {
			return read, err
		}
		read += b.Header.Size()
		for i := range b.Records {
			if err := d.add(&b.Records[i], seg); err != nil {
				return read, err
			}
		}
	}
}

func (d *dedupe) add(r *codec.Record, seg int32) error {
	size := codec.EncodedSize(r)
	if int(seg) < d.sealed {
		st := &d.stats[seg]
		st.records++
		st.rawBytes += int64(size)
	}
	if r.Key == nil {
		return nil // keyless records are never deduplicated
	}
	h := hashKey(r.Key)
	e, ok := d.keys[h]
	switch {
	case !ok && len(d.keys) >= d.max:
		return errKeyCap
	case ok && r.Offset <= e.offset:
		return nil // offsets ascend in a well-formed log; keep the first seen
	case ok && int(e.seg) < d.sealed:
		st := &d.stats[e.seg]
		st.dropRecords++
		st.dropBytes += int64(e.size)
		e.older++
	}
	e.offset, e.ts, e.size, e.seg, e.tomb = r.Offset, r.Timestamp, uint32(min(size, 1<<32-1)), seg, r.Value == nil
	d.keys[h] = e
	return nil
}

// markExpired counts, per sealed segment, the newest occurrences that are
// tombstones committed at or before cutoff (Unix ms). It reports whether any
// of them still has older occurrences stored (whose segments must be
// rewritten before the tombstone can go), and the commit time of the oldest
// newest-occurrence tombstone in a sealed segment that has not expired yet
// (0: none).
func (d *dedupe) markExpired(cutoff int64) (blocked bool, nextTS int64) {
	for _, e := range d.keys {
		if !e.tomb || int(e.seg) >= d.sealed {
			continue
		}
		if e.ts > cutoff {
			if nextTS == 0 || e.ts < nextTS {
				nextTS = e.ts
			}
			continue
		}
		d.stats[e.seg].expiredTombs++
		if e.older > 0 {
			blocked = true
		}
	}
	return blocked, nextTS
}
