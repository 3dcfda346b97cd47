package meta

import "sort"

// MismatchKind classifies one disagreement between meta.db and the partition
// directories on disk.
type MismatchKind string

const (
	// MissingTopicDir: an active topic with none of its partition directories.
	MissingTopicDir MismatchKind = "missing-topic-dir"
	// MissingPartitionDirs: an active topic some of whose partition
	// directories are missing (Partitions lists them).
	MissingPartitionDirs MismatchKind = "missing-partition-dirs"
	// ExtraPartitionDirs: partition directories of an active topic at or
	// beyond its partition count (Partitions lists them).
	ExtraPartitionDirs MismatchKind = "extra-partition-dirs"
	// OrphanTopicDir: partition directories of a topic meta.db does not know
	// (Partitions lists them; may be empty for a topic directory without any
	// partition directory).
	OrphanTopicDir MismatchKind = "orphan-topic-dir"
)

// Mismatch is one disagreement found by Reconcile.
type Mismatch struct {
	Kind       MismatchKind `json:"kind"`
	Topic      string       `json:"topic"`
	Partitions []int        `json:"partitions,omitempty"` // the partitions concerned, ascending
	Want       int          `json:"want"`                 // partition count in meta.db (0 for an orphan)
	Have       int          `json:"have"`                 // partition directories found on disk
}

// Reconcile compares the topics of meta.db with the partition directories
// found on disk (topic → partition numbers; a topic directory with no
// partition directory maps to an empty slice) and returns every mismatch,
// sorted by topic then kind. It reads no files and decides nothing: the
// engine acts on the result and reports it.
//
// Topics in state TopicDeleting are skipped both ways: their directories may
// be in any state until the engine finishes the delete.
func Reconcile(topics []Topic, disk map[string][]int) []Mismatch {
	var out []Mismatch
	known := make(map[string]bool, len(topics))
	for _, t := range topics {
		known[t.Name] = true
		if t.State == TopicDeleting {
			continue
		}
		dirs, found := disk[t.Name]
		have := uniqueSorted(dirs)
		present := make(map[int]bool, len(have))
		for _, p := range have {
			present[p] = true
		}
		if !found || len(have) == 0 {
			all := make([]int, t.Partitions)
			for p := range all {
				all[p] = p
			}
			out = append(out, Mismatch{Kind: MissingTopicDir, Topic: t.Name, Partitions: all, Want: t.Partitions, Have: 0})
			continue
		}
		var missing, extra []int
		for p := 0; p < t.Partitions; p++ {
			if !present[p] {
				missing = append(missing, p)
			}
		}
		for _, p := range have {
			if p < 0 || p >= t.Partitions {
				extra = append(extra, p)
			}
		}
		if len(missing) > 0 {
			out = append(out, Mismatch{Kind: MissingPartitionDirs, Topic: t.Name, Partitions: missing, Want: t.Partitions, Have: len(have)})
		}
		if len(extra) > 0 {
			out = append(out, Mismatch{Kind: ExtraPartitionDirs, Topic: t.Name, Partitions: extra, Want: t.Partitions, Have: len(have)})
		}
	}
	for name, dirs := range disk {
		if known[name] {
			continue
		}
		have := uniqueSorted(dirs)
		out = append(out, Mismatch{Kind: OrphanTopicDir, Topic: name, Partitions: have, Want: 0, Have: len(have)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// uniqueSorted returns a sorted copy of ps without duplicates.
func uniqueSorted(ps []int) []int {
	out := append([]int(nil), ps...)
	sort.Ints(out)
	n := 0
	for i, p := range out {
		if i == 0 || p != out[n-1] {
			out[n] = p
			n++
		}
	}
	return out[:n]
}
