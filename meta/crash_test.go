package meta

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test runs a child process (this test binary, re-executed with
// crashChildEnv set) that loops over topic creates, deletes, config changes,
// cursor commits and reports, printing one line after each call returns: an
// acknowledgement. The parent SIGKILLs it at a random point, reopens meta.db
// and checks that every acknowledged change is there, nothing half-written
// is, and at most the one call in flight when the kill landed is unexplained.

const (
	crashChildEnv = "PULSE_META_CRASH_CHILD" // data dir of the child
	crashSeedEnv  = "PULSE_META_CRASH_SEED"
	crashRoundEnv = "PULSE_META_CRASH_ROUND"
)

// crashChild is the child's main: it never returns normally.
func crashChild(dir string) {
	seed, _ := strconv.ParseInt(os.Getenv(crashSeedEnv), 10, 64)
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	s, err := Open(dir, DefaultOptions())
	if err != nil {
		fail(err)
	}
	ack := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	rng := rand.New(rand.NewSource(seed))

	// Startup as the engine does it: finish deletes left half done.
	topics, err := s.ListTopics()
	if err != nil {
		fail(err)
	}
	var active []Topic
	for _, t := range topics {
		if t.State == TopicDeleting {
			if err := s.DeleteTopic(t.Name); err != nil {
				fail(err)
			}
			ack("delete %s", t.Name)
			continue
		}
		active = append(active, t)
	}
	offset := int64(round) << 32 // cursor offsets grow across rounds
	for n := 0; ; n++ {
		switch op := rng.Intn(10); {
		case op < 2 || len(active) == 0:
			t := Topic{Name: fmt.Sprintf("r%d-t%d", round, n), Partitions: 1 + rng.Intn(4), Config: json.RawMessage(`{"v":0}`)}
			if err := s.PutTopic(t); err != nil {
				fail(err)
			}
			active = append(active, t)
			ack("create %s %d", t.Name, t.Partitions)
		case op < 3:
			i := rng.Intn(len(active))
			t := active[i]
			if err := s.MarkTopicDeleting(t.Name); err != nil {
				fail(err)
			}
			ack("mark %s", t.Name)
			active = append(active[:i], active[i+1:]...)
			if err := s.DeleteTopic(t.Name); err != nil {
				fail(err)
			}
			ack("delete %s", t.Name)
		case op < 4:
			t := active[rng.Intn(len(active))]
			if err := s.UpdateTopicConfig(t.Name, json.RawMessage(fmt.Sprintf(`{"v":%d}`, n))); err != nil {
				fail(err)
			}
			ack("config %s %d", t.Name, n)
		case op < 5:
			t := active[rng.Intn(len(active))]
			p := rng.Intn(t.Partitions)
			if err := s.PutReport(ReportCompaction, t.Name, p, []byte(fmt.Sprintf(`{"n":%d}`, n))); err != nil {
				fail(err)
			}
			ack("report %s %d", t.Name, p)
		default:
			t := active[rng.Intn(len(active))]
			p := rng.Intn(t.Partitions)
			c := fmt.Sprintf("c%d", rng.Intn(3))
			offset++
			if err := s.CommitCursor(c, t.Name, p, offset); err != nil {
				fail(err)
			}
			ack("cursor %s %s %d %d", c, t.Name, p, offset)
		}
	}
}

// crashModel is what the acknowledgements say meta.db holds.
type crashModel struct {
	topics  map[string]*modelTopic
	cursors map[string]int64 // consumer/topic/p → offset
	reports map[string]bool  // topic/p
}

type modelTopic struct {
	partitions int
	deleting   bool
	config     int
}

// modelFromStore reads the model back from a verified store.
func modelFromStore(t *testing.T, s *Store) *crashModel {
	t.Helper()
	m := &crashModel{topics: map[string]*modelTopic{}, cursors: map[string]int64{}, reports: map[string]bool{}}
	topics, err := s.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		var cfg struct{ V int }
		if err := json.Unmarshal(tp.Config, &cfg); err != nil {
			t.Fatalf("topic %s config %s: %v", tp.Name, tp.Config, err)
		}
		m.topics[tp.Name] = &modelTopic{partitions: tp.Partitions, deleting: tp.State == TopicDeleting, config: cfg.V}
	}
	cursors, err := s.ListCursors("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cursors {
		m.cursors[fmt.Sprintf("%s/%s/%d", c.Consumer, c.Topic, c.Partition)] = c.Offset
	}
	reports, err := s.ListReports(ReportCompaction)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		m.reports[fmt.Sprintf("%s/%d", r.Topic, r.Partition)] = true
	}
	return m
}

// apply updates the model with one acknowledgement line.
func (m *crashModel) apply(t *testing.T, line string) {
	f := strings.Fields(line)
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ack %q: %v", line, err)
		}
		return n
	}
	switch {
	case f[0] == "create" && len(f) == 3:
		m.topics[f[1]] = &modelTopic{partitions: atoi(f[2])}
	case f[0] == "mark" && len(f) == 2:
		m.topics[f[1]].deleting = true
	case f[0] == "delete" && len(f) == 2:
		delete(m.topics, f[1])
		for k := range m.cursors {
			if strings.Split(k, "/")[1] == f[1] {
				delete(m.cursors, k)
			}
		}
		for k := range m.reports {
			if strings.Split(k, "/")[0] == f[1] {
				delete(m.reports, k)
			}
		}
	case f[0] == "config" && len(f) == 3:
		m.topics[f[1]].config = atoi(f[2])
	case f[0] == "report" && len(f) == 3:
		m.reports[f[1]+"/"+f[2]] = true
	case f[0] == "cursor" && len(f) == 5:
		m.cursors[f[1]+"/"+f[2]+"/"+f[3]] = int64(atoi(f[4]))
	default:
		t.Fatalf("unknown ack %q", line)
	}
}

// verify compares the store after a kill with the acknowledged model. The
// call in flight at the kill may or may not have committed, so exactly the
// differences it can explain are allowed, and at most one of them. It
// returns how many it found (0 or 1 when the store is right).
func (m *crashModel) verify(t *testing.T, got *crashModel) int {
	t.Helper()
	unexplained := 0
	for name, want := range m.topics {
		g, ok := got.topics[name]
		switch {
		case !ok && want.deleting:
			unexplained++ // delete in flight
		case !ok:
			t.Errorf("acknowledged topic %s is gone", name)
		case g.partitions != want.partitions:
			t.Errorf("topic %s has %d partitions, acknowledged %d", name, g.partitions, want.partitions)
		case want.deleting && !g.deleting:
			t.Errorf("topic %s lost its acknowledged deleting state", name)
		case g.deleting != want.deleting:
			unexplained++ // mark in flight
		case g.config != want.config:
			unexplained++ // config change in flight
		}
	}
	for name, g := range got.topics {
		if _, ok := m.topics[name]; !ok {
			if g.deleting {
				t.Errorf("unacknowledged topic %s is deleting", name)
			}
			unexplained++ // create in flight
		}
	}
	for k, want := range m.cursors {
		g, ok := got.cursors[k]
		topic := strings.Split(k, "/")[1]
		switch {
		case !ok && got.topics[topic] == nil:
			// its topic's delete was in flight (counted above)
		case !ok:
			t.Errorf("acknowledged cursor %s = %d is gone", k, want)
		case g < want:
			t.Errorf("cursor %s = %d, acknowledged %d", k, g, want)
		case g > want:
			unexplained++ // a newer commit in flight
		}
	}
	for k := range got.cursors {
		if _, ok := m.cursors[k]; !ok {
			unexplained++ // a first commit in flight
		}
	}
	for k := range m.reports {
		if !got.reports[k] && got.topics[strings.Split(k, "/")[0]] != nil {
			t.Errorf("acknowledged report %s is gone", k)
		}
	}
	for k := range got.reports {
		if !m.reports[k] {
			unexplained++
		}
	}
	if unexplained > 1 {
		t.Errorf("%d differences from the acknowledged state; one call in flight explains at most one", unexplained)
	}
	return unexplained
}

func TestKilledDuringTopicAndCursorLoops(t *testing.T) {
	rounds := 20
	if os.Getenv("PULSE_LONG") != "" {
		rounds = 200
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	model := &crashModel{topics: map[string]*modelTopic{}, cursors: map[string]int64{}, reports: map[string]bool{}}
	totalAcks, inFlight := 0, 0
	for round := 1; round <= rounds; round++ {
		killAfter := 20 + rng.Intn(200)
		killDelay := time.Duration(rng.Intn(5000)) * time.Microsecond
		acks := runAndKill(t, dir, rng.Int63(), round, killAfter, killDelay)
		totalAcks += len(acks)
		for _, line := range acks {
			model.apply(t, line)
		}

		s := openStore(t, dir)
		mustClean(t, s)
		got := modelFromStore(t, s)
		inFlight += model.verify(t, got)
		s.Close()
		if t.Failed() {
			t.Fatalf("round %d (seed %d, %d acks, last %q)", round, seed, len(acks), acks[len(acks)-1])
		}
		model = got // the next round starts from what is stored
	}
	t.Logf("%d rounds, %d acknowledged calls, %d rounds where the call in flight had committed", rounds, totalAcks, inFlight)
}

// runAndKill starts the child on dir, reads acknowledgements until it has
// killAfter of them, SIGKILLs it killDelay later, and returns every acknowledgement it wrote
// before dying.
func runAndKill(t *testing.T, dir string, seed int64, round, killAfter int, killDelay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		crashChildEnv+"="+dir,
		crashSeedEnv+"="+strconv.FormatInt(seed, 10),
		crashRoundEnv+"="+strconv.Itoa(round))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acks []string
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		acks = append(acks, sc.Text())
		if len(acks) == killAfter && !killed {
			// An ack line wakes us right after the child's commit, so an
			// immediate kill would always land early in the next call.
			// Wait a random part of a call first to reach every point.
			time.Sleep(killDelay)
			cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("round %d: child stopped after %d acks: %v\n%s", round, len(acks), err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: child did not die by SIGKILL: %v\n%s", round, err, stderr.String())
	}
	return acks
}
