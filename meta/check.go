package meta

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// errRollback ends an Update without committing.
var errRollback = errors.New("rollback")

// Check verifies meta.db: bbolt's structural check (tx.Check: pages, free
// list, ordering) and then the key space: every value decodes, every topic
// has exactly its partitions 0..n-1, and every partition record, cursor and
// report belongs to an existing topic and partition. It returns the problems
// found (none: a healthy store); err is for failing to run the check at all.
func (s *Store) Check() (problems []error, err error) {
	run := func(tx *bolt.Tx) error {
		for p := range tx.Check() {
			problems = append(problems, fmt.Errorf("bbolt: %w", p))
		}
		problems = append(problems, checkKeySpace(tx)...)
		return nil
	}
	if s.opts.ReadOnly {
		// No writer can hold the file while our shared lock is held.
		err = s.view(run)
	} else {
		// tx.Check reads the free list, which writers change: run it in a
		// write transaction (so writers wait) and roll it back.
		err = s.update(func(tx *bolt.Tx) error {
			run(tx)
			return errRollback
		})
		if errors.Is(err, errRollback) {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("meta: check %s: %w", s.path, err)
	}
	return problems, nil
}

// checkKeySpace returns every logical inconsistency in the buckets.
func checkKeySpace(tx *bolt.Tx) []error {
	var problems []error
	report := func(err error) { problems = append(problems, err) }

	version, err := readSchemaVersion(tx)
	switch {
	case err != nil:
		report(err)
	case version == 0:
		report(fmt.Errorf("%w: no schema version", ErrNotInitialized))
	}
	for _, name := range buckets {
		if tx.Bucket([]byte(name)) == nil {
			report(fmt.Errorf("%w: bucket %s missing", ErrNotInitialized, name))
		}
	}
	if len(problems) > 0 {
		return problems
	}
	if _, err := readIdentity(tx); err != nil {
		report(err)
	}

	// Topics, with the partitions each must have.
	topics := map[string]Topic{}
	tx.Bucket([]byte(BucketTopics)).ForEach(func(k, v []byte) error {
		t, err := decodeTopic(k, v)
		if err != nil {
			report(err)
			return nil
		}
		topics[t.Name] = t
		return nil
	})
	seen := map[string][]bool{}
	for name, t := range topics {
		seen[name] = make([]bool, t.Partitions)
	}
	tx.Bucket([]byte(BucketPartitions)).ForEach(func(k, v []byte) error {
		p, err := decodePartition(k, v)
		if err != nil {
			report(err)
			return nil
		}
		got, ok := seen[p.Topic]
		switch {
		case !ok:
			report(corrupt(BucketPartitions, k, "topic %s does not exist", p.Topic))
		case p.Partition >= len(got):
			report(corrupt(BucketPartitions, k, "topic %s has %d partitions", p.Topic, len(got)))
		default:
			got[p.Partition] = true
		}
		return nil
	})
	for name, got := range seen {
		for p, ok := range got {
			if !ok {
				report(corrupt(BucketTopics, []byte(name), "partition %d has no record", p))
			}
		}
	}

	// Cursors and reports must point at a partition that exists.
	belongs := func(bucket string, k []byte, topic string, p int) {
		t, ok := topics[topic]
		switch {
		case !ok:
			report(corrupt(bucket, k, "topic %s does not exist", topic))
		case p >= t.Partitions:
			report(corrupt(bucket, k, "topic %s has %d partitions", topic, t.Partitions))
		}
	}
	tx.Bucket([]byte(BucketCursors)).ForEach(func(k, v []byte) error {
		c, err := decodeCursor(k, v)
		if err != nil {
			report(err)
			return nil
		}
		belongs(BucketCursors, k, c.Topic, c.Partition)
		return nil
	})
	tx.Bucket([]byte(BucketReports)).ForEach(func(k, v []byte) error {
		_, topic, p, err := parseReportKey(k)
		if err != nil {
			report(corrupt(BucketReports, k, "bad key: %v", err))
			return nil
		}
		belongs(BucketReports, k, topic, p)
		return nil
	})
	return problems
}

// Dump returns the whole key space, bucket by bucket, for `pulse meta dump`:
// JSON values as they are stored, int64 values (schema version, cursors) as
// numbers, a cursor stored with commit metadata as {"offset", "metadata"},
// identity pointers as strings, and anything else (a report that is not
// JSON, a corrupt value) as "hex:" and its bytes.
func (s *Store) Dump() (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	err := s.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			m := map[string]any{}
			out[string(name)] = m
			return b.ForEach(func(k, v []byte) error {
				m[string(k)] = dumpValue(string(name), k, v)
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func dumpValue(bucket string, k, v []byte) any {
	if v == nil {
		return "(nested bucket)"
	}
	if bucket == BucketCursors && len(v) > offsetLen {
		if off, md, err := decodeCursorValue(v); err == nil {
			return map[string]any{"offset": off, "metadata": md} // a Kafka commit's metadata
		}
	}
	switch {
	case bucket == BucketSchema && string(k) == keySchemaVersion && len(v) == offsetLen,
		bucket == BucketCursors && len(v) == offsetLen:
		return int64(binary.BigEndian.Uint64(v))
	case bucket == BucketIdentity && strings.HasSuffix(string(k), "/current"):
		return string(v)
	case json.Valid(v):
		return json.RawMessage(v)
	}
	return fmt.Sprintf("hex:%x", v)
}
