package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

func joinReq(group, member string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Group, r.MemberID, r.ProtocolType = group, member, "consumer"
	r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 1000, 5000
	r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "roundrobin", Metadata: []byte("m-" + member)}, {Name: "range", Metadata: []byte("r")}}
	return r
}

func heartbeat(t *testing.T, cl *kgo.Client, group, member string, gen int32) int16 {
	t.Helper()
	r := kmsg.NewPtrHeartbeatRequest()
	r.Group, r.MemberID, r.Generation = group, member, gen
	resp, err := r.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.ErrorCode
}

// join runs the KIP-394 round trip: the first join gets MEMBER_ID_REQUIRED
// and an id, the second joins with it.
func join(t *testing.T, cl *kgo.Client, group, member string) *kmsg.JoinGroupResponse {
	t.Helper()
	resp, err := joinReq(group, member).RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if member == "" {
		if resp.ErrorCode != errMemberIDRequired || resp.MemberID == "" {
			t.Fatalf("first join: error %d, member id %q; want MEMBER_ID_REQUIRED and an id", resp.ErrorCode, resp.MemberID)
		}
		return join(t, cl, group, resp.MemberID)
	}
	return resp
}

func syncGroup(t *testing.T, cl *kgo.Client, group, member string, gen int32, assign map[string]string) *kmsg.SyncGroupResponse {
	t.Helper()
	r := kmsg.NewPtrSyncGroupRequest()
	r.Group, r.MemberID, r.Generation = group, member, gen
	for m, a := range assign {
		r.GroupAssignment = append(r.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte(a)})
	}
	resp, err := r.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// waitHeartbeat heartbeats until the answer is want.
func waitHeartbeat(t *testing.T, cl *kgo.Client, group, member string, gen int32, want int16) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code := heartbeat(t, cl, group, member, gen)
		if code == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("heartbeat of %s: error %d, never %d", member, code, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCoordinator walks a group through join, sync, a second member's join
// and its session expiry, with generations and member ids checked, and
// commits refused from a stale generation.
func TestCoordinator(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	c1, c2 := kgoClient(t, p.addr), kgoClient(t, p.addr)

	a := join(t, c1, "g", "")
	if a.ErrorCode != 0 || a.Generation != 1 || a.LeaderID != a.MemberID || len(a.Members) != 1 || *a.Protocol != "roundrobin" {
		t.Fatalf("first member: %+v", a)
	}
	if s := syncGroup(t, c1, "g", a.MemberID, 1, map[string]string{a.MemberID: "all"}); s.ErrorCode != 0 || string(s.MemberAssignment) != "all" {
		t.Fatalf("leader sync: %+v", s)
	}
	if code := heartbeat(t, c1, "g", a.MemberID, 1); code != 0 {
		t.Fatalf("heartbeat: %d", code)
	}
	if code := heartbeat(t, c1, "g", a.MemberID, 7); code != errIllegalGeneration {
		t.Fatalf("heartbeat of generation 7: %d", code)
	}
	if code := heartbeat(t, c1, "g", "nobody", 1); code != errUnknownMemberID {
		t.Fatalf("heartbeat of an unknown member: %d", code)
	}
	if code := join(t, c1, "g", "made-up").ErrorCode; code != errUnknownMemberID {
		t.Fatalf("join with an id Pulse never gave: %d", code)
	}

	// A second member's join waits until the first rejoins.
	bc := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		r, err := joinReq("g", "").RequestWith(context.Background(), c2)
		if err != nil || r.ErrorCode != errMemberIDRequired {
			bc <- nil
			return
		}
		r, _ = joinReq("g", r.MemberID).RequestWith(context.Background(), c2)
		bc <- r
	}()
	waitHeartbeat(t, c1, "g", a.MemberID, 1, errRebalanceInProgress)
	a2 := join(t, c1, "g", a.MemberID)
	b := <-bc
	if b == nil || a2.Generation != 2 || b.Generation != 2 || a2.LeaderID != a.MemberID || len(a2.Members) != 2 || len(b.Members) != 0 {
		t.Fatalf("rebalance: leader %+v, follower %+v", a2, b)
	}
	// The follower's sync waits for the leader's assignment.
	sc := make(chan *kmsg.SyncGroupResponse, 1)
	go func() {
		r := kmsg.NewPtrSyncGroupRequest()
		r.Group, r.MemberID, r.Generation = "g", b.MemberID, 2
		resp, _ := r.RequestWith(context.Background(), c2)
		sc <- resp
	}()
	syncGroup(t, c1, "g", a.MemberID, 2, map[string]string{a.MemberID: "half-a", b.MemberID: "half-b"})
	if s := <-sc; s == nil || s.ErrorCode != 0 || string(s.MemberAssignment) != "half-b" {
		t.Fatalf("follower sync: %+v", s)
	}

	// Committed offsets: a stale generation is refused and stores nothing.
	if err := p.eng.CreateTopic("ct", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	commit := func(gen int32, member string, off int64) int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.Generation, r.MemberID = "g", gen, member
		r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "ct", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: off, Metadata: kmsg.StringPtr("md")}}}}
		resp, err := r.RequestWith(context.Background(), c1)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(1, a.MemberID, 5); code != errIllegalGeneration {
		t.Fatalf("commit from generation 1: %d", code)
	}
	if _, ok, _ := p.eng.Cursor("g", "ct", 0); ok {
		t.Fatal("a refused commit stored a cursor")
	}
	// Past the log end, as Kafka allows.
	if code := commit(2, a.MemberID, 42); code != 0 {
		t.Fatalf("commit: %d", code)
	}
	if off, ok, err := p.eng.Cursor("g", "ct", 0); err != nil || !ok || off != 42 {
		t.Fatalf("cursor %d %v %v, want 42", off, ok, err)
	}
	// A commit outside any generation (an admin tool's, kcat's) while
	// the group has members is refused, as Kafka refuses it, and moves
	// nothing: only an empty group takes one.
	if code := commit(-1, "", 7); code != errUnknownMemberID {
		t.Fatalf("commit outside any generation while the group has members: %d, want UNKNOWN_MEMBER_ID", code)
	}
	if off, ok, err := p.eng.Cursor("g", "ct", 0); err != nil || !ok || off != 42 {
		t.Fatalf("after a refused commit: cursor %d %v %v, want 42", off, ok, err)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = "g"
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "ct", Partitions: []int32{0}}}
	ofr, err := of.RequestWith(context.Background(), c1)
	if err != nil || ofr.Topics[0].Partitions[0].Offset != 42 || *ofr.Topics[0].Partitions[0].Metadata != "md" {
		t.Fatalf("offset fetch: %+v %v", ofr, err)
	}

	// b stops heartbeating: its session (1 s) ends, a is told to rejoin
	// and the group goes on without b.
	waitHeartbeat(t, c1, "g", a.MemberID, 2, errRebalanceInProgress)
	a3 := join(t, c1, "g", a.MemberID)
	if a3.Generation != 3 || len(a3.Members) != 1 {
		t.Fatalf("after b's session expired: %+v", a3)
	}
	if code := heartbeat(t, c2, "g", b.MemberID, 2); code != errUnknownMemberID {
		t.Fatalf("expired member's heartbeat: %d", code)
	}

	// Leave empties the group.
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Group = "g"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: a.MemberID}}
	if resp, err := lv.RequestWith(context.Background(), c1); err != nil || resp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave: %+v %v", resp, err)
	}
	groups := p.srv.Groups()
	if len(groups) != 1 || groups[0].State != stateEmpty || len(groups[0].Members) != 0 {
		t.Fatalf("after leave: %+v", groups)
	}
	if code := commit(-1, "", 7); code != 0 {
		t.Fatalf("commit outside any generation to the empty group: %d", code)
	}
	if off, ok, err := p.eng.Cursor("g", "ct", 0); err != nil || !ok || off != 7 {
		t.Fatalf("cursor %d %v %v, want 7", off, ok, err)
	}
}
