package wsapi

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pulselog/pulse/engine"
)

// pushCache keeps the encoded records of recent pushes (JSON, or the
// binary push layout), per topic partition, first offset and format, so that subscriptions pushing the same
// records (a topic's subscribers reading along its end) encode each record
// once, not once per subscriber. It is used only for partitions that more
// than one subscription of the server delivers: a lone subscriber pays
// nothing for it, and a partition's entries go when its last subscriber
// does.
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
	// m holds the entries, order their keys oldest first, bytes the
	// encoded bytes they hold; all bounded by maxPushCacheEntries and
	// maxPushCacheBytes.
	m     map[pushKey]*encodedRun
	order []pushKey
	bytes int
	// subs counts the delivering goroutines of each topic partition.
	subs map[topicPart]int

	// encoded counts the records pushes encoded (those copied from an
	// entry are not counted).
	encoded atomic.Int64
}

const (
	maxPushCacheEntries = 64
	maxPushCacheBytes   = 8 << 20
)

type topicPart struct {
	topic     string
	partition int
}

type pushKey struct {
	topicPart
	from   int64
	binary bool // data is the binary push layout, not JSON
}

// encodedRun is the encoding of consecutive records: data[ends[i-1]:ends[i]]
// is record i (ends[-1] = 0), in JSON its object preceded by a comma for
// i > 0 and lens[i] its value_lens entry, in a binary push its bytes
// (wire.AppendPushRecord, deltas from recs[0]; lens nil). Immutable once
// cached.
type encodedRun struct {
	recs []engine.Record
	ends []int
	lens []int32
	data []byte
}

func newPushCache() *pushCache {
	return &pushCache{m: map[pushKey]*encodedRun{}, subs: map[topicPart]int{}}
}

// join and leave bracket a subscription's delivery of one partition.
func (pc *pushCache) join(topic string, p int) {
	pc.mu.Lock()
	pc.subs[topicPart{topic, p}]++
	pc.mu.Unlock()
}

func (pc *pushCache) leave(topic string, p int) {
	tp := topicPart{topic, p}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.subs[tp]--; pc.subs[tp] > 0 {
		return
	}
	delete(pc.subs, tp)
	kept := pc.order[:0]
	for _, k := range pc.order {
		if k.topicPart != tp {
			kept = append(kept, k)
			continue
		}
		if e := pc.m[k]; e != nil {
			pc.bytes -= len(e.data)
			delete(pc.m, k)
		}
	}
	clear(pc.order[len(kept):])
	pc.order = kept
}

// lookup reports whether partition p of topic is shared (delivered by more
// than one subscription), and then returns the cached run of the format
// (binary or JSON) starting at recs[0] and how many of recs, from the
// first, it holds (0: none).
func (pc *pushCache) lookup(topic string, p int, binary bool, recs []engine.Record) (shared bool, e *encodedRun, k int) {
	tp := topicPart{topic, p}
	pc.mu.Lock()
	shared = pc.subs[tp] > 1
	if shared && len(recs) > 0 {
		e = pc.m[pushKey{tp, recs[0].Offset, binary}]
	}
	pc.mu.Unlock()
	if e == nil {
		return shared, nil, 0
	}
	for k < len(e.recs) && k < len(recs) && sameRecordAt(&e.recs[k], &recs[k]) {
		k++
	}
	return shared, e, k
}

// store caches run of the format (replacing an entry at the same first
// offset) while the partition is shared.
func (pc *pushCache) store(topic string, p int, binary bool, run *encodedRun) {
	if len(run.recs) == 0 || len(run.data) > maxPushCacheBytes/4 {
		return
	}
	key := pushKey{topicPart{topic, p}, run.recs[0].Offset, binary}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.subs[key.topicPart] < 2 {
		return
	}
	if old := pc.m[key]; old != nil {
		pc.bytes -= len(old.data)
	} else {
		pc.order = append(pc.order, key)
	}
	pc.m[key] = run
	pc.bytes += len(run.data)
	for len(pc.order) > 0 && (len(pc.m) > maxPushCacheEntries || pc.bytes > maxPushCacheBytes) {
		old := pc.order[0]
		pc.order = pc.order[1:]
		if e := pc.m[old]; e != nil {
			pc.bytes -= len(e.data)
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
