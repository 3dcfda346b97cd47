package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
)

// seenSet records which offsets of which partitions group members consumed.
type seenSet struct {
	mu   sync.Mutex
	offs map[int32]map[int64]bool
	by   map[string]int // records per member
}

func (s *seenSet) add(member string, r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.offs[r.Partition] == nil {
		s.offs[r.Partition] = map[int64]bool{}
	}
	s.offs[r.Partition][r.Offset] = true
	s.by[member]++
}

// complete reports whether every offset below hwm[p] was consumed.
func (s *seenSet) complete(hwm []int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, end := range hwm {
		if int64(len(s.offs[int32(p)])) != end {
			return false
		}
	}
	return true
}

type groupMember struct {
	name string
	cl   *kgo.Client
	stop context.CancelFunc
	done chan struct{}
}

func startMember(t *testing.T, addr, group, topic, name string, seen *seenSet) *groupMember {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(300*time.Millisecond),
		kgo.AutoCommitInterval(200*time.Millisecond), kgo.ClientID(name))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{name: name, cl: cl, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) { seen.add(name, r) })
		}
	}()
	return m
}

// leave commits what the member consumed and leaves the group.
func (m *groupMember) leave(t *testing.T) {
	m.stop()
	<-m.done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Errorf("%s: commit: %v", m.name, err)
	}
	m.cl.Close() // LeaveGroup
}

// TestGroupThreeMembersSixPartitions: members of one cooperative-sticky
// group join and leave while records arrive; every record is consumed,
// the group's committed offsets reach the log end and, being Pulse
// cursors, survive a restart of Pulse.
func TestGroupThreeMembersSixPartitions(t *testing.T) {
	dir := t.TempDir()
	p := startPulse(t, dir, DefaultOptions())
	if err := p.eng.CreateTopic("six", engine.TopicConfig{Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	prod := kgoClient(t, p.addr)
	produce := func(from, n int) {
		var rs []*kgo.Record
		for i := from; i < from+n; i++ {
			rs = append(rs, &kgo.Record{Topic: "six", Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)})
		}
		if err := prod.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	hwms := func() []int64 {
		info, err := p.eng.Describe("six")
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, len(info.Partitions))
		for i, pi := range info.Partitions {
			out[i] = pi.HWM
		}
		return out
	}
	seen := &seenSet{offs: map[int32]map[int64]bool{}, by: map[string]int{}}
	waitAll := func(what string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !seen.complete(hwms()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not every record consumed: %v", what, seen.by)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	adm := kadm.NewClient(prod)
	waitMembers := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			gs, err := adm.DescribeGroups(context.Background(), "six-group")
			g := gs["six-group"]
			if err == nil && g.State == "Stable" && len(g.Members) == n {
				assigned := 0
				for _, m := range g.Members {
					if c, ok := m.Assigned.AsConsumer(); ok {
						for _, tp := range c.Topics {
							assigned += len(tp.Partitions)
						}
					}
				}
				if assigned == 6 {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("group never became stable with %d members owning 6 partitions: %+v %v", n, g, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	produce(0, 300)
	a := startMember(t, p.addr, "six-group", "six", "a", seen)
	waitMembers(1)
	b := startMember(t, p.addr, "six-group", "six", "b", seen)
	c := startMember(t, p.addr, "six-group", "six", "c", seen)
	produce(300, 300)
	waitMembers(3)
	produce(600, 300)
	waitAll("three members")
	b.leave(t)
	produce(900, 300)
	waitMembers(2)
	waitAll("after b left")
	a.leave(t)
	c.leave(t)

	end := hwms()
	t.Logf("records per member: %v, log ends %v", seen.by, end)
	for _, name := range []string{"a", "c"} {
		if seen.by[name] == 0 {
			t.Errorf("member %s consumed nothing: the group never shared the partitions", name)
		}
	}
	// The committed offsets are the Pulse cursors, and survive a restart.
	p.stop(t)
	p2 := startPulse(t, dir, DefaultOptions())
	offs, err := kadm.NewClient(kgoClient(t, p2.addr)).FetchOffsets(context.Background(), "six-group")
	if err != nil {
		t.Fatal(err)
	}
	for part, hwm := range end {
		o, ok := offs.Lookup("six", int32(part))
		if !ok || o.At != hwm {
			t.Errorf("partition %d: committed %+v after restart, want %d", part, o, hwm)
		}
		cur, ok, err := p2.eng.Cursor("six-group", "six", part)
		if err != nil || !ok || cur != hwm {
			t.Errorf("partition %d: cursor %d %v %v, want %d", part, cur, ok, err, hwm)
		}
	}
}
