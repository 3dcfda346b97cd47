package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
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
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// produceWindow is how many produce requests `pulse produce` keeps in
// flight before waiting for the oldest ack.
const produceWindow = 32

// produceRequestBytes bounds the records of one produce request past its
// first: well under the server's read limit (1 MiB by default), which
// counts the whole request, so that lines each under it are not refused
// for being sent together. A record larger than this goes alone.
const produceRequestBytes = 256 << 10

// recordBytes is about what r takes in a produce request.
func recordBytes(r *wire.RecordIn) int {
	n := 32 + len(r.Value)
	if r.Key != nil {
		n += 8 + len(*r.Key)
	}
	if r.KeyB64 != nil {
		n += 12 + len(*r.KeyB64)
	}
	if r.ValueB64 != nil {
		n += 14 + len(*r.ValueB64)
	}
	for k, v := range r.Headers {
		n += 8 + len(k) + len(v)
	}
	return n
}

type produceConfig struct {
	key       string
	keySet    bool
	headers   []string
	jsonLines bool
	partition int
	batch     int
	keyDelim  string // kcat -K: each line is key<delim>value
}

func newProduceCmd() *cobra.Command {
	var cfg produceConfig
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce the lines of stdin to a topic of a running pulse",
		Long: `Reads stdin line by line; each non-empty line becomes one record whose value
is the line's text. With --json each line is a JSON object
{"key":..,"value":..,"headers":{..},"partition":..} where value is any JSON (a
string is stored as its text, anything else as the JSON), and key_b64 /
value_b64 carry bytes. The topic is created on first produce unless the
server runs with --no-auto-create. Records are sent in batches as lines
arrive and acknowledged once the topic's sync mode promise holds; the
command exits once they are visible to readers (for an interval-mode topic
a few milliseconds after the last ack), and prints the count on stderr.`,
		Args: cobra.ExactArgs(1),
	}
	cf := addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&cfg.key, "key", "k", "", "key of every record (default: none, records spread round-robin)")
	f.StringArrayVarP(&cfg.headers, "header", "H", nil, "header key=value added to every record, repeatable")
	f.BoolVar(&cfg.jsonLines, "json", false, "each line is a JSON record object")
	f.IntVarP(&cfg.partition, "partition", "p", -1, "partition of every record, or -1 for by key or round-robin")
	f.IntVar(&cfg.batch, "batch", 100, "most records per produce request")
	f.StringVarP(&cfg.keyDelim, "key-delimiter", "K", "", `kcat -K: each line is KEY<delimiter>VALUE, split at the first delimiter (a line without it has no key); \t \n \r \\ \xHH as in kcat`)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.keySet = cmd.Flags().Changed("key")
		ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
		defer stop()
		n, err := runProduce(ctx, cf, args[0], cfg, cmd.InOrStdin())
		if err != nil && ctx.Err() != nil {
			// Stopped by a signal: say so, not "context canceled".
			err = fmt.Errorf("produce to %s: stopped (%v) before the end of the input", args[0], context.Cause(ctx))
		}
		if err == nil || n > 0 {
			// On an error before any ack (no pulse running, a bad
			// first line) the error alone says what happened.
			fmt.Fprintf(cmd.ErrOrStderr(), "pulse: produced %s to %s\n", countOf(int64(n), "record", "records"), args[0])
		}
		return serverGone(err, cf.server)
	}
	return cmd
}

// parseHeaders turns key=value flags into a header map.
func parseHeaders(hs []string) (map[string]string, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--header %q: want key=value", h)
		}
		m[k] = v
	}
	return m, nil
}

// lineRecord turns one stdin line into a record; lineNo is for errors.
func lineRecord(line []byte, lineNo int, cfg produceConfig, headers map[string]string) (wire.RecordIn, error) {
	var r wire.RecordIn
	if cfg.jsonLines {
		// The record objects of the produce endpoints, read by their one
		// parser; unknown fields are refused (a misspelt "vlaue").
		if e := wire.DecodeRecord(line, &r, fmt.Sprintf("line %d", lineNo), true, "one record per line"); e != nil {
			return r, errors.New(e.Message)
		}
		if len(r.Value) == 0 && r.ValueB64 == nil && !r.Tombstone {
			return r, fmt.Errorf(`line %d: no "value" (use "value": null for a tombstone)`, lineNo)
		}
	} else {
		v := line
		if k, rest, ok := bytes.Cut(line, []byte(cfg.keyDelim)); cfg.keyDelim != "" && ok {
			if !utf8.Valid(k) {
				kb := base64.StdEncoding.EncodeToString(k)
				r.KeyB64 = &kb
			} else {
				key := string(k)
				r.Key = &key
			}
			v = rest
		}
		switch t := bytes.TrimSpace(v); {
		case len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t):
			// A JSON object or array reads back as JSON, as a text frame of
			// the produce endpoint does (docs/websocket.md).
			r.Value = t
		case utf8.Valid(v):
			// Any other line is text, and reads back as that text ("42"
			// stays the string "42").
			r.Value, _ = json.Marshal(string(v))
		default:
			vb := base64.StdEncoding.EncodeToString(v)
			r.ValueB64 = &vb
		}
	}
	if cfg.keySet && r.Key == nil && r.KeyB64 == nil {
		k := cfg.key
		r.Key = &k
	}
	if len(headers) > 0 {
		if r.Headers == nil {
			r.Headers = map[string]string{}
		}
		for k, v := range headers {
			if _, ok := r.Headers[k]; !ok {
				r.Headers[k] = v
			}
		}
	}
	return r, nil
}

// runProduce sends the lines of in to topic and returns how many records
// were acknowledged.
func runProduce(ctx context.Context, cf *clientFlags, topic string, cfg produceConfig, in io.Reader) (int, error) {
	headers, err := parseHeaders(cfg.headers)
	if err != nil {
		return 0, err
	}
	if cfg.partition < -1 {
		return 0, fmt.Errorf("--partition %d: want a partition (0 or more), or -1 for by key or round-robin", cfg.partition)
	}
	if cfg.batch < 1 {
		return 0, fmt.Errorf("--batch %d: want at least 1", cfg.batch)
	}
	// kcat's escapes, as -f takes them: -K '\t' splits at a tab.
	delim, err := kcatUnescape(cfg.keyDelim)
	if err != nil {
		return 0, fmt.Errorf("-K %q: %w", cfg.keyDelim, err)
	}
	cfg.keyDelim = delim
	c, err := cf.dial(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the reader goroutine on an early return

	// A reader goroutine hands over lines, so that whatever arrived together
	// goes out in one request while an interactive line goes out at once.
	type line struct {
		b   []byte
		err error
	}
	lines := make(chan line, cfg.batch)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			b, err := br.ReadBytes('\n')
			if len(b) > 0 {
				b = []byte(strings.TrimRight(string(b), "\r\n"))
				select {
				case lines <- line{b: b}:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					select {
					case lines <- line{err: err}:
					case <-ctx.Done():
					}
				}
				return
			}
		}
	}()

	acked := 0
	ackedThrough := 0       // the input line of the last record acked
	last := map[int]int64{} // the highest offset acked on each partition
	var window []*wsclient.Pending
	// sent is, for each request in the window, the input line of each of
	// its records and each line's size.
	var sent []sentLines
	// The acks of requests already sent are waited for after a signal
	// too, for up to ackGrace, so that the count printed is what the
	// server stored, not what happened to be acked when the signal came.
	ackCtx, ackCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ackCancel()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(ackGrace, ackCancel) })()
	wait := func() error {
		acks, err := window[0].Wait(ackCtx)
		if err != nil {
			if e := overReadLimit(ctx, c, err, topic, window, sent, ackedThrough); e != nil {
				return e
			}
			return fmt.Errorf("produce to %s: %w", topic, refusedLine(err, sent[0].lines))
		}
		if len(acks) != len(sent[0].lines) {
			return fmt.Errorf("produce to %s: %d acks for %d records", topic, len(acks), len(sent[0].lines))
		}
		for _, a := range acks {
			if o, ok := last[a.Partition]; !ok || a.Offset > o {
				last[a.Partition] = a.Offset
			}
		}
		acked += len(sent[0].lines)
		ackedThrough = sent[0].lines[len(sent[0].lines)-1]
		window, sent = window[1:], sent[1:]
		return nil
	}
	lineNo := 0
	var batch []wire.RecordIn
	var batchLines, batchSizes []int
	batchBytes := 0
	// held is a record that did not fit in the request being gathered
	// (produceRequestBytes): it opens the next one.
	var held *wire.RecordIn
	heldLine, heldSize := 0, 0
	add := func(l line) error {
		if l.err != nil {
			return fmt.Errorf("reading stdin: %w", l.err)
		}
		lineNo++
		if len(l.b) == 0 {
			return nil
		}
		r, err := lineRecord(l.b, lineNo, cfg, headers)
		if err != nil {
			return err
		}
		n := recordBytes(&r)
		if len(batch) > 0 && batchBytes+n > produceRequestBytes {
			held, heldLine, heldSize = &r, lineNo, len(l.b)
			return nil
		}
		batch = append(batch, r)
		batchLines = append(batchLines, lineNo)
		batchSizes = append(batchSizes, len(l.b))
		batchBytes += n
		return nil
	}
	// next starts gathering the next request, with the held record first
	// when there is one, and says whether there was.
	next := func() bool {
		batch, batchLines, batchSizes, batchBytes = batch[:0:0], nil, nil, 0
		if held == nil {
			return false
		}
		batch, batchLines, batchSizes, batchBytes = append(batch, *held), []int{heldLine}, []int{heldSize}, recordBytes(held)
		held = nil
		return true
	}
	// full says the request being gathered takes no more records.
	full := func() bool {
		return held != nil || len(batch) >= cfg.batch || batchBytes >= produceRequestBytes
	}
	// send sends the request gathered, if any. A record over
	// produceRequestBytes goes alone, with no other request in flight
	// (waiting for the acks before it, and for its own): if the server
	// closes for it being over its read limit, it is the request named,
	// and the lines before it were acked.
	send := func() error {
		if len(batch) == 0 {
			return nil
		}
		alone := batchBytes > produceRequestBytes
		for alone && len(window) > 0 {
			if err := wait(); err != nil {
				return err
			}
		}
		p, err := c.ProduceAsync(topic, cfg.partition, batch)
		if err != nil {
			if e := overReadLimit(ctx, c, err, topic, window, sent, ackedThrough); e != nil {
				return e
			}
			return err
		}
		window = append(window, p)
		sent = append(sent, sentLines{batchLines, batchSizes})
		if alone {
			return wait()
		}
		return nil
	}
	// fail sends what is batched and waits for every ack: what came before a bad
	// line is stored before the error is reported.
	fail := func(err error) (int, error) {
		for send() == nil && next() {
		}
		for len(window) > 0 {
			if werr := wait(); werr != nil {
				return acked, errors.Join(err, werr)
			}
		}
		if ctx.Err() != nil {
			return acked, err
		}
		return acked, errors.Join(err, awaitVisible(ctx, c, topic, last))
	}
	for done := false; ; {
		if ctx.Err() != nil {
			// SIGINT or SIGTERM: nothing more is sent; the acks of
			// what was are counted.
			for len(window) > 0 {
				if err := wait(); err != nil {
					return acked, err
				}
			}
			return acked, ctx.Err()
		}
		if !next() {
			if done {
				break
			}
			var l line
			var ok bool
			select {
			case l, ok = <-lines:
			case <-ctx.Done():
				// SIGINT or SIGTERM while waiting for a line: every ack is
				// in (the window is empty before stdin is waited on).
				return acked, ctx.Err()
			}
			if !ok {
				break
			}
			if err := add(l); err != nil {
				return fail(err)
			}
		}
	more: // whatever is already buffered joins the batch
		for !done && !full() {
			select {
			case l, ok := <-lines:
				if !ok {
					done = true
					break more
				}
				if err := add(l); err != nil {
					return fail(err)
				}
			default:
				break more
			}
		}
		if err := send(); err != nil {
			return acked, err
		}
		if len(window) >= produceWindow {
			if err := wait(); err != nil {
				return acked, err
			}
		}
		// Nothing more buffered: collect acks before blocking on stdin.
		for held == nil && len(lines) == 0 && len(window) > 0 {
			if err := wait(); err != nil {
				return acked, err
			}
		}
	}
	for len(window) > 0 {
		if err := wait(); err != nil {
			return acked, err
		}
	}
	if err := ctx.Err(); err != nil {
		return acked, err
	}
	return acked, awaitVisible(ctx, c, topic, last)
}

// ackGrace is how long pulse produce, stopped by a signal, still waits for
// the acks of the requests it sent.
const ackGrace = 5 * time.Second

// sentLines are the input lines of the records of one produce request,
// and each line's size in bytes.
type sentLines struct {
	lines, sizes []int
}

// lineRange is "line 3" or "lines 3-7".
func lineRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

// overReadLimit is, when err is the connection ending with close 1009
// (a message over the server's read limit), what happened in Pulse's
// words: the lines of the request that was too large (the largest of the
// window's, the requests sent and not acked), their size, the server's
// read limit, and what became of the lines before and after it; nil for
// any other error. ackedThrough is the line of the last record acked. The
// server does not tell its read limit, so the client cannot refuse the
// line before sending it.
func overReadLimit(ctx context.Context, c *wsclient.Client, err error, topic string, window []*wsclient.Pending, sent []sentLines, ackedThrough int) error {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		var we *wire.Error
		if errors.As(err, &we) || ctx.Err() != nil {
			return nil
		}
		// A write that failed as the server closed: the reader has
		// the close frame, or soon has.
		select {
		case <-c.Done():
		case <-time.After(time.Second):
			return nil
		}
		if !errors.As(c.Err(), &ce) {
			return nil
		}
	}
	if ce.Code != websocket.CloseMessageTooBig || len(window) == 0 {
		return nil
	}
	i := 0
	for j := range window {
		if window[j].Size() > window[i].Size() {
			i = j
		}
	}
	bad := sent[i]
	first, last := bad.lines[0], bad.lines[len(bad.lines)-1]
	what := fmt.Sprintf("%s (%d bytes; its request %d bytes)", lineRange(first, last), bad.sizes[0], window[i].Size())
	if len(bad.lines) > 1 {
		total := 0
		for _, n := range bad.sizes {
			total += n
		}
		what = fmt.Sprintf("%s (%d bytes in one request of %d bytes)", lineRange(first, last), total, window[i].Size())
	}
	is, it := "is", "it"
	if first != last {
		is, it = "are", "them"
	}
	msg := fmt.Sprintf("produce to %s: %s %s over the server's read limit (pulse serve --read-limit, 1 MiB by default): nothing of %s was stored, and the server closed the connection", topic, what, is, it)
	if ackedThrough > 0 {
		msg += fmt.Sprintf("; %s before %s %s acked", lineRange(1, ackedThrough), it, were(1, ackedThrough))
	}
	if i > 0 {
		a, b := sent[0].lines[0], sent[i-1].lines[len(sent[i-1].lines)-1]
		may := "they may"
		if a == b {
			may = "it may"
		}
		msg += fmt.Sprintf("; %s before %s %s sent but not acked (%s be stored)", lineRange(a, b), it, were(a, b), may)
	}
	return &readLimitError{msg: fmt.Sprintf("%s; nothing after %s was stored", msg, it), err: err}
}

// were is the verb of lineRange(first, last).
func were(first, last int) string {
	if first == last {
		return "was"
	}
	return "were"
}

// readLimitError is a produce the server closed the connection for, a
// message over its read limit: its message says so in Pulse's words and
// leaves out the websocket close error, which Unwrap keeps.
type readLimitError struct {
	msg string
	err error
}

func (e *readLimitError) Error() string { return e.msg }

func (e *readLimitError) Unwrap() error { return e.err }

// refusedLine names, in err, the input line of the record a produce
// request was refused for: the server names a record of a request by its
// place in it ("record 2: ..."), which says nothing to the one who wrote
// the lines, batched as they arrived. lines holds the line of each record
// of the request. An error naming no record (a topic not found) is left
// as it is.
func refusedLine(err error, lines []int) error {
	var we *wire.Error
	if !errors.As(err, &we) {
		return err
	}
	rest, ok := strings.CutPrefix(we.Message, "record ")
	if !ok {
		return err
	}
	n, msg, ok := strings.Cut(rest, ": ")
	i, aerr := strconv.Atoi(n)
	if !ok || aerr != nil || i < 0 || i >= len(lines) {
		return err
	}
	named := *we
	named.Message = msg
	return fmt.Errorf("line %d: %w", lines[i], &named)
}

// visibleWait bounds how long `pulse produce` waits for its acked records
// to become visible: an interval-mode topic makes them visible within a few
// milliseconds of the ack, and fsyncs at least every sync interval (1 s).
const visibleWait = 10 * time.Second

// awaitVisible returns once every partition of topic in last has its HWM
// past the offset last gives it: the records acked are then what a reader
// starting now gets. An every-write ack already is visible (one describe);
// an interval-mode one becomes visible once fsynced, a few milliseconds
// later. Past visibleWait it says so instead of waiting on.
func awaitVisible(ctx context.Context, c *wsclient.Client, topic string, last map[int]int64) error {
	if len(last) == 0 {
		return nil
	}
	deadline := time.Now().Add(visibleWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		info, err := c.Describe(ctx, topic)
		if err != nil {
			return fmt.Errorf("produce to %s: acked, then checking they are visible: %w", topic, err)
		}
		visible := true
		for p, off := range last {
			if p >= len(info.Partitions) || info.Partitions[p].HWM <= off {
				visible = false
				break
			}
		}
		if visible {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("produce to %s: the records were acked but are still not visible after %v (not yet fsynced)", topic, visibleWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}
