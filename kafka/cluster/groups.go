package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka/cluster/clusterinfo"
	"github.com/pulselog/pulse/meta"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// CommitCursor commits consumer's position on a partition as the offset of
// the consumer group named consumer (an OffsetCommit outside any
// generation, as kafka-consumer-groups --reset-offsets does): the next
// offset it will read. An offset past the HWM is engine.ErrOffsetOutOfRange;
// a name the cursor store refuses (meta.ValidateConsumerName) is
// engine.ErrInvalidConsumer, as on a data dir, and nothing is sent.
func (s *Source) CommitCursor(consumer, topic string, partition int, offset int64) error {
	if err := meta.ValidateConsumerName(consumer); err != nil {
		return fmt.Errorf("cursor %s/%s/%d: %w", consumer, topic, partition, err)
	}
	if err := s.checkPartition(topic, partition); err != nil {
		return err
	}
	_, hwm, err := s.offsets(topic, partition)
	if err != nil {
		return err
	}
	if offset < 0 || offset > hwm {
		return fmt.Errorf("%w: cursor %d for topic %s partition %d (log end %d)", engine.ErrOffsetOutOfRange, offset, topic, partition, hwm)
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: int32(partition), At: offset, LeaderEpoch: -1})
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.adm.CommitOffsets(ctx, consumer, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return mapErr(fmt.Sprintf("cursor %s/%s/%d", consumer, topic, partition), err)
	}
	return nil
}

// Cursor returns the committed offset of group consumer on a partition; ok
// is false when the group committed none there.
func (s *Source) Cursor(consumer, topic string, partition int) (int64, bool, error) {
	if err := s.checkPartition(topic, partition); err != nil {
		return 0, false, err
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.adm.FetchOffsets(ctx, consumer)
	if err != nil {
		return 0, false, mapErr(fmt.Sprintf("cursor %s/%s/%d", consumer, topic, partition), err)
	}
	o, ok := resp.Lookup(topic, int32(partition))
	if !ok || o.Err != nil || o.At < 0 {
		return 0, false, nil
	}
	return o.At, true, nil
}

// Consumers lists every group's committed offset on topic with its lag
// (HWM − committed), sorted by group then partition.
func (s *Source) Consumers(topic string) ([]engine.ConsumerInfo, error) {
	if _, err := s.partitions(topic); err != nil {
		return nil, err
	}
	gs, err := s.Groups()
	if err != nil {
		return nil, err
	}
	var out []engine.ConsumerInfo
	for _, g := range gs {
		for _, gp := range g.Partitions {
			if gp.Topic == topic {
				out = append(out, engine.ConsumerInfo{Consumer: g.Name, Topic: topic, Partition: gp.Partition, Offset: gp.Committed, Lag: gp.Lag})
			}
		}
	}
	return out, nil
}

// Groups describes every consumer group: state, members with their
// assignment, committed offsets and lag (HWM − committed), sorted by name.
func (s *Source) Groups() ([]clusterinfo.Group, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	listed, err := s.adm.ListGroups(ctx)
	if err != nil {
		return nil, mapErr("list groups", err)
	}
	return s.describeGroups(ctx, listed.Groups())
}

// describeGroups is Groups for the groups named.
func (s *Source) describeGroups(ctx context.Context, names []string) ([]clusterinfo.Group, error) {
	if len(names) == 0 {
		return nil, nil
	}
	lags, err := s.adm.Lag(ctx, names...)
	if err != nil {
		return nil, mapErr("group lag", err)
	}
	sort.Strings(names)
	out := make([]clusterinfo.Group, 0, len(names))
	for _, n := range names {
		l, ok := lags[n]
		if !ok {
			continue
		}
		g := clusterinfo.Group{Name: n, State: l.State, Protocol: l.Protocol}
		if e := l.Error(); e != nil {
			g.Err = e.Error()
		}
		for _, m := range l.Members {
			mem := clusterinfo.Member{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost, Assigned: map[string][]int{}}
			if ca, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range ca.Topics {
					for _, p := range t.Partitions {
						mem.Assigned[t.Topic] = append(mem.Assigned[t.Topic], int(p))
					}
				}
			}
			g.Members = append(g.Members, mem)
		}
		for _, ml := range l.Lag.Sorted() {
			if ml.Commit.At < 0 {
				continue // assigned but never committed
			}
			gp := clusterinfo.GroupPartition{Topic: ml.Topic, Partition: int(ml.Partition), Committed: ml.Commit.At, HWM: ml.End.Offset, Lag: ml.Lag}
			if ml.Lag < 0 {
				gp.Lag = max(0, ml.End.Offset-ml.Commit.At)
			}
			if ml.Member != nil {
				gp.Member = ml.Member.MemberID
			}
			g.Partitions = append(g.Partitions, gp)
		}
		out = append(out, g)
	}
	return out, nil
}

// DeleteConsumer deletes the committed offsets of the consumer group named
// consumer on topic (OffsetDelete), or on every topic when topic is ""
// (DeleteGroups), as engine.DeleteConsumer deletes a consumer's cursors,
// and returns each one deleted with its offset and lag as they were;
// dryRun lists them and deletes nothing. A group without an offset (on
// topic) is engine.ErrConsumerNotFound, one with live members
// engine.ErrConsumerActive (Kafka's NON_EMPTY_GROUP), a missing topic
// engine.ErrTopicNotFound, a name the cursor store refuses
// engine.ErrInvalidConsumer; nothing changes then.
func (s *Source) DeleteConsumer(consumer, topic string, dryRun bool) ([]engine.ConsumerInfo, error) {
	if err := meta.ValidateConsumerName(consumer); err != nil {
		return nil, err
	}
	if topic != "" {
		if _, err := s.partitions(topic); err != nil {
			return nil, err
		}
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	gs, err := s.describeGroups(ctx, []string{consumer})
	if err != nil {
		return nil, err
	}
	var (
		out  []engine.ConsumerInfo
		live int
		set  = kadm.TopicsSet{}
	)
	for _, g := range gs {
		if g.Name != consumer {
			continue
		}
		live = len(g.Members)
		for _, gp := range g.Partitions {
			if topic == "" || gp.Topic == topic {
				out = append(out, engine.ConsumerInfo{Consumer: consumer, Topic: gp.Topic, Partition: gp.Partition, Offset: gp.Committed, Lag: gp.Lag})
				set.Add(gp.Topic, int32(gp.Partition))
			}
		}
	}
	// Live members first, as on a data dir (engine.DeleteConsumer).
	switch {
	case live > 0:
		return nil, fmt.Errorf("%w: consumer group %q has %d live members: stop its consumers first", engine.ErrConsumerActive, consumer, live)
	case len(out) == 0 && topic != "":
		return nil, fmt.Errorf("%w: %q has no committed offset on topic %q", engine.ErrConsumerNotFound, consumer, topic)
	case len(out) == 0:
		return nil, fmt.Errorf("%w: %q has no committed offset", engine.ErrConsumerNotFound, consumer)
	case dryRun:
		return out, nil
	}
	if topic == "" {
		_, err = s.adm.DeleteGroup(ctx, consumer)
	} else {
		var resp kadm.DeleteOffsetsResponses
		if resp, err = s.adm.DeleteOffsets(ctx, consumer, set); err == nil {
			err = resp.Error()
		}
	}
	if errors.Is(err, kerr.NonEmptyGroup) || errors.Is(err, kerr.GroupSubscribedToTopic) {
		return nil, fmt.Errorf("%w: consumer group %q: %w", engine.ErrConsumerActive, consumer, err)
	}
	if err != nil {
		return nil, mapErr(fmt.Sprintf("delete consumer group %q offsets", consumer), err)
	}
	return out, nil
}

// ConsumerMembers lists the live members of the consumer group named
// consumer (DescribeGroups), for the websocket API's consumers reply; none
// when the group has no members, does not exist or cannot be described.
func (s *Source) ConsumerMembers(consumer string) []engine.ConsumerMember {
	if consumer == "" {
		return nil
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	ds, err := s.adm.DescribeGroups(ctx, consumer)
	if err != nil {
		return nil
	}
	g, ok := ds[consumer]
	if !ok || g.Err != nil {
		return nil
	}
	var out []engine.ConsumerMember
	for _, m := range g.Members {
		out = append(out, engine.ConsumerMember{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
	}
	return out
}
