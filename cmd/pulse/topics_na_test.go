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
