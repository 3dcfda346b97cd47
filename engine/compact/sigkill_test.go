package compact

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/internal/killtest"
)

// The SIGKILL test runs a child copy of this test binary that appends keyed
// records and tombstones while compaction passes (every tombstone already
// expired) run back to back, kills it at a random moment (often in the
// middle of a rewrite or a swap), reopens the log and checks every record
// read back against what the child wrote.
//
// The child prints each batch twice: "try" lines just before Append and
// "ack" lines once Append has returned. The batch in flight when the child
// dies has its "try" lines but no "ack": it was never acknowledged, yet its
// bytes may well be on disk (a SIGKILL does not take back what reached the
// page cache, and recovery exposes the hidden tail), so it may or may not be
// in the log afterwards, as a whole. The parent learns which from the log
// end after reopening, and from then on treats it as written like any
// acknowledged batch. It must: that batch can hold a tombstone for a key
// whose newest acknowledged record is a value, and compaction then rightly
// drops the value (superseded) and, once nothing older of the key is left,
// the expired tombstone too, so the key is gone from the log although no
// acknowledged delete exists. Judging the log by acknowledged records
// alone called that loss; it is the newest write of the key taking effect.
const sigkillChildEnv = "PULSE_COMPACT_CRASH_CHILD"

// sigkillSeedEnv hands the child the seed of its workload.
const sigkillSeedEnv = "PULSE_COMPACT_CRASH_SEED"

// sigkillKeepEnv, when set, puts the test's data directory outside the test's
// temp dir and keeps it when the test fails, for inspection.
const sigkillKeepEnv = "PULSE_KEEP_DIR"

func sigkillLogOptions() plog.Options {
	o := logOptions(codec.CodecZstd)
	o.SegmentMaxBytes = 8 << 10
	o.IndexIntervalBytes = 256
	return o
}

// sigkillValue is a record value that names its key, so that a record
// read back can be checked even when its ack was never printed.
func sigkillValue(key string, n int) []byte {
	return []byte(fmt.Sprintf("%s=%d;%s", key, n, strings.Repeat("v", n%200)))
}

func sigkillChild(dir string) {
	l, err := plog.Open(dir, sigkillLogOptions())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	go func() {
		// The parent's seed and the cycle pick the workload, so that
		// PULSE_SEED replays it (the kill still lands where timing puts it).
		seed, _ := strconv.ParseUint(os.Getenv(sigkillSeedEnv), 10, 64)
		rng := rand.New(rand.NewPCG(seed, 3))
		for i := 0; ; i++ {
			n := 1 + rng.IntN(8)
			recs := make([]codec.Record, n)
			for j := range recs {
				key := fmt.Sprintf("k%02d", rng.IntN(30))
				recs[j].Key = []byte(key)
				if rng.IntN(6) > 0 {
					recs[j].Value = sigkillValue(key, rng.IntN(1000))
				}
			}
			// Each batch's lines go out in one write of at most 8 lines of
			// under 250 bytes (2 KiB, under PIPE_BUF): the parent never reads part
			// of a batch.
			var b strings.Builder
			for _, r := range recs {
				fmt.Fprintf(&b, "try %d %s %s\n", n, r.Key, sigkillShown(r))
			}
			os.Stdout.WriteString(b.String())
			base, _, err := l.Append(context.Background(), recs)
			if err != nil {
				fmt.Fprintln(os.Stderr, "child append:", err)
				os.Exit(3)
			}
			b.Reset()
			for j, r := range recs {
				fmt.Fprintf(&b, "ack %d %s %s\n", base+int64(j), r.Key, sigkillShown(r))
			}
			os.Stdout.WriteString(b.String())
		}
	}()
	o := Options{MinGainRatio: 1e-9, Now: func() time.Time { return time.Now().Add(48 * time.Hour) }}
	for {
		if _, err := Run(context.Background(), l, o); err != nil {
			fmt.Fprintln(os.Stderr, "child compact:", err)
			os.Exit(4)
		}
	}
}

// sigkillShown is a record's value as the child prints it: "-" for a
// tombstone.
func sigkillShown(r codec.Record) string {
	if r.Value == nil {
		return "-"
	}
	return string(r.Value)
}

// writtenRecord is a record the child wrote that is known to be in the log:
// acknowledged, or the batch in flight at a kill that recovery kept.
type writtenRecord struct {
	key   string
	value string // "-": tombstone
	acked bool
}

func TestCompactionSurvivesSIGKILL(t *testing.T) {
	cycles := killtest.Cycles(12, 400)
	seed := killtest.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	if os.Getenv(sigkillKeepEnv) != "" {
		d, err := os.MkdirTemp("", "pulse-compact-sigkill-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
		t.Logf("data dir %s (kept if the test fails)", dir)
		t.Cleanup(func() {
			if !t.Failed() {
				os.RemoveAll(dir)
			}
		})
	}
	written := map[int64]writtenRecord{}
	newest := map[string]int64{} // key → offset of its newest written record
	// history names the newest records written for key k, for a failure.
	history := func(k string) string {
		var offs []int64
		for off, w := range written {
			if w.key == k {
				offs = append(offs, off)
			}
		}
		slices.Sort(offs)
		var b strings.Builder
		for _, off := range offs[max(len(offs)-6, 0):] {
			w := written[off]
			v, _, _ := strings.Cut(w.value, ";")
			fmt.Fprintf(&b, " %d:%s(acked %v)", off, v, w.acked)
		}
		return b.String()
	}
	note := func(off int64, w writtenRecord) {
		written[off] = w
		if cur, ok := newest[w.key]; !ok || off > cur {
			newest[w.key] = off
		}
	}
	end := int64(0) // the log end: every offset below it was written
	sparse := 0     // compacted segments seen at reopens
	// The log start at the last reopen: only compaction deletes segments
	// here (an emptied one), and a log whose every sealed segment it
	// emptied shows no compacted segment at all.
	start := int64(0)
	acked, recovered := 0, 0
	for c := range cycles {
		env := []string{sigkillChildEnv + "=" + dir, sigkillSeedEnv + "=" + strconv.FormatUint(seed+uint64(c), 10)}
		ls := killtest.Run(t, env, time.Duration(50+rng.IntN(250))*time.Millisecond)
		var tried []writtenRecord // the batch in flight at the kill, if any
		for _, line := range ls {
			f := strings.SplitN(line, " ", 4)
			if len(f) != 4 {
				t.Fatalf("cycle %d: child printed %q", c, line)
			}
			switch f[0] {
			case "try":
				tried = append(tried, writtenRecord{key: f[2], value: f[3]})
			case "ack":
				off, err := strconv.ParseInt(f[1], 10, 64)
				if err != nil {
					t.Fatalf("cycle %d: child printed %q", c, line)
				}
				if off != end {
					t.Fatalf("cycle %d: record acknowledged at offset %d, but the log ended at %d", c, off, end)
				}
				note(off, writtenRecord{key: f[2], value: f[3], acked: true})
				end++
				acked++
				tried = nil
			default:
				t.Fatalf("cycle %d: child printed %q", c, line)
			}
		}

		l, err := plog.Open(dir, sigkillLogOptions())
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", c, err)
		}
		leo := l.LEO()
		start = l.LogStart()
		recs := readAll(t, l)
		rep := l.Report()
		segs, err := l.Segments()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range segs {
			if s.Sparse {
				sparse++
			}
		}
		if err := l.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", c, err)
		}
		if rep.Degraded {
			t.Fatalf("cycle %d: a crash left the log degraded: %s (stray %v, notes %v)", c, rep.Summary(), rep.StraySegments, rep.Notes)
		}
		// The batch in flight is in the log as a whole or not at all.
		switch {
		case leo == end:
		case len(tried) > 0 && leo == end+int64(len(tried)):
			for _, w := range tried {
				note(end, w)
				end++
				recovered++
			}
		default:
			t.Fatalf("cycle %d: log ends at %d after recovery; acknowledged records end at %d and %d records were in flight",
				c, leo, end, len(tried))
		}

		last := map[string]int64{}
		prev := int64(-1)
		for _, r := range recs {
			if r.Offset <= prev {
				t.Fatalf("cycle %d: offset %d after %d", c, r.Offset, prev)
			}
			prev = r.Offset
			v := "-"
			if r.Value != nil {
				v = string(r.Value)
				if !strings.HasPrefix(v, string(r.Key)+"=") {
					t.Fatalf("cycle %d: offset %d: key %s holds %q", c, r.Offset, r.Key, v)
				}
			}
			w, ok := written[r.Offset]
			if !ok {
				t.Fatalf("cycle %d: offset %d reads %s=%q, which was never written there", c, r.Offset, r.Key, v)
			}
			if w.key != string(r.Key) || w.value != v {
				t.Fatalf("cycle %d: offset %d reads %s=%q, written as %s=%q (acked %v)", c, r.Offset, r.Key, v, w.key, w.value, w.acked)
			}
			last[string(r.Key)] = r.Offset
		}
		for k, off := range newest {
			got, ok := last[k]
			switch {
			case ok && got < off:
				t.Fatalf("cycle %d (seed %d): key %s: last record read at offset %d, below its newest written %d (tombstone %v): lost or resurrected; written:%s",
					c, seed, k, got, off, written[off].value == "-", history(k))
			case !ok && written[off].value != "-":
				t.Fatalf("cycle %d (seed %d): key %s: newest value, at offset %d (acked %v), is gone; written:%s",
					c, seed, k, off, written[off].acked, history(k))
			}
		}
	}
	if sparse == 0 && start == 0 {
		t.Fatal("no reopen found a compacted segment, and no segment was deleted: the child never compacted")
	}
	t.Logf("%d cycles, %d acknowledged records, %d unacknowledged ones recovered, %d keys, %d compacted segments seen, log start %d",
		cycles, acked, recovered, len(newest), sparse, start)
}
