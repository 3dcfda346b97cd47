package offline

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/pulselog/pulse/engine/recovery"
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
	for i, p := range parts {
		o := opts
		o.Topic, o.Partition = p.topic, p.partition
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
