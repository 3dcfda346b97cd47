package plog

import (
	"container/list"
	"sync"
)

// readCache keeps recently decoded batches (seed 000's frameCache) and the
// positions where reads stopped (its navCache), so a consumer reading
// sequentially decodes every batch once and never searches the index.
// Entries are keyed by segment identity; a segment that is deleted or
// swapped gets its entries dropped under the log's segment lock, and a new
// segment has a new identity, so a stale entry can never be hit.
type readCache struct {
	// mu guards everything below.
	mu       sync.Mutex
	maxBytes int // bound on the bytes of cached batches (the newest is always kept)
	bytes    int
	batches  map[batchKey]*list.Element // of *cachedBatch, LRU order in lru
	lru      *list.List
	navs     map[batchKey]int64 // (segment, offset) → batch position
	navOrder []batchKey         // FIFO bound on navs
}

type batchKey struct {
	seg uint64
	at  int64 // position for batches, offset for navs
}

type cachedBatch struct {
	key batchKey
	b   *decodedBatch
}

const maxNavs = 1024

func newReadCache(maxBytes int) *readCache {
	return &readCache{maxBytes: maxBytes, batches: map[batchKey]*list.Element{}, lru: list.New(), navs: map[batchKey]int64{}}
}

func (c *readCache) batch(seg uint64, pos int64) *decodedBatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.batches[batchKey{seg, pos}]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedBatch).b
}

func (c *readCache) putBatch(seg uint64, pos int64, b *decodedBatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := batchKey{seg, pos}
	if _, ok := c.batches[k]; ok {
		return
	}
	c.batches[k] = c.lru.PushFront(&cachedBatch{key: k, b: b})
	c.bytes += b.size
	for c.bytes > c.maxBytes && c.lru.Len() > 1 {
		old := c.lru.Remove(c.lru.Back()).(*cachedBatch)
		delete(c.batches, old.key)
		c.bytes -= old.b.size
	}
}

// position returns the remembered position of the batch holding offset in
// segment seg, or -1.
func (c *readCache) position(seg uint64, offset int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pos, ok := c.navs[batchKey{seg, offset}]; ok {
		return pos
	}
	return -1
}

// remember records that a read of offset in seg should start at pos.
func (c *readCache) remember(seg uint64, offset, pos int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := batchKey{seg, offset}
	if _, ok := c.navs[k]; ok {
		return
	}
	c.navs[k] = pos
	c.navOrder = append(c.navOrder, k)
	if len(c.navOrder) > maxNavs {
		delete(c.navs, c.navOrder[0])
		c.navOrder = c.navOrder[1:]
	}
}

// invalidate drops every entry of segment seg.
func (c *readCache) invalidate(seg uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.batches {
		if k.seg == seg {
			c.lru.Remove(e)
			delete(c.batches, k)
			c.bytes -= e.Value.(*cachedBatch).b.size
		}
	}
	for k := range c.navs {
		if k.seg == seg {
			delete(c.navs, k)
		}
	}
	kept := c.navOrder[:0]
	for _, k := range c.navOrder {
		if k.seg != seg {
			kept = append(kept, k)
		}
	}
	c.navOrder = kept
}
