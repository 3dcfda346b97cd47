package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

func newConsumersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "consumers",
		Short: "List, describe, reset and delete the consumers (committed cursors) of a running pulse",
		Long: `Websocket consumers are named cursors: a subscribe with "consumer" resumes
from them and commit moves them (docs/websocket.md). A Kafka consumer
group's committed offsets are the cursors of the consumer of the same name
(docs/kafka.md). These commands show them with their lag (and a Kafka
group's live members), move them and delete them.`,
	}
	cmd.AddCommand(newConsumersListCmd(), newConsumersDescribeCmd(), newConsumersResetCmd(), newConsumersDeleteCmd())
	return cmd
}

// consumerRow is one cursor of one topic.
type consumerRow struct {
	topic string
	wire.ConsumerCursor
}

// allCursors lists the cursors of topic, or of every topic when topic is "".
func allCursors(ctx context.Context, c *wsclient.Client, topic string) ([]consumerRow, error) {
	names, err := topicNames(ctx, c, topic)
	if err != nil {
		return nil, err
	}
	var rows []consumerRow
	for _, n := range names {
		tc, err := c.Consumers(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("consumers of %q: %w", n, err)
		}
		for _, cc := range tc.Consumers {
			rows = append(rows, consumerRow{n, cc})
		}
	}
	return rows, nil
}

func newConsumersListCmd() *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "One line per consumer and topic: partitions with a cursor, total lag",
		Args:  cobra.NoArgs,
	}
	cf := addClientFlags(cmd)
	cmd.Flags().StringVar(&topic, "topic", "", "only this topic")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			rows, err := allCursors(ctx, c, topic)
			if err != nil {
				return err
			}
			type key struct{ consumer, topic string }
			var order []key
			parts, lag := map[key]int{}, map[key]int64{}
			for _, r := range rows {
				k := key{r.Consumer, r.topic}
				if _, ok := parts[k]; !ok {
					order = append(order, k)
				}
				parts[k]++
				lag[k] += r.Lag
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CONSUMER\tTOPIC\tPARTITIONS\tLAG")
			for _, k := range order {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", k.consumer, k.topic, parts[k], lag[k])
			}
			return tw.Flush()
		})
	}
	return cmd
}

func newConsumersDescribeCmd() *cobra.Command {
	var topic string
	cmd := &cobra.Command{
		Use:   "describe CONSUMER",
		Short: "A consumer's cursor and lag on every partition, and a Kafka group's live members",
		Args:  cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	cmd.Flags().StringVar(&topic, "topic", "", "only this topic")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			names, err := topicNames(ctx, c, topic)
			if err != nil {
				return err
			}
			var (
				mine    []consumerRow
				members []engine.ConsumerMember
			)
			for _, n := range names {
				tc, err := c.ConsumerOn(ctx, n, args[0])
				if err != nil {
					return fmt.Errorf("consumers of %q: %w", n, err)
				}
				for _, cc := range tc.Consumers {
					mine = append(mine, consumerRow{n, cc})
				}
				if ms := tc.Members[args[0]]; len(ms) > 0 {
					members = ms // the same on every topic
				}
			}
			if len(mine) == 0 && len(members) == 0 {
				return fmt.Errorf("consumer %q has no cursor (it never committed)", args[0])
			}
			w := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			if len(mine) > 0 {
				fmt.Fprintln(tw, "TOPIC\tPARTITION\tCURSOR\tLAG")
				for _, r := range mine {
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", r.topic, r.Partition, r.Offset, r.Lag)
				}
			} else {
				fmt.Fprintln(tw, "no committed cursor yet")
			}
			if len(members) > 0 {
				fmt.Fprintf(tw, "\n%s\n", countOf(int64(len(members)), "live member", "live members"))
				fmt.Fprintln(tw, "MEMBER\tCLIENT-ID\tHOST")
				for _, m := range members {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", m.ID, orNA(m.ClientID), orNA(m.Host))
				}
			}
			return tw.Flush()
		})
	}
	return cmd
}

// topicNames is topic alone, or every topic's name when topic is "".
func topicNames(ctx context.Context, c *wsclient.Client, topic string) ([]string, error) {
	if topic != "" {
		return []string{topic}, nil
	}
	ts, err := c.Topics(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return names, nil
}

func newConsumersDeleteCmd() *cobra.Command {
	var (
		topic  string
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "delete CONSUMER",
		Short: "Delete a consumer's cursors (every topic, or --topic)",
		Long: `Deletes the consumer's committed cursors on every topic (or on --topic
only), in one synced meta.db commit, and prints each one deleted. A
subscription of the consumer that is running keeps reading; its next
commit creates the cursor again. A Kafka group with live members is
refused (as Kafka's NON_EMPTY_GROUP): stop its consumers first.
--dry-run prints what would be deleted and changes nothing.`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&topic, "topic", "", "only the cursors on this topic")
	f.BoolVar(&dryRun, "dry-run", false, "print what would be deleted, change nothing")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			dc, err := c.DeleteConsumer(ctx, args[0], topic, dryRun)
			if err != nil {
				return fmt.Errorf("deleting consumer %q: %w", args[0], err)
			}
			verb := "deleted"
			if dryRun {
				verb = "would delete"
			}
			w := cmd.OutOrStdout()
			for _, ci := range dc.Cursors {
				fmt.Fprintf(w, "%s %s cursor on %s partition %d: offset %d, lag %d\n", verb, ci.Consumer, ci.Topic, ci.Partition, ci.Offset, ci.Lag)
			}
			return nil
		})
	}
	return cmd
}

func newConsumersResetCmd() *cobra.Command {
	var (
		topic                    string
		partition                int
		earliest, latest, dryRun bool
		toOffset                 int64
		toTime                   string
	)
	cmd := &cobra.Command{
		Use:   "reset CONSUMER --topic T (--to-earliest | --to-latest | --to-offset N | --to-time MS)",
		Short: "Move a consumer's cursors on a topic (every partition, or --partition)",
		Long: `Moves the consumer's cursor on every partition of the topic (or one, with
--partition) to the log start, the HWM, an offset (clamped to the
partition's log start and HWM) or the first record committed at or after a
time (Unix ms; the HWM when none is). --dry-run prints the moves without
making them. The consumer need not have committed before.`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&topic, "topic", "", "the topic (required)")
	f.IntVar(&partition, "partition", -1, "one partition, or -1 for every partition")
	f.BoolVar(&earliest, "to-earliest", false, "to each partition's log start")
	f.BoolVar(&latest, "to-latest", false, "to each partition's HWM (nothing left to read)")
	f.Int64Var(&toOffset, "to-offset", -1, "to this offset")
	f.StringVar(&toTime, "to-time", "", "to the first record at or after this Unix ms")
	f.BoolVar(&dryRun, "dry-run", false, "print the moves, change nothing")
	cmd.MarkFlagRequired("topic")
	cmd.MarkFlagsMutuallyExclusive("to-earliest", "to-latest", "to-offset", "to-time")
	cmd.MarkFlagsOneRequired("to-earliest", "to-latest", "to-offset", "to-time")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		consumer := args[0]
		// The cursor store's rule, which the server's commit applies: a
		// dry run refuses what the moves would be refused for.
		if err := engine.ValidateConsumerName(consumer); err != nil {
			return fmt.Errorf("consumer %q: %w", consumer, err)
		}
		if partition < -1 {
			return fmt.Errorf("--partition %d: want a partition (0 or more), or -1 for every partition", partition)
		}
		if cmd.Flags().Changed("to-offset") && toOffset < 0 {
			return fmt.Errorf("--to-offset %d: want an offset ≥ 0", toOffset)
		}
		var ms int64 = -1
		if toTime != "" {
			n, err := strconv.ParseInt(toTime, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("--to-time %q: want Unix milliseconds", toTime)
			}
			ms = n
		}
		return cf.withClient(cmd, func(ctx context.Context, c *wsclient.Client) error {
			t, err := c.Describe(ctx, topic)
			if err != nil {
				return fmt.Errorf("topic %q: %w", topic, err)
			}
			if partition >= len(t.Partitions) {
				return fmt.Errorf("partition %d: topic %s has %d", partition, topic, len(t.Partitions))
			}
			tc, err := c.Consumers(ctx, topic)
			if err != nil {
				return err
			}
			current := map[int]int64{}
			for _, cc := range tc.Consumers {
				if cc.Consumer == consumer {
					current[cc.Partition] = cc.Offset
				}
			}
			type move struct {
				p        int
				from, to int64
				had      bool
			}
			var moves []move
			for _, p := range t.Partitions {
				if partition >= 0 && p.Partition != partition {
					continue
				}
				var to int64
				switch {
				case earliest:
					to = p.LogStart
				case latest:
					to = p.HWM
				case ms >= 0:
					if to, err = c.OffsetForTime(ctx, topic, p.Partition, ms); err != nil {
						return fmt.Errorf("partition %d: %w", p.Partition, err)
					}
				default:
					to = min(max(toOffset, p.LogStart), p.HWM)
				}
				from, had := current[p.Partition]
				moves = append(moves, move{p.Partition, from, to, had})
			}
			w := cmd.OutOrStdout()
			verb := "moved"
			if dryRun {
				verb = "would move"
			}
			for _, m := range moves {
				from := "no cursor"
				if m.had {
					from = strconv.FormatInt(m.from, 10)
				}
				if !dryRun {
					if err := c.Commit(ctx, consumer, topic, m.p, m.to); err != nil {
						return fmt.Errorf("%s partition %d: %w", topic, m.p, err)
					}
				}
				fmt.Fprintf(w, "%s %s %s partition %d: %s → %d\n", verb, consumer, topic, m.p, from, m.to)
			}
			return nil
		})
	}
	return cmd
}
