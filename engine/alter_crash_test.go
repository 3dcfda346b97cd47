package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/internal/killtest"
)

const growChildEnv = "PULSE_GROW_CHILD"

// growChild grows topic "g" one partition at a time, producing a record to
// the newest partition after each grow, until it is killed. It prints
// "grown N" once AlterTopic returned and "acked P O" for each record acked.
func growChild(dir string) {
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "grow open:", err)
		os.Exit(2)
	}
	info, err := e.Describe("g")
	if err != nil {
		if err := e.CreateTopic("g", TopicConfig{Codec: "none"}); err != nil {
			fmt.Fprintln(os.Stderr, "grow create:", err)
			os.Exit(3)
		}
		info, _ = e.Describe("g")
	}
	n := len(info.Partitions)
	for n < MaxPartitions {
		cfg := info.Config
		cfg.Partitions = n + 1
		if err := e.AlterTopic("g", cfg); err != nil {
			fmt.Fprintln(os.Stderr, "grow alter:", err)
			os.Exit(4)
		}
		n++
		fmt.Printf("grown %d\n", n)
		acks, err := e.Produce(context.Background(), "g", n-1, []Record{{Value: []byte("v")}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "grow produce:", err)
			os.Exit(5)
		}
		fmt.Printf("acked %d %d\n", acks[0].Partition, acks[0].Offset)
	}
	fmt.Fprintln(os.Stderr, "grow: reached the partition limit")
	os.Exit(6)
}

// A process killed at random moments while it grows a topic leaves a data
// directory that opens with the count it had before the last grow or the
// one after, never fewer, with every acked record readable; partition
// directories past the count (a grow killed before its meta.db commit) are
// reported and reused by the next grow.
func TestGrowPartitionsSurvivesSIGKILL(t *testing.T) {
	cycles := killtest.Cycles(8, 200)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(killtest.Seed(t), 5))
	acked := map[int]int64{} // partition -> offsets acked
	// The topic exists before the first kill, which may come before the
	// child has done anything.
	e := openEngine(t, dir)
	if err := e.CreateTopic("g", TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	info, err := e.Describe("g")
	if err != nil {
		t.Fatal(err)
	}
	grown, interrupted := len(info.Partitions), 0
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for c := range cycles {
		lines := killtest.Run(t, []string{growChildEnv + "=" + dir}, time.Duration(30+rng.IntN(150))*time.Millisecond)
		for _, l := range lines {
			f := strings.Fields(l)
			switch {
			case len(f) == 2 && f[0] == "grown":
				grown, _ = strconv.Atoi(f[1])
			case len(f) == 3 && f[0] == "acked":
				p, _ := strconv.Atoi(f[1])
				o, _ := strconv.ParseInt(f[2], 10, 64)
				acked[p] = max(acked[p], o+1)
			}
		}

		e := openEngine(t, dir)
		for _, p := range e.Problems() {
			if !strings.Contains(p, "beyond its") {
				t.Errorf("cycle %d: unexpected inconsistency: %s", c, p)
			} else {
				interrupted++ // killed between the directories and the meta.db commit
			}
		}
		info, err := e.Describe("g")
		if err != nil {
			t.Fatalf("cycle %d: %v", c, err)
		}
		if n := len(info.Partitions); n < grown || n > grown+1 {
			t.Errorf("cycle %d: %d partitions, the child last reported %d", c, n, grown)
		}
		grown = len(info.Partitions)
		for p, end := range acked {
			if p >= len(info.Partitions) {
				t.Errorf("cycle %d: partition %d with acked records is gone", c, p)
				continue
			}
			r, err := e.Read("g", p, 0, 100, 1<<20)
			if err != nil || int64(len(r.Records)) < end {
				t.Errorf("cycle %d: partition %d: %d records readable (%v), %d acked", c, p, len(r.Records), err, end)
			}
		}
		if probs, err := e.Meta().Check(); err != nil || len(probs) > 0 {
			t.Errorf("cycle %d: meta.db check: %v %v", c, err, probs)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			t.Fatalf("stopping after cycle %d", c)
		}
	}
	t.Logf("grown to %d partitions over %d kills; %d opens found empty partition directories past the count (a grow killed before its meta.db commit)", grown, cycles, interrupted)
	if grown < 2 {
		t.Fatalf("the child never grew the topic (%d partitions)", grown)
	}
}
