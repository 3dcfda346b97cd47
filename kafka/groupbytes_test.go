package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// roundTrip sends req (at version) on c and decodes the response into resp.
func roundTrip(t *testing.T, c net.Conn, req kmsg.Request, version int16, resp kmsg.Response) {
	t.Helper()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(frame(encodeRequest(req, version))); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	resp.SetVersion(version)
	skip := 4 // correlation id
	if resp.IsFlexible() {
		skip++ // empty tagged fields
	}
	if err := resp.ReadFrom(body[skip:]); err != nil {
		t.Fatalf("%s response: %v", kmsg.NameForKey(req.Key()), err)
	}
}

// TestGroupKeepsMembersBytes: the protocol metadata a member joins with and
// the assignment its leader syncs are the member's until it rejoins, even
// though the connection they came on goes on with other requests (read into
// the same buffer): DescribeGroups, and the members' JoinGroup and SyncGroup
// answers, carry them byte for byte.
func TestGroupKeepsMembersBytes(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	c := dialRaw(t, p.addr)
	meta := bytes.Repeat([]byte("member-metadata;"), 8)
	assignment := bytes.Repeat([]byte("assignment;"), 8)

	join := rawJoin("bytes", 1000, "range", bytes.Clone(meta))
	joined := kmsg.NewPtrJoinGroupResponse()
	roundTrip(t, c, join, 3, joined) // v3: the id comes with the first join
	if joined.ErrorCode != 0 || joined.LeaderID != joined.MemberID {
		t.Fatalf("JoinGroup: error %d, member %q, leader %q", joined.ErrorCode, joined.MemberID, joined.LeaderID)
	}

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.Generation, sync.MemberID = "bytes", joined.Generation, joined.MemberID
	ga := kmsg.NewSyncGroupRequestGroupAssignment()
	ga.MemberID, ga.MemberAssignment = joined.MemberID, bytes.Clone(assignment)
	sync.GroupAssignment = append(sync.GroupAssignment, ga)
	synced := kmsg.NewPtrSyncGroupResponse()
	roundTrip(t, c, sync, 2, synced)
	if synced.ErrorCode != 0 || !bytes.Equal(synced.MemberAssignment, assignment) {
		t.Fatalf("SyncGroup: error %d, assignment %q", synced.ErrorCode, synced.MemberAssignment)
	}

	// The next request on the connection is larger than both and fills
	// the buffer they were read into.
	md := kmsg.NewPtrMetadataRequest()
	for i := range 20 {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(strings.Repeat(string(rune('a'+i)), 40))
		md.Topics = append(md.Topics, mt)
	}
	roundTrip(t, c, md, 4, kmsg.NewPtrMetadataResponse())

	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Groups = []string{"bytes"}
	described := kmsg.NewPtrDescribeGroupsResponse()
	roundTrip(t, c, describe, 0, described)
	if len(described.Groups) != 1 || len(described.Groups[0].Members) != 1 {
		t.Fatalf("DescribeGroups: %+v", described.Groups)
	}
	m := described.Groups[0].Members[0]
	if !bytes.Equal(m.ProtocolMetadata, meta) || !bytes.Equal(m.MemberAssignment, assignment) {
		t.Fatalf("DescribeGroups after another request on the member's connection:\nmetadata   %q\nwant       %q\nassignment %q\nwant       %q",
			m.ProtocolMetadata, meta, m.MemberAssignment, assignment)
	}

	// A second SyncGroup of the same generation (a retry) is answered with
	// the stored assignment.
	sync.GroupAssignment = nil
	roundTrip(t, c, sync, 2, synced)
	if synced.ErrorCode != 0 || !bytes.Equal(synced.MemberAssignment, assignment) {
		t.Fatalf("SyncGroup again: error %d, assignment %q, want %q", synced.ErrorCode, synced.MemberAssignment, assignment)
	}
}

// TestJoinWithoutCommonProtocolLeavesGroupAlone: a member whose protocols
// share none with the members of a running group is refused at its join
// with INCONSISTENT_GROUP_PROTOCOL, as in Kafka; the group does not
// rebalance and its members stay (a stray or hostile client cannot empty
// a group).
func TestJoinWithoutCommonProtocolLeavesGroupAlone(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("common", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	ctx := adminCtx(t)
	produceKgo(t, p.addr, "common", "x", 5, kgo.NoCompression())
	cl := kgoClient(t, p.addr, kgo.ConsumerGroup("running"), kgo.ConsumeTopics("common"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for n := 0; n < 5; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 5", n)
		}
		n += fs.NumRecords()
	}
	adm := kadm.NewClient(kgoClient(t, p.addr))
	before := describeOne(t, adm, "running")
	if before.State != stateStable || len(before.Members) != 1 {
		t.Fatalf("group before: %s with %d members", before.State, len(before.Members))
	}

	c := dialRaw(t, p.addr)
	join := rawJoin("running", 60000, "nobody-else-has-this", []byte{0, 0})
	joined := kmsg.NewPtrJoinGroupResponse()
	roundTrip(t, c, join, 5, joined)
	if joined.ErrorCode == errMemberIDRequired {
		join.MemberID = joined.MemberID // as a client does (KIP-394)
		roundTrip(t, c, join, 5, joined)
	}
	if joined.ErrorCode != errInconsistentGroupProtocol {
		t.Fatalf("JoinGroup without a common protocol: error %d, want INCONSISTENT_GROUP_PROTOCOL", joined.ErrorCode)
	}
	after := describeOne(t, adm, "running")
	if after.State != stateStable || len(after.Members) != 1 || after.Members[0].MemberID != before.Members[0].MemberID {
		t.Fatalf("group after the refused join: %s with %+v, want %s with member %s", after.State, after.Members, stateStable, before.Members[0].MemberID)
	}
}

func describeOne(t *testing.T, adm *kadm.Client, group string) kadm.DescribedGroup {
	t.Helper()
	dg, err := adm.DescribeGroups(adminCtx(t), group)
	if err != nil {
		t.Fatal(err)
	}
	return dg[group]
}

// TestPendingJoinsDoNotPinGroups: JoinGroup v4+ without a member id hands
// out an id and creates the group (no members yet). Past maxGroups such
// groups are forgotten like any group without members, however long the
// rebalance timeout the joins asked for, so joins that never come back
// cannot grow the coordinator without bound.
func TestPendingJoinsDoNotPinGroups(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	c := dialRaw(t, p.addr)
	join := rawJoin("", math.MaxInt32, "range", nil)
	joined := kmsg.NewPtrJoinGroupResponse()
	const n = maxGroups + 50
	for i := range n {
		join.Group = fmt.Sprintf("pending-%d", i)
		roundTrip(t, c, join, 5, joined)
		if joined.ErrorCode != errMemberIDRequired {
			t.Fatalf("join %d: error %d, want MEMBER_ID_REQUIRED", i, joined.ErrorCode)
		}
	}
	p.srv.groups.sweep(time.Now())
	p.srv.groups.mu.Lock()
	kept := len(p.srv.groups.groups)
	p.srv.groups.mu.Unlock()
	if kept > maxGroups {
		t.Fatalf("%d groups kept after a sweep, want at most %d", kept, maxGroups)
	}
}

// TestPendingMemberIDsBounded: ids handed out by MEMBER_ID_REQUIRED that
// never join are bounded per group (maxPendingMembers): past it the oldest
// is forgotten, so a client asking again and again cannot grow a group
// without bound, and the latest id still joins.
func TestPendingMemberIDsBounded(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	c := dialRaw(t, p.addr)
	join := rawJoin("asking", 1000, "range", nil)
	joined := kmsg.NewPtrJoinGroupResponse()
	var first, last string
	for i := range maxPendingMembers + 20 {
		roundTrip(t, c, join, 5, joined)
		if joined.ErrorCode != errMemberIDRequired {
			t.Fatalf("join %d: error %d, want MEMBER_ID_REQUIRED", i, joined.ErrorCode)
		}
		if i == 0 {
			first = joined.MemberID
		}
		last = joined.MemberID
	}
	p.srv.groups.mu.Lock()
	pending := len(p.srv.groups.groups["asking"].pending)
	p.srv.groups.mu.Unlock()
	if pending > maxPendingMembers {
		t.Fatalf("%d member ids pending, want at most %d", pending, maxPendingMembers)
	}
	join.MemberID = first
	roundTrip(t, c, join, 5, joined)
	if joined.ErrorCode != errUnknownMemberID {
		t.Fatalf("join with the oldest, forgotten id: error %d, want UNKNOWN_MEMBER_ID", joined.ErrorCode)
	}
	join.MemberID = last
	roundTrip(t, c, join, 5, joined)
	if joined.ErrorCode != 0 || joined.MemberID != last {
		t.Fatalf("join with the latest id: error %d, member %q", joined.ErrorCode, joined.MemberID)
	}
}

// dialRaw opens a plain TCP connection to the listener at addr for
// hand-made requests (roundTrip), closed at cleanup.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawJoin is a JoinGroup of a consumer with a 30 s session, the given
// rebalance timeout and one protocol.
func rawJoin(group string, rebalanceMillis int32, protocol string, meta []byte) *kmsg.JoinGroupRequest {
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType = group, "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 30000, rebalanceMillis
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name, proto.Metadata = protocol, meta
	join.Protocols = append(join.Protocols, proto)
	return join
}
