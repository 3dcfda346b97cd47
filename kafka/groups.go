package kafka

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group states, named as Kafka's DescribeGroups names them.
const (
	stateEmpty               = "Empty"
	statePreparingRebalance  = "PreparingRebalance"
	stateCompletingRebalance = "CompletingRebalance"
	stateStable              = "Stable"
	stateDead                = "Dead"
)

// Session timeouts Pulse accepts (Kafka's group.min/max.session.timeout.ms,
// with a lower floor for quick local tests).
const (
	minSessionTimeout = time.Second
	maxSessionTimeout = 30 * time.Minute
	sweepInterval     = 100 * time.Millisecond

	// maxGroups bounds the groups kept in memory: past it, empty groups
	// are forgotten (DescribeGroups then calls them Dead).
	maxGroups = 10000

	// maxPendingMembers bounds a group's member ids handed out by
	// MEMBER_ID_REQUIRED that have not joined yet: past it the one that
	// expires first is forgotten (its join gets UNKNOWN_MEMBER_ID).
	maxPendingMembers = 1000
)

// coordinator runs the consumer groups: join, sync, heartbeat and leave,
// with generations, session and rebalance timeouts. Assignment is the
// clients' (the leader's assignor runs client-side; Pulse relays it). Group
// membership lives in memory; committed offsets are engine cursors.
type coordinator struct {
	s *Server

	// mu guards groups and everything in them.
	mu     sync.Mutex
	groups map[string]*group

	once  sync.Once
	stopC chan struct{}
	done  chan struct{}
}

type group struct {
	name         string
	state        string
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	pending      map[string]time.Time // member ids handed out by MEMBER_ID_REQUIRED, until they join
	deadline     time.Time            // end of the current join phase
}

type member struct {
	id, clientID, clientHost string
	instanceID               *string
	protocols                []kmsg.JoinGroupRequestProtocol
	session, rebalance       time.Duration
	expires                  time.Time // session deadline, pushed by heartbeats
	joined                   bool      // rejoined in the current join phase
	joinC                    chan *kmsg.JoinGroupResponse
	syncC                    chan syncResult
	assignment               []byte
}

type syncResult struct {
	code       int16
	assignment []byte
}

func newCoordinator(s *Server) *coordinator {
	return &coordinator{s: s, groups: map[string]*group{}, stopC: make(chan struct{}), done: make(chan struct{})}
}

// start runs the session and rebalance timer sweep.
func (c *coordinator) start() {
	c.once.Do(func() {
		go func() {
			defer close(c.done)
			t := time.NewTicker(sweepInterval)
			defer t.Stop()
			for {
				select {
				case <-c.stopC:
					return
				case now := <-t.C:
					c.sweep(now)
				}
			}
		}()
	})
}

func (c *coordinator) stop() {
	started := false
	c.once.Do(func() { close(c.done) }) // never started: nothing to wait for
	select {
	case <-c.stopC:
	default:
		close(c.stopC)
		started = true
	}
	if started {
		<-c.done
	}
}

// sweep expires members whose session ended and join phases whose
// rebalance timeout passed.
func (c *coordinator) sweep(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, g := range c.groups {
		if len(c.groups) > maxGroups && len(g.members) == 0 {
			// Forgotten; its committed offsets stay. Ids handed out by
			// MEMBER_ID_REQUIRED go too (such a join comes back to
			// UNKNOWN_MEMBER_ID and starts over), or joins that never
			// return would keep groups past the bound.
			delete(c.groups, name)
			continue
		}
		for id, exp := range g.pending {
			if now.After(exp) {
				delete(g.pending, id)
			}
		}
		expired := false
		for id, m := range g.members {
			if m.joinC == nil && now.After(m.expires) {
				c.removeLocked(g, id)
				expired = true
			}
		}
		switch {
		case expired && len(g.members) == 0:
			g.generation++
			g.state, g.protocol, g.leader = stateEmpty, "", ""
		case expired:
			c.rebalanceLocked(g, now)
		}
		if g.state == statePreparingRebalance && now.After(g.deadline) {
			c.completeJoinLocked(g, now)
		}
	}
}

func newMemberID(clientID string) string {
	b := make([]byte, 8)
	rand.Read(b)
	if clientID == "" {
		clientID = "member"
	}
	return clientID + "-" + hex.EncodeToString(b)
}

func (c *coordinator) join(r *kmsg.JoinGroupRequest, clientID, clientHost string) *kmsg.JoinGroupResponse {
	resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation = -1
	fail := func(code int16) *kmsg.JoinGroupResponse {
		resp.ErrorCode = code
		return resp
	}
	if r.Group == "" {
		return fail(errInvalidGroupID)
	}
	session := time.Duration(r.SessionTimeoutMillis) * time.Millisecond
	if session < minSessionTimeout || session > maxSessionTimeout {
		return fail(errInvalidSessionTimeout)
	}
	rebalance := session
	if r.GetVersion() >= 1 {
		rebalance = time.Duration(r.RebalanceTimeoutMillis) * time.Millisecond
	}
	if len(r.Protocols) == 0 || r.ProtocolType == "" {
		return fail(errInconsistentGroupProtocol)
	}
	now := time.Now()

	c.mu.Lock()
	g := c.groups[r.Group]
	if g == nil {
		g = &group{name: r.Group, state: stateEmpty, members: map[string]*member{}, pending: map[string]time.Time{}}
		c.groups[r.Group] = g
	}
	if len(g.members) > 0 && g.protocolType != r.ProtocolType || !sharesProtocol(g, r.MemberID, r.Protocols) {
		// As in Kafka, the joiner is refused and the group goes on: a
		// member with nothing in common cannot make it rebalance.
		c.mu.Unlock()
		return fail(errInconsistentGroupProtocol)
	}
	id := r.MemberID
	m := g.members[id]
	switch {
	case id == "" && r.GetVersion() >= 4:
		// KIP-394: hand out an id and ask the member to join with it.
		id = newMemberID(clientID)
		if len(g.pending) >= maxPendingMembers {
			forgetFirstPending(g)
		}
		g.pending[id] = now.Add(rebalance + session)
		c.mu.Unlock()
		resp.MemberID = id
		return fail(errMemberIDRequired)
	case id == "":
		id = newMemberID(clientID)
	case m == nil:
		if _, ok := g.pending[id]; !ok {
			c.mu.Unlock()
			return fail(errUnknownMemberID)
		}
	}
	delete(g.pending, id)
	if m == nil {
		m = &member{id: id}
		g.members[id] = m
	}
	if len(g.members) == 1 {
		g.protocolType = r.ProtocolType
	}
	m.clientID, m.clientHost, m.instanceID = clientID, clientHost, r.InstanceID
	// The request's byte fields point into the connection's read buffer,
	// which the next request on it overwrites: the member keeps copies.
	m.protocols = make([]kmsg.JoinGroupRequestProtocol, len(r.Protocols))
	for i, p := range r.Protocols {
		p.Metadata = bytes.Clone(p.Metadata)
		m.protocols[i] = p
	}
	m.session, m.rebalance = session, rebalance
	m.expires = now.Add(session)
	if m.joinC != nil {
		// The member rejoined while its previous join was waiting:
		// the old one is answered as Kafka does, with this error.
		m.joinC <- &kmsg.JoinGroupResponse{ErrorCode: errUnknownMemberID, Generation: -1}
	}
	joinC := make(chan *kmsg.JoinGroupResponse, 1)
	m.joinC = joinC
	m.joined = true
	if g.state != statePreparingRebalance {
		c.rebalanceLocked(g, now)
	} else {
		g.deadline = later(g.deadline, now.Add(rebalance))
		c.maybeCompleteLocked(g, now)
	}
	c.mu.Unlock()

	select {
	case out := <-joinC:
		out.SetVersion(r.GetVersion())
		return out
	case <-c.s.ctx.Done():
		return fail(errCoordinatorNotAvailable)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// rebalanceLocked starts a join phase: every member must rejoin within the
// largest rebalance timeout; syncs waiting are told to rejoin.
func (c *coordinator) rebalanceLocked(g *group, now time.Time) {
	if g.state != statePreparingRebalance {
		g.state = statePreparingRebalance
		g.deadline = now
		for _, m := range g.members {
			if m.joinC == nil {
				m.joined = false
			}
			if m.syncC != nil {
				m.syncC <- syncResult{code: errRebalanceInProgress}
				m.syncC = nil
			}
		}
	}
	for _, m := range g.members {
		g.deadline = later(g.deadline, now.Add(m.rebalance))
	}
	c.maybeCompleteLocked(g, now)
}

// maybeCompleteLocked ends the join phase once every member rejoined.
func (c *coordinator) maybeCompleteLocked(g *group, now time.Time) {
	for _, m := range g.members {
		if !m.joined {
			return
		}
	}
	c.completeJoinLocked(g, now)
}

// completeJoinLocked ends the join phase: members that did not rejoin are
// dropped, a protocol every member supports is chosen, the generation
// moves on and every waiting join is answered (the leader with the members).
func (c *coordinator) completeJoinLocked(g *group, now time.Time) {
	for id, m := range g.members {
		if !m.joined {
			c.removeLocked(g, id)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.state, g.protocol, g.leader = stateEmpty, "", ""
		return
	}
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if _, ok := g.members[g.leader]; !ok {
		g.leader = ids[0]
	}
	g.protocol = ""
	for _, p := range g.members[g.leader].protocols {
		all := true
		for _, m := range g.members {
			if protocolMeta(m, p.Name) == nil {
				all = false
				break
			}
		}
		if all {
			g.protocol = p.Name
			break
		}
	}
	if g.protocol == "" {
		// No common protocol: everyone is told so and the group empties.
		for id, m := range g.members {
			if m.joinC != nil {
				m.joinC <- &kmsg.JoinGroupResponse{ErrorCode: errInconsistentGroupProtocol, Generation: -1}
				m.joinC = nil
			}
			delete(g.members, id)
		}
		g.state, g.leader = stateEmpty, ""
		return
	}
	g.state = stateCompletingRebalance
	for _, id := range ids {
		m := g.members[id]
		out := kmsg.NewPtrJoinGroupResponse()
		out.Generation = g.generation
		out.ProtocolType = kmsg.StringPtr(g.protocolType)
		out.Protocol = kmsg.StringPtr(g.protocol)
		out.LeaderID = g.leader
		out.MemberID = id
		if id == g.leader {
			for _, mid := range ids {
				jm := kmsg.NewJoinGroupResponseMember()
				jm.MemberID = mid
				jm.InstanceID = g.members[mid].instanceID
				jm.ProtocolMetadata = protocolMeta(g.members[mid], g.protocol)
				out.Members = append(out.Members, jm)
			}
		}
		if m.joinC != nil {
			m.joinC <- out
			m.joinC = nil
		}
		m.joined = false
		m.assignment = nil
		m.expires = now.Add(m.session)
	}
}

// forgetFirstPending drops the pending member id of g that expires first.
func forgetFirstPending(g *group) {
	var first string
	var at time.Time
	for id, exp := range g.pending {
		if first == "" || exp.Before(at) {
			first, at = id, exp
		}
	}
	delete(g.pending, first)
}

// sharesProtocol reports whether one of protocols is supported by every
// member of g other than self (the joiner's own earlier join).
func sharesProtocol(g *group, self string, protocols []kmsg.JoinGroupRequestProtocol) bool {
	for _, p := range protocols {
		all := true
		for id, m := range g.members {
			if id != self && protocolMeta(m, p.Name) == nil {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func protocolMeta(m *member, name string) []byte {
	for _, p := range m.protocols {
		if p.Name == name {
			if p.Metadata == nil {
				return []byte{}
			}
			return p.Metadata
		}
	}
	return nil
}

// removeLocked drops a member, answering anything it waits for.
func (c *coordinator) removeLocked(g *group, id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	if m.joinC != nil {
		m.joinC <- &kmsg.JoinGroupResponse{ErrorCode: errUnknownMemberID, Generation: -1}
	}
	if m.syncC != nil {
		m.syncC <- syncResult{code: errUnknownMemberID}
	}
	delete(g.members, id)
	if g.leader == id {
		g.leader = ""
	}
}

func (c *coordinator) sync(r *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
	c.mu.Lock()
	g, m := c.member(r.Group, r.MemberID)
	switch {
	case m == nil:
		resp.ErrorCode = errUnknownMemberID
	case r.Generation != g.generation:
		resp.ErrorCode = errIllegalGeneration
	case g.state == statePreparingRebalance:
		resp.ErrorCode = errRebalanceInProgress
	case g.state == stateStable:
		resp.MemberAssignment = m.assignment
	case g.state == stateCompletingRebalance && r.MemberID == g.leader:
		for _, a := range r.GroupAssignment {
			if gm := g.members[a.MemberID]; gm != nil {
				gm.assignment = bytes.Clone(a.MemberAssignment) // a.MemberAssignment is in the leader's read buffer
			}
		}
		g.state = stateStable
		for _, gm := range g.members {
			if gm.syncC != nil {
				gm.syncC <- syncResult{assignment: gm.assignment}
				gm.syncC = nil
			}
		}
		resp.MemberAssignment = m.assignment
	default: // completing, not the leader: wait for the leader's assignment
		ch := make(chan syncResult, 1)
		if m.syncC != nil {
			m.syncC <- syncResult{code: errRebalanceInProgress}
		}
		m.syncC = ch
		c.mu.Unlock()
		select {
		case res := <-ch:
			resp.ErrorCode, resp.MemberAssignment = res.code, res.assignment
		case <-c.s.ctx.Done():
			resp.ErrorCode = errCoordinatorNotAvailable
		}
		c.fillSync(r, resp)
		return resp
	}
	c.mu.Unlock()
	c.fillSync(r, resp)
	return resp
}

// member returns group name and its member id, each nil when unknown. The
// caller holds c.mu.
func (c *coordinator) member(name, id string) (*group, *member) {
	g := c.groups[name]
	if g == nil {
		return nil, nil
	}
	return g, g.members[id]
}

func (c *coordinator) fillSync(r *kmsg.SyncGroupRequest, resp *kmsg.SyncGroupResponse) {
	resp.ProtocolType, resp.Protocol = r.ProtocolType, r.Protocol
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
}

func (c *coordinator) heartbeat(r *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m := c.member(r.Group, r.MemberID)
	switch {
	case m == nil:
		resp.ErrorCode = errUnknownMemberID
	case r.Generation != g.generation:
		resp.ErrorCode = errIllegalGeneration
	default:
		m.expires = time.Now().Add(m.session)
		if g.state == statePreparingRebalance {
			resp.ErrorCode = errRebalanceInProgress
		}
	}
	return resp
}

func (c *coordinator) leave(r *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	ids := []string{r.MemberID}
	if r.GetVersion() >= 3 {
		ids = ids[:0]
		for _, m := range r.Members {
			ids = append(ids, m.MemberID)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[r.Group]
	left := false
	for i, id := range ids {
		code := errNone
		if g == nil || g.members[id] == nil {
			code = errUnknownMemberID
		} else {
			c.removeLocked(g, id)
			left = true
		}
		if r.GetVersion() >= 3 {
			lm := kmsg.NewLeaveGroupResponseMember()
			lm.MemberID = id
			lm.InstanceID = r.Members[i].InstanceID
			lm.ErrorCode = code
			resp.Members = append(resp.Members, lm)
		} else {
			resp.ErrorCode = code
		}
	}
	if left {
		now := time.Now()
		if len(g.members) == 0 {
			g.generation++
			g.state, g.protocol, g.leader = stateEmpty, "", ""
		} else {
			c.rebalanceLocked(g, now)
		}
	}
	return resp
}

// checkMember validates a commit's member and generation against the group.
// A commit without membership (generation -1, no member id: kcat, admin
// tools) is accepted while the group has no members; as in Kafka, one into
// a group with members is UNKNOWN_MEMBER_ID, so that it cannot move the
// offsets of partitions a member is consuming.
func (c *coordinator) checkMember(groupName, memberID string, generation int32) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[groupName]
	if generation < 0 && memberID == "" {
		if g != nil && len(g.members) > 0 {
			return errUnknownMemberID
		}
		return errNone
	}
	if g == nil || g.members[memberID] == nil {
		return errUnknownMemberID
	}
	if generation != g.generation {
		return errIllegalGeneration
	}
	if g.state == stateCompletingRebalance {
		return errRebalanceInProgress
	}
	return errNone
}

func (c *coordinator) describe(r *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	committed := c.s.cursors().byGroup
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range r.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = name
		g := c.groups[name]
		if g == nil {
			// A group with committed offsets and no members is Empty,
			// as Kafka says; one Pulse knows nothing of is Dead.
			rg.State = stateDead
			if len(committed[name]) > 0 {
				rg.State = stateEmpty
			}
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.State, rg.ProtocolType, rg.Protocol = g.state, g.protocolType, g.protocol
		ids := make([]string, 0, len(g.members))
		for id := range g.members {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			m := g.members[id]
			dm := kmsg.NewDescribeGroupsResponseGroupMember()
			dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = id, m.instanceID, m.clientID, m.clientHost
			if g.protocol != "" {
				dm.ProtocolMetadata = protocolMeta(m, g.protocol)
			}
			dm.MemberAssignment = m.assignment
			rg.Members = append(rg.Members, dm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func (c *coordinator) list(r *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	want := map[string]bool{}
	for _, s := range r.StatesFilter {
		want[s] = true
	}
	committed := c.s.cursors().byGroup
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.groups)+len(committed))
	for n := range c.groups {
		names = append(names, n)
	}
	for n := range committed {
		if c.groups[n] == nil {
			names = append(names, n) // offsets only: Empty, as in Kafka
		}
	}
	sort.Strings(names)
	for _, n := range names {
		state, protocolType := stateEmpty, ""
		if g := c.groups[n]; g != nil {
			state, protocolType = g.state, g.protocolType
		}
		if len(want) > 0 && !want[state] {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = n, protocolType, state
		resp.Groups = append(resp.Groups, lg)
	}
	return resp
}

// GroupInfo describes a consumer group for the terminal UI and tools.
type GroupInfo struct {
	Name       string
	State      string
	Generation int32
	Protocol   string
	Members    []string // member ids, sorted
}

// Groups lists the consumer groups Pulse coordinates, sorted by name.
func (s *Server) Groups() []GroupInfo {
	c := s.groups
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]GroupInfo, 0, len(c.groups))
	for _, g := range c.groups {
		gi := GroupInfo{Name: g.name, State: g.state, Generation: g.generation, Protocol: g.protocol}
		for id := range g.members {
			gi.Members = append(gi.Members, id)
		}
		sort.Strings(gi.Members)
		out = append(out, gi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
