package plog

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/internal/killtest"
)

// The crash test runs a child copy of this test binary that appends and
// reports every acknowledged offset on stdout, kills it with SIGKILL at a
// random moment, reopens the log and checks every acknowledged record.
const (
	crashChildEnv = "PULSE_CRASH_CHILD"
	crashModeEnv  = "PULSE_CRASH_MODE"
	crashCycleEnv = "PULSE_CRASH_CYCLE"
)

func crashOptions(mode SyncMode) Options {
	o := DefaultOptions()
	o.SyncMode = mode
	o.SegmentMaxBytes = 32 << 10 // frequent rolls: snapshots are rewritten all the time
	o.IndexIntervalBytes = 256
	o.SyncInterval = 20 * time.Millisecond
	o.HWMInterval = 10 * time.Millisecond
	return o
}

// crashChild appends until killed. Every-write: each ack is reported as
// "ack OFFSET VALUE". Interval: acks are reported as they come, and
// "synced END" after each explicit Sync: only acks below END are promised.
func crashChild() {
	dir := os.Getenv(crashChildEnv)
	mode := SyncMode(os.Getenv(crashModeEnv))
	cycle := os.Getenv(crashCycleEnv)
	l, err := Open(dir, crashOptions(mode))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	emit := func(line string) {
		mu.Lock()
		os.Stdout.WriteString(line) // one small write: atomic on a pipe
		mu.Unlock()
	}
	for g := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for i := 0; ; i++ {
				n := 1 + rng.IntN(3)
				recs := make([]codec.Record, n)
				vals := make([]string, n)
				for j := range recs {
					vals[j] = fmt.Sprintf("c%s-g%d-%d-%d-%s", cycle, g, i, j, strings.Repeat("x", rng.IntN(300)))
					recs[j] = codec.Record{Key: []byte(strconv.Itoa(g)), Value: []byte(vals[j])}
				}
				base, _, err := l.Append(context.Background(), recs)
				if err != nil {
					fmt.Fprintln(os.Stderr, "child append:", err)
					os.Exit(3)
				}
				var b strings.Builder
				for j := range recs {
					fmt.Fprintf(&b, "ack %d %s\n", base+int64(j), vals[j])
				}
				emit(b.String())
			}
		}()
	}
	if mode == SyncInterval {
		go func() {
			for {
				time.Sleep(5 * time.Millisecond)
				end := l.LEO()
				if err := l.Sync(); err != nil {
					fmt.Fprintln(os.Stderr, "child sync:", err)
					os.Exit(4)
				}
				emit(fmt.Sprintf("synced %d\n", end))
			}
		}()
	}
	select {}
}

// valueHash stands for a value in the test's memory of what was acked.
func valueHash(v string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(v))
	return h.Sum64()
}

func TestCrashEveryWriteSIGKILL(t *testing.T) { runCrashLoop(t, SyncEveryWrite) }

func TestCrashIntervalSIGKILL(t *testing.T) { runCrashLoop(t, SyncInterval) }

func runCrashLoop(t *testing.T, mode SyncMode) {
	cycles := killtest.Cycles(25, 1000)
	seed := killtest.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	acked := map[int64]uint64{} // every promise made so far: offset → hash of the value
	var ackedOffsets []int64    // the keys of acked, for sampling
	for c := range cycles {
		env := []string{crashChildEnv + "=" + dir, crashModeEnv + "=" + string(mode), crashCycleEnv + "=" + strconv.Itoa(c)}
		ls := killtest.Run(t, env, time.Duration(30+rng.IntN(170))*time.Millisecond)

		// Collect what this cycle promised.
		cycleAcks := map[int64]string{}
		synced := int64(-1)
		for _, line := range ls {
			f := strings.SplitN(line, " ", 3)
			switch {
			case len(f) == 3 && f[0] == "ack":
				off, _ := strconv.ParseInt(f[1], 10, 64)
				cycleAcks[off] = f[2]
			case len(f) == 2 && f[0] == "synced":
				synced, _ = strconv.ParseInt(f[1], 10, 64)
			}
		}
		for off, v := range cycleAcks {
			if mode == SyncInterval && off >= synced {
				delete(cycleAcks, off) // acked as written, never promised durable
				continue
			}
			h := valueHash(v)
			if old, ok := acked[off]; ok && old != h {
				t.Fatalf("cycle %d: offset %d reused by %q", c, off, v)
			}
			if _, ok := acked[off]; !ok {
				ackedOffsets = append(ackedOffsets, off)
			}
			acked[off] = h
		}

		l, err := Open(dir, crashOptions(mode))
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", c, err)
		}
		// Every promise is checked on every cycle of the default run; the
		// long run checks this cycle's promises and a sample of older ones,
		// and all of them every hundred cycles and at the end, so that it
		// stays linear in the size of the log.
		check := map[int64]uint64{}
		if cycles <= 100 || c%100 == 99 || c == cycles-1 {
			check = acked
		} else {
			for off := range cycleAcks {
				check[off] = acked[off]
			}
			for range min(200, len(ackedOffsets)) {
				off := ackedOffsets[rng.IntN(len(ackedOffsets))]
				check[off] = acked[off]
			}
		}
		got := map[int64]uint64{}
		if len(check) == len(acked) {
			for _, r := range readAll(t, l) {
				got[r.Offset] = valueHash(string(r.Value))
			}
		} else {
			for off := range check {
				if r, err := l.Read(off, 1, 0); err == nil && len(r.Records) == 1 && r.Records[0].Offset == off {
					got[off] = valueHash(string(r.Records[0].Value))
				}
			}
		}
		for off, h := range check {
			if got[off] != h {
				l.Close()
				t.Fatalf("cycle %d (seed %d): acked offset %d lost or changed", c, seed, off)
			}
		}
		if rep := l.Report(); rep.Degraded {
			t.Fatalf("cycle %d: a crash left the log degraded: %s", c, rep.Summary())
		}
		if err := l.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", c, err)
		}
	}
	t.Logf("%d cycles, %d acknowledged records checked", cycles, len(acked))
}
