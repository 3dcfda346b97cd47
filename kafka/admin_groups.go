package kafka

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/meta"
)

// Kafka error codes of group deletion (docs/kafka.md).
const (
	errNonEmptyGroup          int16 = 68
	errGroupIDNotFound        int16 = 69
	errGroupSubscribedToTopic int16 = 86
)

// ConsumerMembers is engine.MemberSource: the live members of the group
// named consumer, so that the engine (and the websocket API through it)
// shows them and refuses to delete the group's cursors under them.
func (s *Server) ConsumerMembers(consumer string) []engine.ConsumerMember {
	c := s.groups
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.membersLocked(consumer)
}

// membersLocked lists the members of group name, sorted by id. The caller
// holds c.mu.
func (c *coordinator) membersLocked(name string) []engine.ConsumerMember {
	g := c.groups[name]
	if g == nil {
		return nil
	}
	out := make([]engine.ConsumerMember, 0, len(g.members))
	for id, m := range g.members {
		out = append(out, engine.ConsumerMember{ID: id, ClientID: m.clientID, Host: m.clientHost})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// forgetGroupLocked drops the coordinator's membership state of a deleted
// group (its commit metadata is stored with its cursors in meta.db, and goes
// with them). The caller holds c.mu.
func (c *coordinator) forgetGroupLocked(name string) {
	delete(c.groups, name)
}

// deleteGroups deletes groups and their committed offsets (their Pulse
// consumer cursors, in one synced commit each), as Kafka's DeleteGroups: a
// group with live members is NON_EMPTY_GROUP, one with neither members
// nor offsets GROUP_ID_NOT_FOUND, and nothing of it changes then. The
// coordinator's lock is held from the member check to the delete, so no
// member joins in between.
func (s *Server) deleteGroups(r *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	c := s.groups
	for _, name := range r.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = name
		code, msg := func() (int16, string) {
			if meta.ValidateConsumerName(name) != nil {
				return errInvalidGroupID, fmt.Sprintf("group id %q is not a valid Pulse consumer name", name)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if ms := c.membersLocked(name); len(ms) > 0 {
				return errNonEmptyGroup, fmt.Sprintf("group %s has %d live members (%s first): they must leave before it is deleted", name, len(ms), ms[0].ID)
			}
			known := c.groups[name] != nil
			_, err := s.eng.DeleteCursors(name, "", nil)
			switch {
			case errors.Is(err, engine.ErrConsumerNotFound) && known:
			case errors.Is(err, engine.ErrConsumerNotFound):
				return errGroupIDNotFound, "group " + name + " has no members and no committed offsets"
			case err != nil:
				return errUnknownServerError, err.Error()
			}
			c.forgetGroupLocked(name)
			return errNone, ""
		}()
		rg.ErrorCode = code
		if msg != "" && r.Version >= 3 {
			rg.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// offsetDelete deletes some committed offsets of a group (Kafka's
// OffsetDelete). Pulse refuses it while the group has live members
// (GROUP_SUBSCRIBED_TO_TOPIC on every partition asked, where Kafka checks
// the members' subscriptions): a group's offsets change under no member.
// A partition without a committed offset is not an error, as in Kafka.
func (s *Server) offsetDelete(r *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if meta.ValidateConsumerName(r.Group) != nil {
		resp.ErrorCode = errInvalidGroupID
		return resp
	}
	c := s.groups
	c.mu.Lock()
	defer c.mu.Unlock()
	live := len(c.membersLocked(r.Group)) > 0
	committed := false
	for _, rt := range r.Topics {
		ot := kmsg.NewOffsetDeleteResponseTopic()
		ot.Topic = rt.Topic
		info, derr := s.eng.Describe(rt.Topic)
		var doomed []int // the partitions to delete, in one commit per topic
		for _, rp := range rt.Partitions {
			op := kmsg.NewOffsetDeleteResponseTopicPartition()
			op.Partition = rp.Partition
			switch {
			case derr != nil || rp.Partition < 0 || int(rp.Partition) >= len(info.Partitions):
				op.ErrorCode = errUnknownTopicOrPartition
			case live:
				op.ErrorCode = errGroupSubscribedToTopic
			default:
				doomed = append(doomed, int(rp.Partition))
			}
			ot.Partitions = append(ot.Partitions, op)
		}
		if len(doomed) > 0 {
			_, err := s.eng.DeleteCursors(r.Group, rt.Topic, doomed)
			switch {
			case err == nil:
				committed = true
			case errors.Is(err, engine.ErrConsumerNotFound): // none had an offset: not an error
			default:
				for i := range ot.Partitions {
					if ot.Partitions[i].ErrorCode == errNone {
						ot.Partitions[i].ErrorCode = engineErrorCode(err)
					}
				}
			}
		}
		resp.Topics = append(resp.Topics, ot)
	}
	if !committed && !live && c.groups[r.Group] == nil && !s.hasCursors(r.Group) {
		resp.ErrorCode, resp.Topics = errGroupIDNotFound, nil
	}
	return resp
}

// hasCursors reports whether consumer has a committed cursor on any topic.
func (s *Server) hasCursors(consumer string) bool {
	return len(s.cursors().byGroup[consumer]) > 0
}
