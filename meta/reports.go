package meta

import (
	"bytes"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Report is the last report of one kind (ReportRecovery, ReportCompaction,
// ReportRetention, ...) about one partition. Data is stored as given.
type Report struct {
	Kind      string `json:"kind"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Data      []byte `json:"data"`
}

// PutReport stores data as the last report of kind about topic/partition,
// replacing the previous one, in one synced commit. The topic must exist,
// not be being deleted, and have the partition, so that no report outlives
// its topic.
func (s *Store) PutReport(kind, topic string, partition int, data []byte) error {
	if err := ValidateReportKind(kind); err != nil {
		return err
	}
	if err := validatePartition(partition); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	err := s.update(func(tx *bolt.Tx) error {
		if _, err := activeTopic(tx, topic, partition); err != nil {
			return err
		}
		b, err := bucket(tx, BucketReports)
		if err != nil {
			return err
		}
		return b.Put(reportKey(kind, topic, partition), data)
	})
	if err != nil {
		return fmt.Errorf("meta: put %s report for %s/%d: %w", kind, topic, partition, err)
	}
	return nil
}

// GetReport returns the last report of kind about topic/partition; ok is
// false when there is none. The returned slice is a copy.
func (s *Store) GetReport(kind, topic string, partition int) (data []byte, ok bool, err error) {
	if err := ValidateReportKind(kind); err != nil {
		return nil, false, err
	}
	if err := ValidateTopicName(topic); err != nil {
		return nil, false, err
	}
	if err := validatePartition(partition); err != nil {
		return nil, false, err
	}
	err = s.view(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketReports)
		if err != nil {
			return err
		}
		if v := b.Get(reportKey(kind, topic, partition)); v != nil {
			data, ok = bytes.Clone(v), true
		}
		return nil
	})
	return data, ok, err
}

// ListReports returns every report of kind, sorted by topic and partition.
func (s *Store) ListReports(kind string) ([]Report, error) {
	if err := ValidateReportKind(kind); err != nil {
		return nil, err
	}
	var out []Report
	err := s.view(func(tx *bolt.Tx) error {
		b, err := bucket(tx, BucketReports)
		if err != nil {
			return err
		}
		return forEachPrefix(b, []byte(kind+"/"), func(k, v []byte) error {
			_, topic, p, err := parseReportKey(k)
			if err != nil {
				return corrupt(BucketReports, k, "bad key: %v", err)
			}
			out = append(out, Report{Kind: kind, Topic: topic, Partition: p, Data: bytes.Clone(v)})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}
