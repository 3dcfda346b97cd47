package compact

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/internal/killtest"
)

// The SIGKILL test runs a child copy of this test binary that appends keyed
// records and tombstones while compaction passes (every tombstone already
// expired) run back to back, kills it at a random moment (often in the
// middle of a rewrite or a swap), reopens the log and checks every
// acknowledged record against what was read back.
const sigkillChildEnv = "PULSE_COMPACT_CRASH_CHILD"

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
	var mu sync.Mutex
	go func() {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
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
			base, _, err := l.Append(context.Background(), recs)
			if err != nil {
				fmt.Fprintln(os.Stderr, "child append:", err)
				os.Exit(3)
			}
			var b strings.Builder
			for j, r := range recs {
				v := "-"
				if r.Value != nil {
					v = string(r.Value)
				}
				fmt.Fprintf(&b, "ack %d %s %s\n", base+int64(j), r.Key, v)
			}
			mu.Lock()
			os.Stdout.WriteString(b.String())
			mu.Unlock()
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

type ackedRecord struct {
	key   string
	value string // "-": tombstone
}

func TestCompactionSurvivesSIGKILL(t *testing.T) {
	cycles := killtest.Cycles(12, 400)
	seed := killtest.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	acked := map[int64]ackedRecord{}
	newest := map[string]int64{} // key → newest acknowledged offset
	sparse := 0                  // compacted segments seen at reopens
	for c := range cycles {
		ls := killtest.Run(t, []string{sigkillChildEnv + "=" + dir}, time.Duration(50+rng.IntN(250))*time.Millisecond)
		for _, line := range ls {
			f := strings.SplitN(line, " ", 4)
			if len(f) != 4 || f[0] != "ack" {
				continue
			}
			off, _ := strconv.ParseInt(f[1], 10, 64)
			acked[off] = ackedRecord{key: f[2], value: f[3]}
			if off > newest[f[2]] || newest[f[2]] == 0 {
				newest[f[2]] = off
			}
		}

		l, err := plog.Open(dir, sigkillLogOptions())
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", c, err)
		}
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
			if a, ok := acked[r.Offset]; ok && (a.key != string(r.Key) || a.value != v) {
				t.Fatalf("cycle %d: offset %d reads %s=%q, acknowledged as %s=%q", c, r.Offset, r.Key, v, a.key, a.value)
			}
			last[string(r.Key)] = r.Offset
		}
		for k, off := range newest {
			got, ok := last[k]
			switch {
			case ok && got < off:
				t.Fatalf("cycle %d (seed %d): key %s: last record read at offset %d, below its newest acknowledged %d (tombstone %v): lost or resurrected",
					c, seed, k, got, off, acked[off].value == "-")
			case !ok && acked[off].value != "-":
				t.Fatalf("cycle %d (seed %d): key %s: newest acknowledged value at offset %d is gone", c, seed, k, off)
			}
		}
	}
	if sparse == 0 {
		t.Fatal("no reopen found a compacted segment: the child never compacted")
	}
	t.Logf("%d cycles, %d acknowledged records, %d keys, %d compacted segments seen", cycles, len(acked), len(newest), sparse)
}
