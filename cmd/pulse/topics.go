package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/units"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// clientFlags are the flags of every command that talks to a running Pulse
// over the websocket API.
type clientFlags struct {
	server string
	token  string
	// flag names server in its errors (default --server); PULSE_SERVER
	// is named instead when server is its value.
	flag string
}

// addClientFlags adds --server and --token to cmd.
func addClientFlags(cmd *cobra.Command) *clientFlags {
	cf := &clientFlags{}
	server := os.Getenv("PULSE_SERVER")
	if server == "" {
		server = defaultListen
	}
	cmd.Flags().StringVar(&cf.server, "server", server, "address of the running pulse (host:port or ws://host:port; env PULSE_SERVER)")
	cmd.Flags().StringVar(&cf.token, "token", os.Getenv("PULSE_TOKEN"), "token of the running pulse, if it needs one (env PULSE_TOKEN)")
	return cf
}

// dialTimeout bounds connecting to a running Pulse.
const dialTimeout = 5 * time.Second

// dial connects to the running Pulse; when none runs, the error says how to
// start one.
func (cf *clientFlags) dial(ctx context.Context) (*wsclient.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := wsclient.Dial(dctx, cf.server, wsclient.DialOptions{Token: cf.token})
	var ae *wsclient.AddrError
	if errors.As(err, &ae) {
		from := cf.flag
		if from == "" {
			from = "--server"
		}
		if env := os.Getenv("PULSE_SERVER"); env != "" && env == ae.Addr && from == "--server" {
			from = "PULSE_SERVER"
		}
		return nil, fmt.Errorf("%s %q: %s", from, ae.Addr, ae.Reason)
	}
	return c, err
}

// withClient dials the running pulse, runs fn with the command's context
// and the client, and closes the client.
func (cf *clientFlags) withClient(cmd *cobra.Command, fn func(ctx context.Context, c *wsclient.Client) error) error {
	ctx := cmdContext(cmd)
	c, err := cf.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(ctx, c)
}

// cmdContext is the command's context, or Background.
func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func newTopicsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topics",
		Short: "List, describe, create, alter and delete topics of a running pulse",
	}
	cmd.AddCommand(newTopicsListCmd(), newTopicsDescribeCmd(), newTopicsCreateCmd(), newTopicsAlterCmd(), newTopicsDeleteCmd())
	return cmd
}

func newTopicsListCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics",
		Args:  cobra.NoArgs,
	}
	cf := addClientFlags(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			ts, err := c.Topics(ctx)
			if err != nil {
				return err
			}
			if jsonOut {
				return printJSON(cmd.OutOrStdout(), ts)
			}
			printTopicList(cmd.OutOrStdout(), ts)
			return nil
		})
	}
	return cmd
}

// printTopicList prints one line per topic.
func printTopicList(w io.Writer, ts []wire.TopicInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// OFFSETS is the offset span (HWM − log start, summed): a compacted
	// topic stores fewer records than that; the UI's RECORDS column counts
	// them from the segments.
	fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tOFFSETS\tBYTES\tCODEC\tSYNC\tCLEANUP\tRETENTION")
	for _, t := range ts {
		var span, bytes int64
		for _, p := range t.Partitions {
			span += p.HWM - p.LogStart
			if p.Bytes < 0 || bytes < 0 {
				bytes = -1 // a source that cannot tell (a cluster): n/a
			} else {
				bytes += p.Bytes
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Name, len(t.Partitions), span, naIfNegative(bytes),
			orNA(t.Config.Codec), orNA(t.Config.SyncMode), t.Config.Cleanup, retention(t.Config))
	}
	tw.Flush()
}

func retention(c wire.TopicConfig) string {
	var parts []string
	if c.RetentionMs > 0 {
		parts = append(parts, units.FormatDuration(time.Duration(c.RetentionMs)*time.Millisecond))
	}
	if c.RetentionBytes > 0 {
		parts = append(parts, units.FormatBytes(c.RetentionBytes))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func newTopicsDescribeCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "describe TOPIC",
		Short: "Show a topic's configuration and partitions",
		Args:  cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			t, err := c.Describe(ctx, args[0])
			if err != nil {
				return fmt.Errorf("topic %q: %w", args[0], err)
			}
			if jsonOut {
				return printJSON(cmd.OutOrStdout(), t)
			}
			printTopic(cmd.OutOrStdout(), t)
			return nil
		})
	}
	return cmd
}

// printTopic prints a topic's configuration, then a partition table.
func printTopic(w io.Writer, t wire.TopicInfo) {
	c := t.Config
	fmt.Fprintf(w, "topic %s\n", t.Name)
	if t.CreatedAt > 0 {
		fmt.Fprintf(w, "  created     %s\n", time.UnixMilli(t.CreatedAt).UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  partitions  %d\n  codec       %s\n  segment     %s (%d bytes)\n  sync mode   %s\n  cleanup     %s\n  retention   %s\n",
		c.Partitions, orNA(c.Codec), units.FormatBytes(c.SegmentBytes), c.SegmentBytes, orNA(c.SyncMode), c.Cleanup, retention(c))
	if c.Cleanup == "compact" && c.TombstoneRetentionMs > 0 {
		// Only compaction drops tombstones: a delete topic's value says nothing.
		fmt.Fprintf(w, "  tombstones  kept %s\n", units.FormatDuration(time.Duration(c.TombstoneRetentionMs)*time.Millisecond))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tLOG-START\tHWM\tLEO\tSEGMENTS\tBYTES\tSTATUS")
	for _, p := range t.Partitions {
		var status []string
		if p.Failed != "" {
			status = append(status, "failed ("+p.Failed+")")
		}
		if p.Degraded {
			status = append(status, fmt.Sprintf("degraded (%s skipped)", countOf(p.SkippedRecords, "record", "records")))
		}
		if p.HiddenTail > 0 {
			status = append(status, fmt.Sprintf("hidden tail %d", p.HiddenTail))
		}
		if p.Compacting {
			status = append(status, "compacting")
		}
		if len(status) == 0 {
			status = append(status, "ok")
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%s\t%s\n", p.Partition, p.LogStart, p.HWM, p.LEO, naIfNegative(int64(p.Segments)), naIfNegative(p.Bytes), strings.Join(status, ", "))
	}
	tw.Flush()
}

func newTopicsCreateCmd() *cobra.Command {
	var cfg wire.TopicConfig
	cmd := &cobra.Command{
		Use:   "create TOPIC",
		Short: "Create a topic",
		Long: `Creates a topic. Flags left out take the defaults (1 partition, zstd,
64 MiB segments, sync mode every-write, no retention, cleanup delete,
tombstones kept 24h by compaction).`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	f := cmd.Flags()
	f.IntVar(&cfg.Partitions, "partitions", 1, "number of partitions")
	addTopicConfigFlags(cmd, &cfg, true)
	f.StringVar(&cfg.Codec, "codec", "zstd", "batch compression: zstd or none")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		// The wire reads partitions 0 as "the default": refuse it here.
		if cfg.Partitions < 1 {
			return fmt.Errorf("creating topic %q: --partitions %d: want at least 1", args[0], cfg.Partitions)
		}
		// And tombstone_retention_ms 0 as the default 24h, not as "drop at
		// once": refuse that too.
		if cfg.TombstoneRetentionMs < 1 {
			return fmt.Errorf("creating topic %q: --tombstone-retention %s: want at least 1ms (1ms drops tombstones at the next compaction)", args[0], msDurationFlag{&cfg.TombstoneRetentionMs})
		}
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			t, err := c.CreateTopic(ctx, args[0], cfg)
			if err != nil {
				return fmt.Errorf("creating topic %q: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created topic %s (%s, %s, %s)\n", t.Name, countOf(int64(len(t.Partitions)), "partition", "partitions"), orNA(t.Config.Codec), orNA(t.Config.SyncMode))
			return nil
		})
	}
	return cmd
}

// addTopicConfigFlags adds the flags of a topic's changeable configuration
// (create and alter), sizes and durations in human units. create's show
// the defaults a new topic gets; alter's show none, since alter changes
// only the flags given.
func addTopicConfigFlags(cmd *cobra.Command, cfg *wire.TopicConfig, create bool) {
	f := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	cfg.SegmentBytes = 64 << 20
	f.Var(sizeFlag{&cfg.SegmentBytes}, "segment", "segment size before rolling, e.g. 16MiB (at least 1 MiB)")
	f.Var(sizeFlag{&cfg.SegmentBytes}, "segment-bytes", "the same as --segment")
	f.StringVar(&cfg.SyncMode, "sync-mode", "every-write", "every-write (ack after fsync) or interval (ack after write, fsync a few ms later)")
	f.StringVar(&cfg.SyncMode, "sync", "every-write", "the same as --sync-mode")
	f.Var(msDurationFlag{&cfg.RetentionMs}, "retention", "delete sealed segments whose newest record is older, e.g. 7d, 12h (0: keep)")
	f.Var(rawMsFlag{&cfg.RetentionMs, "--retention"}, "retention-ms", "the same as --retention, in milliseconds")
	f.Var(sizeFlag{&cfg.RetentionBytes}, "retention-bytes", "delete the oldest sealed segments past this size per partition, e.g. 1GiB (0: keep)")
	f.StringVar(&cfg.Cleanup, "cleanup", "delete", "delete or compact (keep the latest record per key)")
	cfg.TombstoneRetentionMs = engine.DefaultTopicConfig().TombstoneRetention.Milliseconds()
	f.Var(msDurationFlag{&cfg.TombstoneRetentionMs}, "tombstone-retention", "how long compaction keeps a tombstone after its commit, e.g. 1h (at least 1ms: 1ms drops tombstones at the next compaction)")
	f.Var(rawMsFlag{&cfg.TombstoneRetentionMs, "--tombstone-retention"}, "tombstone-retention-ms", "the same as --tombstone-retention, in milliseconds")
	f.MarkHidden("segment-bytes")
	f.MarkHidden("sync")
	f.MarkHidden("retention-ms")
	f.MarkHidden("tombstone-retention-ms")
	if !create {
		f.VisitAll(func(fl *pflag.Flag) { fl.DefValue = "" })
	}
	cmd.Flags().AddFlagSet(f)
}

func newTopicsAlterCmd() *cobra.Command {
	var cfg wire.TopicConfig
	cmd := &cobra.Command{
		Use:   "alter TOPIC",
		Short: "Change a topic's partitions, segment size, sync mode, retention, cleanup or tombstone retention",
		Long: `Changes the settings given as flags and leaves the others as they are. The
change is stored in meta.db and applies live: --retention, --retention-bytes,
--cleanup and --tombstone-retention from the next retention or compaction
pass, --segment from the next batch written (an active segment already
larger rolls then), --sync-mode from the next produce, and --partitions at
once (partitions grow, never shrink; new ones start empty and keyed records
hash over the new count from then on). --retention 0 and --retention-bytes 0
remove a limit; --tombstone-retention takes at least 1ms (1ms drops
tombstones at the next compaction). The codec is fixed at creation. A
refused change changes nothing.`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	addTopicConfigFlags(cmd, &cfg, false)
	cmd.Flags().IntVar(&cfg.Partitions, "partitions", 0, "grow the topic to this many partitions (never fewer than it has)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		f := cmd.Flags()
		var a wire.TopicAlter
		if f.Changed("retention") || f.Changed("retention-ms") {
			a.RetentionMs = &cfg.RetentionMs
		}
		if f.Changed("retention-bytes") {
			a.RetentionBytes = &cfg.RetentionBytes
		}
		if f.Changed("cleanup") {
			a.Cleanup = &cfg.Cleanup
		}
		if f.Changed("segment") || f.Changed("segment-bytes") {
			a.SegmentBytes = &cfg.SegmentBytes
		}
		if f.Changed("sync-mode") || f.Changed("sync") {
			a.SyncMode = &cfg.SyncMode
		}
		if f.Changed("partitions") {
			a.Partitions = &cfg.Partitions
		}
		if f.Changed("tombstone-retention") || f.Changed("tombstone-retention-ms") {
			a.TombstoneRetentionMs = &cfg.TombstoneRetentionMs
		}
		if a == (wire.TopicAlter{}) {
			return fmt.Errorf("alter %s: nothing to change (give --partitions, --segment, --sync-mode, --retention, --retention-bytes, --cleanup or --tombstone-retention)", args[0])
		}
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			t, err := c.AlterTopic(ctx, args[0], a)
			if err != nil {
				return fmt.Errorf("altering topic %q: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "altered topic %s: %s, segment %s, sync %s, cleanup %s, retention %s\n",
				t.Name, countOf(int64(len(t.Partitions)), "partition", "partitions"), units.FormatBytes(t.Config.SegmentBytes),
				orNA(t.Config.SyncMode), t.Config.Cleanup, retention(t.Config))
			return nil
		})
	}
	return cmd
}

func newTopicsDeleteCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "delete TOPIC",
		Short: "Delete a topic and all its records",
		Args:  cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			if err := c.DeleteTopic(ctx, args[0]); err != nil {
				return fmt.Errorf("deleting topic %q: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted topic %s\n", args[0])
			return nil
		})
	}
	return cmd
}

// printJSON prints v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// naIfNegative prints n, or "n/a" for the -1 a source without local files
// (a Kafka cluster) answers for segments and sizes it cannot tell.
func naIfNegative(n int64) string {
	if n < 0 {
		return "n/a"
	}
	return strconv.FormatInt(n, 10)
}

// orNA is s, or "n/a" when the server does not have the setting (a Kafka
// cluster has no Pulse codec or sync mode).
func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}
