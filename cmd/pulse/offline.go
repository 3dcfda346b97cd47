package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/internal/offline"
)

// dump, verify and meta: commands on a data directory at rest (as are
// inspect and crashlab, in their own files). Their flags are here, their
// work in internal/offline.

// What the path argument of the commands on a data directory at rest
// should be, for missingPath.
const (
	wantDir  = "a data directory, a topic directory or a partition directory"
	wantFile = "a .log segment file, or an .index, snapshot or hwm file"
)

// missingPathError is the path a command was given not existing: it names
// the command and what the path should be, where internal/offline's error
// is a bare "stat X: no such file or directory" (kept for errors.Is).
type missingPathError struct {
	cmd, path, want string
	err             error
}

func (e *missingPathError) Error() string {
	return fmt.Sprintf("%s: %s does not exist (want %s)", e.cmd, e.path, e.want)
}

func (e *missingPathError) Unwrap() error { return e.err }

// missingPath turns err into a *missingPathError when it is path itself
// that does not exist; any other error is left as it is.
func missingPath(cmd, path, want string, err error) error {
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, serr := os.Lstat(path); !errors.Is(serr, fs.ErrNotExist) {
		return err
	}
	return &missingPathError{cmd: cmd, path: path, want: want, err: err}
}

func newDumpCmd() *cobra.Command {
	var records, asJSON bool
	cmd := &cobra.Command{
		Use:   "dump FILE",
		Short: "Print the batches (and records) of one .log segment file, or an .index, snapshot or hwm file",
		Long: `Dump prints every batch of one segment file: byte position, base offset,
record count, codec, sizes, timestamps and whether its CRC checks out. Damaged
regions are shown where they are, and the dump continues at the next valid
batch. --records prints each record's offset, timestamp, key, value and
headers. Given an .index file it prints the index entries; given a
partition's snapshot or hwm file, its decoded fields. The file is only read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return missingPath("dump", args[0], wantFile, offline.Dump(cmd.OutOrStdout(), args[0], offline.DumpOptions{Records: records, JSON: asJSON}))
		},
	}
	cmd.Flags().BoolVar(&records, "records", false, "print the records of every batch")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func newVerifyCmd() *cobra.Command {
	var asJSON, quiet bool
	cmd := &cobra.Command{
		Use:   "verify [DIR]",
		Short: "CRC-check every batch of every segment",
		Long: `Verify reads every segment of every partition of a data directory (or of
DIR: a data directory, a topic directory or one partition directory) and
checks every batch: header, CRC and offsets. It reads the segments the
partition's manifest lists, and reports as problems too what recovery would
find lost: a listed segment that is missing, a sealed segment ending before
the next one's base, acknowledged offsets (hwm file, snapshot) past the end of
the data, a range an earlier open recorded as lost; and a .log file the
manifest does not list (stray: not read). Progress goes to stderr. It
exits non-zero and lists each problem (file, byte position, offsets, kind,
error) when anything is bad. Nothing is written. Next to a running pulse, a write in
flight may show as a torn tail of an active segment.`,
		Args: cobra.MaximumNArgs(1),
	}
	data := addDataFlag(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the problems as JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		root := *data
		if len(args) == 1 {
			root = args[0]
		}
		var progress io.Writer
		if !quiet {
			progress = cmd.ErrOrStderr()
		}
		return missingPath("verify", root, wantDir, offline.Verify(cmd.OutOrStdout(), progress, root, asJSON))
	}
	return cmd
}

func newMetaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "meta",
		Short: "Check or dump the metadata store (meta.db)",
		Long: `Commands on <data>/meta.db, the bbolt store holding identity, topics,
partitions, consumer cursors and the last reports. Both open it read-only and
never change a byte; they need the data directory not to be in use by a
running pulse.`,
	}
	cmd.AddCommand(newMetaCheckCmd(), newMetaDumpCmd())
	return cmd
}

func newMetaCheckCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check meta.db's pages and key space",
		Long: `Check runs bbolt's consistency check over meta.db (pages, free list,
key order) and then checks Pulse's key space: every value decodes, every topic
has exactly its partitions, and every cursor and report belongs to an existing
partition. It lists each problem and exits non-zero when there is any.`,
		Args: cobra.NoArgs,
	}
	data := addDataFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return offline.MetaCheck(cmd.OutOrStdout(), *data)
	}
	return cmd
}

func newMetaDumpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dump",
		Short: "Print meta.db's key space as JSON",
		Long: `Dump prints every bucket of meta.db and every key in it as one JSON
object: stored JSON as is, offsets and the schema version as numbers, and
anything else as "hex:<bytes>".`,
		Args: cobra.NoArgs,
	}
	data := addDataFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return offline.MetaDump(cmd.OutOrStdout(), *data)
	}
	return cmd
}
