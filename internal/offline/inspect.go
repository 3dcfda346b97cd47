package offline

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/meta"
)

// Inspect runs crash recovery read-only on every partition under root (a
// data, topic or partition directory) and prints each report.
func Inspect(w io.Writer, root string, opts recovery.Options, asJSON bool) error {
	parts, err := findPartitions(root)
	if err != nil {
		return err
	}
	reports := []recovery.Report{}
	if !asJSON && len(parts) > 0 && heldByRunningPulse(root) {
		fmt.Fprint(w, runningNote)
	}
	opts.ReadOnly = true
	recorded := recordedHWMs(root)
	for i, p := range parts {
		o := opts
		o.Topic, o.Partition = p.topic, p.partition
		o.RecordedHWM = recorded[partitionID{p.topic, p.partition}]
		res, err := recovery.Run(p.dir, o)
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		if asJSON {
			reports = append(reports, res.Report)
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := res.Report.Render(w); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	if len(parts) == 0 {
		_, err := fmt.Fprintf(w, "%s: no partitions\n", root)
		return err
	}
	return nil
}

// partitionID names a partition of a data directory.
type partitionID struct {
	topic     string
	partition int
}

// recordedHWMs are the high-watermarks meta.db recorded, by partition,
// which the open counts as acknowledged beside each partition's own files,
// when root is a data directory whose meta.db can be read: none when it is
// a topic or partition directory, or a running pulse holds it.
func recordedHWMs(root string) map[partitionID]int64 {
	if _, err := os.Stat(meta.Path(root)); err != nil || heldByRunningPulse(root) {
		return nil
	}
	s, err := openMetaReadOnly(root)
	if err != nil {
		return nil
	}
	defer s.Close()
	topics, err := s.ListTopics()
	if err != nil {
		return nil
	}
	out := map[partitionID]int64{}
	for _, t := range topics {
		parts, err := s.Partitions(t.Name)
		if err != nil {
			continue
		}
		for _, p := range parts {
			out[partitionID{t.Name, p.Partition}] = p.HWM
		}
	}
	return out
}
