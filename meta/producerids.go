package meta

import (
	"fmt"
	"math"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// keyNextProducerID, in the identity bucket, is the first idempotent
// producer id not yet reserved, as decimal text. Missing means 1: id 0 is
// "no producer" in a batch header (engine/codec/doc.go).
const keyNextProducerID = "producer-ids/next"

// ReserveProducerIDs reserves n idempotent producer ids in one synced
// commit and returns the first: the ids [first, first+n) are never returned
// again by this data dir, whatever happens to the process afterwards, so
// the Kafka listener never hands out an id twice across restarts. Ids run
// from 1 to 2³²−1 (the batch header's field); past that it fails.
func (s *Store) ReserveProducerIDs(n uint32) (first uint32, err error) {
	if n == 0 {
		return 0, fmt.Errorf("meta: reserve producer ids: %w: 0 ids", ErrInvalidOffset)
	}
	err = s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketIdentity)
		if err != nil {
			return err
		}
		next := uint64(1)
		if v := b.Get([]byte(keyNextProducerID)); v != nil {
			next, err = strconv.ParseUint(string(v), 10, 64)
			if err != nil || next == 0 || next > math.MaxUint32+1 {
				return corrupt(BucketIdentity, []byte(keyNextProducerID), "next producer id %q", v)
			}
		}
		if next+uint64(n) > math.MaxUint32+1 {
			return fmt.Errorf("producer ids exhausted: %d of %d reserved", next-1, uint64(math.MaxUint32))
		}
		first = uint32(next)
		return b.Put([]byte(keyNextProducerID), strconv.AppendUint(nil, next+uint64(n), 10))
	})
	if err != nil {
		return 0, fmt.Errorf("meta: reserve %d producer ids: %w", n, err)
	}
	return first, nil
}
