package main

import (
	"path/filepath"

	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/offline"
)

// What the tests of the commands on a data dir at rest read and build with.

// verifySummary is the document `pulse verify --json` prints.
type verifySummary = offline.VerifySummary

// segmentFiles lists the segment files of a partition directory by base.
func segmentFiles(dir string) ([]int64, error) { return segment.List(dir) }

// partitionPath is where partition p of topic lives in a data directory,
// and the same path relative to it.
func partitionPath(data, topic string, p int) (abs, rel string) {
	abs = crashlab.PartitionDir(data, topic, p)
	rel, err := filepath.Rel(data, abs)
	if err != nil {
		rel = abs
	}
	return abs, rel
}
