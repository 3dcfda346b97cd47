package offline

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/crashlab"
)

// CrashlabConfig is what one `pulse crashlab` run needs.
type CrashlabConfig struct {
	Data      string           // the data directory
	Topic     string           // topic of the partition
	Partition int              // partition number
	Fault     string           // the fault, in crashlab.ParseFault's forms
	JSON      bool             // print the result as JSON
	Options   crashlab.Options // recovery's options and the scratch copies'; Topic, Partition and Label are set from the fields above
}

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

// Crashlab damages a scratch copy of one partition with cfg.Fault, runs
// recovery on it and on an untouched copy, and prints both reports and what
// changed. The partition's own files are only read.
func Crashlab(w io.Writer, cfg CrashlabConfig) error {
	if cfg.Topic == "" {
		return fmt.Errorf("crashlab: --topic is required")
	}
	if err := engine.ValidateTopicName(cfg.Topic); err != nil {
		return fmt.Errorf("crashlab: --topic: %w", err)
	}
	if cfg.Partition < 0 {
		return fmt.Errorf("crashlab: --partition %d: must be 0 or more", cfg.Partition)
	}
	if cfg.Fault == "" {
		return fmt.Errorf("crashlab: --fault is required (one of %s)", kindNames())
	}
	f, err := crashlab.ParseFault(cfg.Fault)
	if err != nil {
		return fmt.Errorf("crashlab: --fault: %w", err)
	}
	dir, rel := partitionPath(cfg.Data, cfg.Topic, cfg.Partition)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("crashlab: topic %s partition %d: no directory %s in data dir %s", cfg.Topic, cfg.Partition, rel, cfg.Data)
	}
	opts := cfg.Options
	opts.Topic, opts.Partition, opts.Label = cfg.Topic, cfg.Partition, rel
	res, err := crashlab.Run(dir, f, opts)
	if err != nil {
		return err
	}
	if cfg.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return renderCrashlab(w, res)
}

func renderCrashlab(w io.Writer, res *crashlab.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "crash lab: %s, fault %s\n", res.Partition, res.FaultSpec)
	fmt.Fprintf(&b, "applied:   %s\n\n", res.Applied)
	for _, l := range crashlab.SideBySide("HEALTHY COPY", res.Healthy.Lines(), "FAULTED COPY", res.Faulted.Lines(), 0) {
		b.WriteString(l + "\n")
	}
	b.WriteString("\nwhat changed:\n")
	for _, l := range res.Findings {
		b.WriteString("  - " + l + "\n")
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", res.Verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

func kindNames() string {
	var s []string
	for _, k := range crashlab.Kinds() {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}
