package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/meta"
)

// maxCommitMetadata bounds a commit's metadata string (Kafka's
// offset.metadata.max.bytes).
const maxCommitMetadata = 4096

// offsetCommit stores a group's offsets as the Pulse consumer cursors of the
// same name, with their commit metadata strings, all of them in one synced
// meta.db commit. As in Kafka, an
// offset past the log end is stored as given.
func (s *Server) offsetCommit(r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	groupCode := s.groups.checkMember(r.Group, r.MemberID, r.Generation)
	if groupCode == 0 && meta.ValidateConsumerName(r.Group) != nil {
		groupCode = errInvalidGroupID
	}
	var (
		cursors  []meta.Cursor
		metadata []string
	)
	type slot struct{ t, p int }
	var slots []slot
	for ti, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		info, terr := s.eng.Describe(t.Topic)
		for pi, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case groupCode != 0:
				rp.ErrorCode = groupCode
			case terr != nil:
				rp.ErrorCode = engineErrorCode(terr)
			case p.Partition < 0 || int(p.Partition) >= len(info.Partitions):
				rp.ErrorCode = errUnknownTopicOrPartition
			case p.Metadata != nil && len(*p.Metadata) > maxCommitMetadata:
				rp.ErrorCode = errOffsetMetadataTooLarge
			case p.Offset < 0:
				rp.ErrorCode = errInvalidCommitOffsetSize
			default:
				cursors = append(cursors, meta.Cursor{Consumer: r.Group, Topic: t.Topic, Partition: int(p.Partition), Offset: p.Offset})
				md := ""
				if p.Metadata != nil {
					md = *p.Metadata
				}
				metadata = append(metadata, md)
				slots = append(slots, slot{ti, pi})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(cursors) == 0 {
		return resp
	}
	if err := s.eng.CommitCursorsMetadata(cursors, metadata); err != nil {
		code := errUnknownServerError
		switch {
		case errors.Is(err, meta.ErrTopicNotFound):
			code = errUnknownTopicOrPartition
		case errors.Is(err, meta.ErrInvalidConsumer):
			code = errInvalidGroupID
		default:
			s.opts.Logger.Error("kafka: offset commit", "group", r.Group, "err", err)
		}
		for _, sl := range slots {
			resp.Topics[sl.t].Partitions[sl.p].ErrorCode = code
		}
		return resp
	}
	return resp
}

// offsetFetch returns a group's committed offsets (-1 where none); with no
// topics named (v2+), every cursor of the group.
func (s *Server) offsetFetch(r *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	topics := r.Topics
	if topics == nil && r.GetVersion() >= 2 {
		for _, c := range s.cursors().byGroup[r.Group] {
			if n := len(topics); n == 0 || topics[n-1].Topic != c.Topic {
				t := kmsg.NewOffsetFetchRequestTopic()
				t.Topic = c.Topic
				topics = append(topics, t)
			}
			t := &topics[len(topics)-1]
			t.Partitions = append(t.Partitions, int32(c.Partition))
		}
	}
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition = p
			rp.Offset, rp.LeaderEpoch = -1, -1
			off, md, ok, err := s.eng.CursorMetadata(r.Group, t.Topic, int(p))
			switch {
			case errors.Is(err, engine.ErrTopicNotFound), errors.Is(err, engine.ErrPartitionOutOfRange):
				// Kafka answers -1 for partitions it has no offset for.
			case err != nil && meta.ValidateConsumerName(r.Group) != nil:
				// An invalid cursor name can hold no offset.
			case err != nil:
				rp.ErrorCode = engineErrorCode(err)
			case ok:
				rp.Offset, rp.Metadata = off, kmsg.StringPtr(md)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
