package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

type tailConfig struct {
	from      string
	partition int
	jsonOut   bool
	consumer  string
	count     int
	format    string // kcat -f
	exitAtEnd bool   // kcat -e
}

func newTailCmd() *cobra.Command {
	var cfg tailConfig
	cmd := &cobra.Command{
		Use:   "tail TOPIC",
		Short: "Print the records of a topic of a running pulse as they arrive",
		Long: `Subscribes to a topic (every partition, or --partition) and prints one line
per record: partition, offset, timestamp (UTC), key ("-" when none) and
value, separated by tabs, kcat style. Values that are not printable text are
shown quoted; a tombstone is shown as <tombstone>. With --json each line is
the record's JSON as the websocket API sends it, always on one line. With -f
each record is printed in a kcat format string (keys and values as stored):
%t topic, %p partition, %o offset, %k key, %K key length (-1: none), %s or
%v value, %S value length (-1: tombstone), %T timestamp (Unix ms), %h
headers (k=v,k=v), %%, and the escapes \n \r \t \\ \xHH.

-o (or --from) is beginning (or earliest), end (or latest, the default), an
offset N, -N (the last N records of each partition), or @ and a Unix time in
milliseconds. -e exits once every partition is printed up to its end as it
was when the tail started; -c N exits after N records. With --consumer the
tail resumes from that consumer's committed position and commits its
position after every record batch it printed.`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&cfg.from, "offset", "o", "end", "where to start: beginning, end, N (an offset), -N (N records before each partition's end) or @unix-ms")
	f.StringVar(&cfg.from, "from", "end", "the same as -o")
	f.StringVarP(&cfg.format, "format", "f", "", `kcat format of each record: %t topic, %p partition, %o offset, %k key, %K key length, %s or %v value, %S value length, %T timestamp (ms), %h headers, \n \t \xHH`)
	f.BoolVarP(&cfg.exitAtEnd, "exit", "e", false, "exit once every partition's records up to its end (the HWM when the tail started) are printed")
	f.IntVarP(&cfg.partition, "partition", "p", -1, "one partition, or -1 for every partition")
	f.BoolVar(&cfg.jsonOut, "json", false, "print each record as JSON")
	f.StringVar(&cfg.consumer, "consumer", "", "consumer name: resume from its cursor and commit as records are printed")
	f.IntVarP(&cfg.count, "count", "c", 0, "exit after this many records (0: run until interrupted)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
		defer stop()
		// `pulse tail ... | head -3`: once the reader is gone, a write to
		// stdout fails with EPIPE instead of killing the process with
		// SIGPIPE, and the tail ends there with status 0 (print).
		signal.Ignore(syscall.SIGPIPE)
		err := runTail(ctx, cf, args[0], cfg, cmd.OutOrStdout())
		if errors.Is(err, context.Canceled) {
			return nil // interrupted: a normal way to stop tailing
		}
		return serverGone(err, cf.server)
	}
	return cmd
}

// runTail prints the records of topic until ctx ends, the count is reached,
// every partition's end is reached (-e) or the connection ends.
func runTail(ctx context.Context, cf *clientFlags, topic string, cfg tailConfig, out io.Writer) (retErr error) {
	start, err := parseStart(cfg.from)
	if err != nil {
		return err
	}
	if cfg.partition < -1 {
		return fmt.Errorf("--partition %d: want a partition (0 or more), or -1 for every partition", cfg.partition)
	}
	if cfg.count < 0 {
		return fmt.Errorf("--count %d: want 0 (no limit) or more", cfg.count)
	}
	t := &tailer{cfg: cfg, topic: topic}
	if cfg.format != "" {
		if t.format, err = parseFormat(cfg.format); err != nil {
			return err
		}
	}
	c, err := cf.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the fan-in goroutines

	var subs []*wsclient.Subscription
	if t.ends, subs, err = subscribeTail(ctx, c, topic, cfg, start); err != nil || subs == nil {
		return err // nil: -e, and nothing to print
	}
	t.w = bufio.NewWriter(out)
	defer t.w.Flush()
	defer func() {
		if err := t.stop(subs); err != nil && retErr == nil {
			retErr = err
		}
	}()
	deliveries := fanIn(ctx, subs)
	for {
		var d delivery
		select {
		case d = <-deliveries:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !d.ok {
			return connEnded(c, d.sub)
		}
		if done, err := t.print(d); done || err != nil {
			return err
		}
	}
}

// subscribeTail subscribes to what cfg asks of topic: one subscription of
// the topic (or of cfg.partition) from start, or one a partition when
// start counts back from each partition's end (-N). ends holds, with -N or
// -e, each partition's HWM now, where -e stops, for the partitions with
// anything to read before it; with -e and none of them, subs is nil (there
// is nothing to print).
func subscribeTail(ctx context.Context, c *wsclient.Client, topic string, cfg tailConfig, start startSpec) (ends map[int]int64, subs []*wsclient.Subscription, err error) {
	if start.before > 0 || cfg.exitAtEnd {
		t, err := c.Describe(ctx, topic)
		if err != nil {
			return nil, nil, fmt.Errorf("tail %s: %w", topic, err)
		}
		if cfg.partition >= len(t.Partitions) {
			return nil, nil, fmt.Errorf("tail %s: partition %d: the topic has %d", topic, cfg.partition, len(t.Partitions))
		}
		// A consumer's committed cursor is where its subscription starts,
		// whatever from says.
		cursors := map[int]int64{}
		if cfg.consumer != "" {
			tc, err := c.ConsumerOn(ctx, topic, cfg.consumer)
			if err != nil {
				return nil, nil, fmt.Errorf("tail %s: %s's cursors: %w", topic, cfg.consumer, err)
			}
			for _, cc := range tc.Consumers {
				if cc.Consumer == cfg.consumer {
					cursors[cc.Partition] = cc.Offset
				}
			}
		}
		ends = map[int]int64{}
		for _, p := range t.Partitions {
			if cfg.partition >= 0 && p.Partition != cfg.partition {
				continue
			}
			from := start.from
			if start.before > 0 {
				from = strconv.FormatInt(max(p.LogStart, p.HWM-start.before), 10)
			}
			// A partition with nothing to read before its end is done.
			first := startOffset(from, p)
			if ms, ok := strings.CutPrefix(from, "@"); ok && cfg.exitAtEnd {
				n, _ := strconv.ParseInt(ms, 10, 64)
				if first, err = c.OffsetForTime(ctx, topic, p.Partition, n); err != nil {
					return nil, nil, fmt.Errorf("tail %s partition %d: %w", topic, p.Partition, err)
				}
			}
			if cur, ok := cursors[p.Partition]; ok {
				first = max(cur, p.LogStart)
			}
			if first < 0 || first < p.HWM {
				ends[p.Partition] = p.HWM
			}
			if start.before > 0 {
				sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: p.Partition, From: from, Consumer: cfg.consumer})
				if err != nil {
					return nil, nil, fmt.Errorf("tail %s partition %d: %w", topic, p.Partition, err)
				}
				subs = append(subs, sub)
			}
		}
		if cfg.exitAtEnd && len(ends) == 0 {
			return ends, nil, nil
		}
	}
	if len(subs) == 0 {
		sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: cfg.partition, From: start.from, Consumer: cfg.consumer})
		if err != nil {
			return nil, nil, fmt.Errorf("tail %s: %w", topic, err)
		}
		subs = append(subs, sub)
	}
	return ends, subs, nil
}

// delivery is a push of one of a tail's subscriptions, or (!ok) the end of
// its channel.
type delivery struct {
	sub *wsclient.Subscription
	p   wsclient.Push
	ok  bool
}

// fanIn delivers the pushes of subs on one channel, in each one's order,
// until ctx ends or a subscription's channel closes (delivered as !ok).
func fanIn(ctx context.Context, subs []*wsclient.Subscription) <-chan delivery {
	deliveries := make(chan delivery)
	for _, sub := range subs {
		go func() {
			for {
				var d delivery
				select {
				case p, ok := <-sub.C():
					d = delivery{sub, p, ok}
				case <-ctx.Done():
					return
				}
				select {
				case deliveries <- d:
				case <-ctx.Done():
					return
				}
				if !d.ok {
					return
				}
			}
		}()
	}
	return deliveries
}

// tailer prints a tail's pushes and commits its consumer's position.
type tailer struct {
	cfg     tailConfig
	topic   string
	format  recordFormat  // -f, or nil
	ends    map[int]int64 // the partitions -e still waits for, and where each stops
	w       *bufio.Writer
	printed int
	// commits go out without waiting (waiting while the subscription's
	// buffer fills would stall the connection); their replies are checked
	// as they come (reap), and all of them in stop.
	commits []*wsclient.Pending
}

// print writes the records of d's push that the tail is to print, commits
// the consumer's position after them, and says whether the tail is done
// (-c reached, or -e and every partition at its end).
func (t *tailer) print(d delivery) (done bool, err error) {
	cfg, p := t.cfg, d.p
	if p.Err != nil {
		return false, fmt.Errorf("tail %s partition %d: %w", t.topic, p.Partition, p.Err)
	}
	if p.Skipped > 0 {
		fmt.Fprintf(os.Stderr, "pulse: partition %d: %s skipped in a corrupt range\n", p.Partition, countOf(p.Skipped, "record", "records"))
	}
	end, bounded := t.ends[p.Partition]
	for i, r := range p.Records {
		if cfg.count > 0 && t.printed == cfg.count {
			break
		}
		if cfg.exitAtEnd && (!bounded || r.Offset >= end) {
			break // past the end this tail was asked to stop at
		}
		switch {
		case t.format != nil:
			t.format.write(t.w, t.topic, r)
		case cfg.jsonOut:
			writeJSONLine(t.w, r.Raw)
		default:
			writeRecordLine(t.w, r)
		}
		t.printed++
		if cfg.count > 0 && t.printed == cfg.count && cfg.consumer != "" {
			// Commit exactly what was printed.
			p.Next = p.Records[i].Offset + 1
		}
	}
	if err := t.w.Flush(); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			// The reader of the output went away (| head): done, and
			// nothing of this push is committed.
			return true, nil
		}
		return false, fmt.Errorf("writing the records: %w", err)
	}
	if cfg.consumer != "" {
		pc, err := d.sub.CommitAsync(p.Partition, p.Next)
		if err != nil {
			return false, fmt.Errorf("committing %s's position: %w", cfg.consumer, err)
		}
		t.commits = append(t.commits, pc)
		if err := t.reap(); err != nil {
			return false, err
		}
	}
	if cfg.count > 0 && t.printed >= cfg.count {
		return true, nil
	}
	if cfg.exitAtEnd && bounded && p.Next >= end {
		delete(t.ends, p.Partition)
		return len(t.ends) == 0, nil
	}
	return false, nil
}

// reap checks the replies of the commits answered so far, in order.
func (t *tailer) reap() error {
	for len(t.commits) > 0 {
		done, err := t.commits[0].Poll()
		if !done {
			return nil
		}
		if err != nil {
			return fmt.Errorf("committing %s's position: %w", t.cfg.consumer, err)
		}
		t.commits = t.commits[1:]
	}
	return nil
}

// stop ends the deliveries of subs, then collects the replies of the
// commits still unanswered (they come before the unsubscribe reply).
func (t *tailer) stop(subs []*wsclient.Subscription) error {
	uctx, ucancel := context.WithTimeout(context.Background(), dialTimeout)
	defer ucancel()
	for _, sub := range subs {
		sub.Unsubscribe(uctx)
	}
	var first error
	for _, p := range t.commits {
		if err := p.Err(uctx); err != nil && first == nil {
			first = fmt.Errorf("committing %s's position: %w", t.cfg.consumer, err)
		}
	}
	return first
}

// startOffset is the first offset a subscribe from "from" reads of p, or
// -1 when only the server knows (a timestamp).
func startOffset(from string, p engine.PartitionInfo) int64 {
	switch from {
	case "earliest":
		return p.LogStart
	case "latest":
		return p.HWM
	}
	if n, err := strconv.ParseInt(from, 10, 64); err == nil {
		return max(n, p.LogStart)
	}
	return -1
}

// connEnded explains why a subscription's channel closed.
func connEnded(c *wsclient.Client, sub *wsclient.Subscription) error {
	err := sub.Err()
	if err == nil {
		err = c.Err()
	}
	if err == nil {
		return fmt.Errorf("pulse at %s ended the subscription", c.Addr())
	}
	return serverGone(err, c.Addr())
}

// serverGone rewords the error of a connection the server dropped without
// a close message (it stopped or crashed: websocket code 1006, an
// unexpected EOF) into what happened; other close codes keep their reason.
func serverGone(err error, addr string) error {
	if err == nil {
		return nil
	}
	var ce *websocket.CloseError
	var rl *readLimitError
	switch {
	case errors.As(err, &rl):
		return err // already says why the server closed
	case errors.As(err, &ce) && ce.Code == websocket.CloseAbnormalClosure,
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &goneError{addr: addr, err: err}
	case errors.As(err, &ce):
		return fmt.Errorf("pulse at %s closed the connection (%s): %w", addr, closeReason(ce), err)
	}
	return err
}

// goneError is a connection the server dropped. Its message leaves out
// the raw websocket error (which says nothing more to a user); Unwrap
// keeps it for errors.Is and errors.As.
type goneError struct {
	addr string
	err  error
}

func (e *goneError) Error() string {
	return fmt.Sprintf("pulse at %s went away (it stopped or crashed); start it again with `pulse` or `pulse serve`", e.addr)
}

func (e *goneError) Unwrap() error { return e.err }

func closeReason(ce *websocket.CloseError) string {
	if ce.Text != "" {
		return ce.Text
	}
	return fmt.Sprintf("code %d", ce.Code)
}

// writeJSONLine writes one record's JSON on one line: a value stored with
// newlines in its JSON is compacted (JSON strings cannot hold a raw
// newline, so this only removes whitespace between tokens).
func writeJSONLine(w *bufio.Writer, raw []byte) {
	if bytes.ContainsAny(raw, "\r\n") {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			raw = buf.Bytes()
		}
	}
	w.Write(raw)
	w.WriteByte('\n')
}

// countOf renders a count with its noun: "1 record", "2 records".
func countOf(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// writeRecordLine writes partition, offset, timestamp, key and value of r,
// tab-separated, on one line.
func writeRecordLine(w *bufio.Writer, r wsclient.Record) {
	w.WriteString(strconv.Itoa(r.Partition))
	w.WriteByte('\t')
	w.WriteString(strconv.FormatInt(r.Offset, 10))
	w.WriteByte('\t')
	w.WriteString(time.UnixMilli(r.Timestamp).UTC().Format("2006-01-02T15:04:05.000Z"))
	w.WriteByte('\t')
	if r.Key == nil {
		w.WriteByte('-')
	} else {
		w.WriteString(printable(r.Key))
	}
	w.WriteByte('\t')
	if r.Value == nil {
		w.WriteString("<tombstone>")
	} else {
		w.WriteString(printable(r.Value))
	}
	w.WriteByte('\n')
}

// printable returns b as is when it is UTF-8 text without control
// characters (tabs and newlines included), JSON compacted onto one line, or
// else Go-quoted, so that one record stays on one line.
func printable(b []byte) string {
	if json.Valid(b) && bytes.ContainsAny(b, "\r\n\t") {
		var buf bytes.Buffer
		if json.Compact(&buf, b) == nil {
			b = buf.Bytes()
		}
	}
	if !utf8.Valid(b) {
		return strconv.Quote(string(b))
	}
	for _, r := range string(b) {
		if unicode.IsControl(r) {
			return strconv.Quote(string(b))
		}
	}
	return string(b)
}
