package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka/cluster"
)

// mirrorReportEvery is how often pulse mirror prints its position.
const mirrorReportEvery = time.Second

func newMirrorCmd() *cobra.Command {
	var o cluster.MirrorOptions
	cmd := &cobra.Command{
		Use:   "mirror TOPIC --to BROKERS [--data DIR | --server HOST:PORT]",
		Short: "Copy a local topic to a Kafka cluster, continuously",
		Long: `Copies TOPIC of the data dir to a Kafka cluster, partition p to partition p,
in offset order, with keys, values, headers and timestamps, until SIGINT or
SIGTERM. Every record also carries the headers pulse-mirror-partition and
pulse-mirror-offset (the local partition and offset it copies).

After each acked batch the mirror commits a local consumer cursor
("mirror." + the cluster topic name, shown with its lag on the partitions
screen of the UI). A restarted mirror resumes from that cursor, or past the
last record the cluster partition holds from the mirror if that is later,
so a crash between produce and commit copies nothing twice.

With --data (the default data dir) the mirror opens the data dir itself,
which no other pulse may hold. With --server it reads through the
websocket API of the pulse running on it and commits its cursor there, so
that pulse's UI shows the mirror as a consumer with its lag while it runs.

The cluster topic is created with the local partition count when missing;
one with fewer partitions is refused, one with more is used (its extra
partitions get nothing). A local topic that grows while the mirror runs is
followed: the cluster topic grows to match and the new partitions are
copied from their start. A cluster topic deleted, or deleted and created
again, while the mirror runs ends it with an error. While the cluster is
unreachable the mirror waits and retries, its lag growing. Once a second
the mirror prints its position: records copied and lag (local HWM minus
next offset to copy).`,
		Args: cobra.ExactArgs(1),
	}
	data := addDataFlag(cmd)
	cf := addClientFlags(cmd)
	k := addKafkaFlags(cmd, "to", "cluster to copy to (comma-separated bootstrap brokers, env PULSE_KAFKA)")
	f := cmd.Flags()
	f.StringVar(&o.ToTopic, "to-topic", "", "topic name on the cluster (default TOPIC)")
	f.StringVar(&o.From, "from", "earliest", "where a partition without a cursor starts: earliest or latest")
	f.IntVar(&o.BatchRecords, "batch", 1000, "most records per produce round trip (and per cursor commit)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Topic = args[0]
		if !k.enabled() {
			return errors.New("--to BROKERS is required")
		}
		if cmd.Flags().Changed("server") {
			if cmd.Flags().Changed("data") {
				return errors.New("--data and --server exclude each other: mirror from a data dir or through a running pulse")
			}
			return runMirror(cmd, "", cf, k, o)
		}
		return runMirror(cmd, *data, nil, k, o)
	}
	return cmd
}

// runMirror mirrors from the data dir dir, or through the running Pulse of
// cf when cf is not nil.
func runMirror(cmd *cobra.Command, dir string, cf *clientFlags, k *kafkaFlags, o cluster.MirrorOptions) error {
	ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.From != "earliest" && o.From != "latest" {
		return fmt.Errorf("--from %q: want earliest or latest", o.From)
	}
	if o.BatchRecords < 1 {
		return fmt.Errorf("--batch %d: want 1 or more records", o.BatchRecords)
	}
	var (
		run  func(context.Context, *cluster.Source) error
		from string
	)
	if cf != nil {
		// Two connections: requests and commits on c, the records on
		// stream (cluster.MirrorFromServer says why).
		c, err := cf.dial(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		stream, err := cf.dial(ctx)
		if err != nil {
			return err
		}
		defer stream.Close()
		run = func(ctx context.Context, dst *cluster.Source) error {
			return cluster.MirrorFromServer(ctx, c, stream, dst, o)
		}
		from = "the pulse at " + cf.server
	} else {
		e, err := engine.Open(engine.DefaultOptions(dir))
		if err != nil {
			return err // names the data dir
		}
		defer e.Close()
		run = func(ctx context.Context, dst *cluster.Source) error { return cluster.Mirror(ctx, e, dst, o) }
		from = dir
	}
	dst, err := k.open()
	if err != nil {
		return err
	}
	defer dst.Close()
	to := o.ToTopic
	if to == "" {
		to = o.Topic
	}
	out := cmd.OutOrStdout()
	var (
		mu   sync.Mutex
		last cluster.MirrorStatus
		seen bool
	)
	o.Progress = func(st cluster.MirrorStatus) {
		mu.Lock()
		last, seen = st, true
		mu.Unlock()
	}
	o.Started = func(cluster.MirrorStatus) {
		fmt.Fprintf(out, "pulse: mirroring %s of %s to %s on %s\n", o.Topic, from, to, dst.Name())
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, dst) }()
	t := time.NewTicker(mirrorReportEvery)
	defer t.Stop()
	print := func() {
		mu.Lock()
		st, ok := last, seen
		mu.Unlock()
		if ok {
			printMirror(out, st)
		}
	}
	for {
		select {
		case err := <-done:
			print()
			return err
		case <-t.C:
			print()
		}
	}
}

// printMirror prints one position line: "copied N lag L | p0 next/hwm ...",
// followed by " | waiting: ..." while the cluster cannot be reached.
func printMirror(w io.Writer, st cluster.MirrorStatus) {
	var copied int64
	parts := make([]string, 0, len(st.Partitions))
	for _, p := range st.Partitions {
		copied += p.Copied
		parts = append(parts, fmt.Sprintf("p%d %d/%d", p.Partition, p.Next, p.HWM))
	}
	waiting := ""
	if st.Waiting != nil {
		waiting = " | waiting: " + st.Waiting.Error()
	}
	fmt.Fprintf(w, "mirror: copied %d lag %d | %s%s\n", copied, st.Lag(), strings.Join(parts, " "), waiting)
}
