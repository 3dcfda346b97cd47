package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/internal/killtest"
)

const churnChildEnv = "PULSE_CHURN_CHILD"

// churnChild creates, fills and deletes topics until it is killed.
func churnChild(dir string) {
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "churn open:", err)
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	for i := 0; ; i++ {
		name := fmt.Sprintf("t%d", rng.IntN(12))
		if _, err := e.Describe(name); err == nil {
			if err := e.DeleteTopic(name); err != nil {
				fmt.Fprintln(os.Stderr, "churn delete:", err)
				os.Exit(3)
			}
			continue
		}
		if err := e.CreateTopic(name, TopicConfig{Partitions: 1 + rng.IntN(3)}); err != nil {
			fmt.Fprintln(os.Stderr, "churn create:", err)
			os.Exit(4)
		}
		if _, err := e.Produce(context.Background(), name, -1, []Record{{Value: []byte("v")}}); err != nil {
			fmt.Fprintln(os.Stderr, "churn produce:", err)
			os.Exit(5)
		}
		if err := e.CommitCursor("c", name, 0, 1); err != nil {
			fmt.Fprintln(os.Stderr, "churn commit:", err)
			os.Exit(6)
		}
	}
}

// A process killed at random moments while it creates and deletes topics
// leaves a data directory whose next open is consistent: every topic whole,
// no directory without a topic, meta.db clean.
func TestTopicChurnSurvivesSIGKILL(t *testing.T) {
	cycles := killtest.Cycles(15, 300)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(killtest.Seed(t), 3))
	for c := range cycles {
		killtest.Run(t, []string{churnChildEnv + "=" + dir}, time.Duration(40+rng.IntN(200))*time.Millisecond)

		e := openEngine(t, dir)
		for _, p := range e.Problems() {
			if !strings.Contains(p, "finished a delete") && !strings.Contains(p, "interrupted create") {
				t.Errorf("cycle %d: unexpected inconsistency: %s", c, p)
			}
		}
		ts, err := e.Topics()
		if err != nil {
			t.Fatal(err)
		}
		known := map[string]int{}
		for _, ti := range ts {
			known[ti.Name] = len(ti.Partitions)
			for p := range len(ti.Partitions) {
				if _, err := os.Stat(filepath.Join(dir, "topics", ti.Name, fmt.Sprintf("p%05d", p))); err != nil {
					t.Errorf("cycle %d: topic %s partition %d has no directory", c, ti.Name, p)
				}
			}
		}
		ents, _ := os.ReadDir(filepath.Join(dir, "topics"))
		for _, d := range ents {
			if _, ok := known[d.Name()]; !ok {
				t.Errorf("cycle %d: directory %s has no topic", c, d.Name())
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
}
