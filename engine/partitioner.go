package engine

import "sync/atomic"

// murmur2 is the 32-bit MurmurHash2 variant Kafka's default partitioner uses
// (seed 0x9747b28c), so a key lands on the partition a Kafka user expects.
func murmur2(data []byte) int32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := n &^ 3
	switch n % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// partitioner maps records to partitions: keyed records by murmur2 of the key
// (Kafka's toPositive(murmur2(key)) % n), keyless records round-robin.
type partitioner struct {
	next atomic.Uint32 // round-robin cursor for keyless records
}

func (p *partitioner) partition(key []byte, n int) int {
	if n <= 1 {
		return 0
	}
	if key == nil {
		return int((p.next.Add(1) - 1) % uint32(n))
	}
	return KeyPartition(key, n)
}

// KeyPartition is the partition of a keyed record among n: Kafka's default
// toPositive(murmur2(key)) % n. The cluster source and pulse mirror use it
// so that a key lands on the same partition number on both sides.
func KeyPartition(key []byte, n int) int {
	if n <= 1 {
		return 0
	}
	return int(uint32(murmur2(key))&0x7fffffff) % n
}
