package offline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// openMetaReadOnly opens <dir>/meta.db for inspection.
func openMetaReadOnly(dir string) (*meta.Store, error) {
	opts := meta.DefaultOptions()
	opts.ReadOnly = true
	s, err := meta.Open(dir, opts)
	if errors.Is(err, meta.ErrLocked) {
		return nil, fmt.Errorf("%w (stop the pulse using %s first)", err, dir)
	}
	return s, err
}

// MetaCheck checks <dir>/meta.db's pages and Pulse's key space in it,
// read-only, and prints each problem; it returns an error when there is any.
func MetaCheck(w io.Writer, dir string) error {
	disk, diskErr := engine.ScanTopicDirs(dir)
	s, err := openMetaReadOnly(dir)
	if err != nil {
		if _, serr := os.Stat(meta.Path(dir)); errors.Is(serr, fs.ErrNotExist) && diskErr == nil && len(disk) > 0 {
			names := make([]string, 0, len(disk))
			for n := range disk {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("%s is missing, but %s holds %d topic directories (%s): their records are unreachable until pulse opens the data dir and rebuilds meta.db from them",
				meta.Path(dir), filepath.Join(dir, layout.TopicsDir), len(names), strings.Join(names, ", "))
		}
		return err
	}
	defer s.Close()
	problems, err := s.Check()
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(w, "BAD %v\n", p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d problems", s.Path(), len(problems))
	}
	version, err := s.SchemaVersion()
	if err != nil {
		return err
	}
	topics, err := s.ListTopics()
	if err != nil {
		return err
	}
	cursors, err := s.ListCursors("")
	if err != nil {
		return err
	}
	for _, t := range topics {
		if t.Rebuilt != "" {
			fmt.Fprintf(w, "WARN topic %s: %s\n", t.Name, t.Rebuilt)
		}
	}
	if diskErr == nil {
		for _, m := range meta.Reconcile(topics, disk) {
			fmt.Fprintf(w, "WARN %s: %s (partitions %v)\n", m.Topic, m.Kind, m.Partitions)
		}
	}
	fmt.Fprintf(w, "%s: schema %d, %d topics, %d cursors: ok\n", s.Path(), version, len(topics), len(cursors))
	return nil
}

// MetaDump prints <dir>/meta.db's key space as one JSON object.
func MetaDump(w io.Writer, dir string) error {
	s, err := openMetaReadOnly(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := s.Dump()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}
