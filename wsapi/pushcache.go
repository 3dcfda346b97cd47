package wsapi

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pulselog/pulse/engine"
)

// pushCache keeps the JSON of the records of recent pushes, per topic
// partition and first offset, so that subscriptions pushing the same
// records (a topic's subscribers reading along its end) encode each record
// once, not once per subscriber.
//
// An entry is used only for records that are the very records it was
// encoded from: the same offset, timestamp and attributes, and key, value
// and headers at the same memory (the engine's reads share the decoded
// batches of its read cache, immutable; the entry keeps that memory alive,
// so no other record can come to lie there while it is used). A recreated
// topic, a backend whose reads copy, or records read again after the read
// cache let them go simply miss.
type pushCache struct {
	mu sync.Mutex
	// m holds the entries, order their keys oldest first, bytes the JSON
	// bytes they hold; all bounded by maxPushCacheEntries and
	// maxPushCacheBytes.
	m     map[pushKey]*encodedRun
	order []pushKey
	bytes int

	// encoded counts the records pushes encoded (those copied from an
	// entry are not counted).
	encoded atomic.Int64
}

const (
	maxPushCacheEntries = 256
	maxPushCacheBytes   = 32 << 20
)

type pushKey struct {
	topic     string
	partition int
	from      int64
}

// encodedRun is the JSON of consecutive records: json[ends[i-1]:ends[i]]
// is record i's object, preceded by a comma for i > 0 (ends[-1] = 0).
// Immutable once cached.
type encodedRun struct {
	recs []engine.Record
	ends []int
	json []byte
}

func newPushCache() *pushCache { return &pushCache{m: map[pushKey]*encodedRun{}} }

// lookup returns the cached run starting at recs[0] and how many of recs,
// from the first, it holds (0: none).
func (pc *pushCache) lookup(topic string, p int, recs []engine.Record) (*encodedRun, int) {
	if len(recs) == 0 {
		return nil, 0
	}
	pc.mu.Lock()
	e := pc.m[pushKey{topic, p, recs[0].Offset}]
	pc.mu.Unlock()
	if e == nil {
		return nil, 0
	}
	k := 0
	for k < len(e.recs) && k < len(recs) && sameRecordAt(&e.recs[k], &recs[k]) {
		k++
	}
	return e, k
}

// store caches run unless an entry as long is already there.
func (pc *pushCache) store(topic string, p int, run *encodedRun) {
	if len(run.recs) == 0 || len(run.json) > maxPushCacheBytes/4 {
		return
	}
	key := pushKey{topic, p, run.recs[0].Offset}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if old := pc.m[key]; old != nil {
		if len(old.recs) >= len(run.recs) {
			return
		}
		pc.bytes -= len(old.json)
	} else {
		pc.order = append(pc.order, key)
	}
	pc.m[key] = run
	pc.bytes += len(run.json)
	for len(pc.order) > 0 && (len(pc.m) > maxPushCacheEntries || pc.bytes > maxPushCacheBytes) {
		old := pc.order[0]
		pc.order = pc.order[1:]
		if e := pc.m[old]; e != nil {
			pc.bytes -= len(e.json)
			delete(pc.m, old)
		}
	}
	if cap(pc.order) > 4*maxPushCacheEntries {
		pc.order = append([]pushKey(nil), pc.order...)
	}
}

// sameRecordAt reports whether a and b are the same record: equal fields,
// and key, value and headers at the same memory.
func sameRecordAt(a, b *engine.Record) bool {
	return a.Offset == b.Offset && a.Timestamp == b.Timestamp && a.Attributes == b.Attributes &&
		sameMemory(a.Key, b.Key) && sameMemory(a.Value, b.Value) &&
		len(a.Headers) == len(b.Headers) && (len(a.Headers) == 0 || &a.Headers[0] == &b.Headers[0])
}

func sameMemory(a, b []byte) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	return len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b)
}
