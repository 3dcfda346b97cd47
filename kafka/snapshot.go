package kafka

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka/cluster/clusterinfo"
)

// cursorSet is every consumer cursor of the engine, by consumer (group)
// name, with the HWM of each topic's partitions. Kafka groups' committed
// offsets and websocket consumers' cursors are the same cursors, so a group
// that only committed (or a websocket consumer) is a group to Kafka too: an
// Empty one.
type cursorSet struct {
	byGroup map[string][]engine.ConsumerInfo // sorted by topic, then partition
	hwm     map[string][]int64               // topic → HWM per partition
}

// cursors reads every cursor of every topic. It takes no coordinator lock.
func (s *Server) cursors() cursorSet {
	cs := cursorSet{byGroup: map[string][]engine.ConsumerInfo{}, hwm: map[string][]int64{}}
	infos, _ := s.eng.Topics() // sorted by name
	for _, ti := range infos {
		hwm := make([]int64, len(ti.Partitions))
		for i, p := range ti.Partitions {
			hwm[i] = p.HWM
		}
		cs.hwm[ti.Name] = hwm
		list, err := s.eng.Consumers(ti.Name)
		if err != nil {
			continue // deleted since Topics
		}
		for _, c := range list {
			cs.byGroup[c.Consumer] = append(cs.byGroup[c.Consumer], c)
		}
	}
	return cs
}

// GroupSnapshot describes, read-only, every consumer group this listener
// knows, sorted by name: the groups it coordinates (state, generation
// protocol, members with client id, host and assignment) and every
// consumer with a committed cursor (a Kafka group whose members left, an
// admin tool's commit, a websocket consumer), which Kafka lists as Empty.
// Partitions are the group's committed offsets with HWM and lag
// (HWM − committed, never below 0) and the member assigned each one.
func (s *Server) GroupSnapshot() []clusterinfo.Group {
	cs := s.cursors()
	c := s.groups
	c.mu.Lock()
	byName := map[string]*clusterinfo.Group{}
	type topicPartition struct {
		topic string
		p     int
	}
	assigned := map[string]map[topicPartition]string{} // group → partition → member id
	for name, g := range c.groups {
		out := &clusterinfo.Group{Name: name, State: g.state, Protocol: g.protocol}
		ids := make([]string, 0, len(g.members))
		for id := range g.members {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			m := g.members[id]
			mem := clusterinfo.Member{ID: id, ClientID: m.clientID, Host: m.clientHost, Assigned: map[string][]int{}}
			if g.protocolType == "consumer" && len(m.assignment) > 0 {
				var a kmsg.ConsumerMemberAssignment
				if a.ReadFrom(m.assignment) == nil {
					for _, t := range a.Topics {
						for _, p := range t.Partitions {
							mem.Assigned[t.Topic] = append(mem.Assigned[t.Topic], int(p))
							if assigned[name] == nil {
								assigned[name] = map[topicPartition]string{}
							}
							assigned[name][topicPartition{t.Topic, int(p)}] = id
						}
					}
				}
			}
			out.Members = append(out.Members, mem)
		}
		byName[name] = out
	}
	c.mu.Unlock()

	for name, list := range cs.byGroup {
		g := byName[name]
		if g == nil {
			g = &clusterinfo.Group{Name: name, State: stateEmpty}
			byName[name] = g
		}
		for _, ci := range list {
			gp := clusterinfo.GroupPartition{Topic: ci.Topic, Partition: ci.Partition, Committed: ci.Offset, Lag: ci.Lag}
			if h := cs.hwm[ci.Topic]; ci.Partition < len(h) {
				gp.HWM = h[ci.Partition]
			}
			gp.Member = assigned[name][topicPartition{ci.Topic, ci.Partition}]
			g.Partitions = append(g.Partitions, gp)
		}
	}
	out := make([]clusterinfo.Group, 0, len(byName))
	for _, g := range byName {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
