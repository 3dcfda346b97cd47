package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// TestTopicsShowNAForWhatAClusterLacks: a topic of a Kafka cluster has no
// Pulse codec, sync mode or (when DescribeLogDirs is refused) size: list
// and describe say n/a, never an empty column or a zero.
func TestTopicsShowNAForWhatAClusterLacks(t *testing.T) {
	ti := wire.TopicInfo{
		Name:       "orders",
		Config:     wire.TopicConfig{Partitions: 1, Cleanup: "delete", SegmentBytes: 1 << 30},
		Partitions: []engine.PartitionInfo{{Partition: 0, HWM: 3, LEO: 3, Segments: -1, Bytes: -1}},
	}
	var list, desc bytes.Buffer
	printTopicList(&list, []wire.TopicInfo{ti})
	printTopic(&desc, ti)
	row := strings.Fields(strings.Split(list.String(), "\n")[1])
	// TOPIC PARTITIONS OFFSETS BYTES CODEC SYNC CLEANUP RETENTION
	if len(row) != 8 || row[3] != "n/a" || row[4] != "n/a" || row[5] != "n/a" {
		t.Errorf("topics list row %q, want n/a for bytes, codec and sync", row)
	}
	for _, want := range []string{"codec       n/a", "sync mode   n/a"} {
		if !strings.Contains(desc.String(), want) {
			t.Errorf("describe lacks %q:\n%s", want, desc.String())
		}
	}
}

// A partition whose last write failed (a full disk) says so in describe's
// STATUS, with the reason, instead of "ok".
func TestDescribeShowsAFailedPartition(t *testing.T) {
	ti := wire.TopicInfo{
		Name:   "full",
		Config: wire.TopicConfig{Partitions: 2, Cleanup: "delete", SegmentBytes: 1 << 26},
		Partitions: []engine.PartitionInfo{
			{Partition: 0, HWM: 3, LEO: 3, Segments: 1, Failed: "write 00000000000000000000.log: no space left on device"},
			{Partition: 1, HWM: 1, LEO: 1, Segments: 1},
		},
	}
	var desc bytes.Buffer
	printTopic(&desc, ti)
	lines := strings.Split(desc.String(), "\n")
	var p0, p1 string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "0 "):
			p0 = l
		case strings.HasPrefix(l, "1 "):
			p1 = l
		}
	}
	if !strings.Contains(p0, "failed (write 00000000000000000000.log: no space left on device)") || strings.HasSuffix(p0, " ok") {
		t.Errorf("partition 0 row %q does not say its writes fail", p0)
	}
	if !strings.HasSuffix(p1, " ok") {
		t.Errorf("partition 1 row %q, want ok", p1)
	}
}
