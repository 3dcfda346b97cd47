package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/kafka/cluster/clusterinfo"
)

// TopicPlacer describes a topic as a cluster holds it: replication factor,
// configs, and per partition leader, replicas, ISR, log start, last stable
// offset, HWM and size (a Kafka cluster source).
type TopicPlacer interface {
	ClusterTopic(name string) (clusterinfo.Topic, error)
}

// addPlacementCommand registers ":placement [TOPIC]" (default: the topic
// of the partitions screen on top).
func addPlacementCommand(cmds map[string]command) {
	cmds["placement"] = command{usage: "placement [TOPIC]  a cluster topic's leaders, replicas, ISR, LSO and configs", run: func(m *Model, args []string) tea.Cmd {
		topic := ""
		if len(args) > 0 {
			topic = args[0]
		} else if len(m.stack) > 0 {
			if ps, ok := m.stack[len(m.stack)-1].(*partitionsScreen); ok {
				topic = ps.topic
			}
		}
		if topic == "" {
			return errStatus(fmt.Errorf("%w: usage :placement TOPIC", ErrBadInput))
		}
		if err := checkTopicArg(topic); err != nil {
			return err
		}
		return push(newPlacementScreen(m.c, topic))
	}}
}

type placementMsg struct {
	to
	t   clusterinfo.Topic
	err error
}

// placementScreen shows one cluster topic's partitions as the brokers hold
// them.
type placementScreen struct {
	c      *Common
	id     int
	topic  string
	table  *table
	info   clusterinfo.Topic
	loaded bool
	err    error
	w, h   int
}

func newPlacementScreen(c *Common, topic string) *placementScreen {
	s := &placementScreen{c: c, id: c.newID(), topic: topic}
	s.table = newTable(c, []column{
		{Title: "P", Width: 4, Right: true},
		{Title: "LEADER", Width: 6, Right: true},
		{Title: "REPLICAS", Width: 12},
		{Title: "ISR", Width: 12},
		{Title: "LOG START", Width: 11, Right: true, Drop: 3},
		{Title: "LSO", Width: 11, Right: true},
		{Title: "HWM", Width: 11, Right: true},
		{Title: "SIZE", Width: 10, Right: true, Drop: 2},
		{Title: "ERROR", Width: 8, Flex: true},
	}, "no partitions")
	return s
}

func (s *placementScreen) ID() int            { return s.id }
func (s *placementScreen) Crumb() string      { return s.topic + " placement" }
func (s *placementScreen) Init() tea.Cmd      { return s.load() }
func (s *placementScreen) Refresh() tea.Cmd   { return s.load() }
func (s *placementScreen) SetFilter(f string) { s.table.SetFilter(f) }
func (s *placementScreen) Filter() string     { return s.table.Filter() }

func (s *placementScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.SetSize(w, max(h-3, 3))
}

func (s *placementScreen) load() tea.Cmd {
	tp, ok := s.c.Src.(TopicPlacer)
	if !ok {
		return nil
	}
	id, topic := s.id, s.topic
	return func() tea.Msg {
		t, err := tp.ClusterTopic(topic)
		return placementMsg{to: to{id}, t: t, err: err}
	}
}

func (s *placementScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case placementMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.info = msg.t
			s.rebuild()
		}
	case tea.KeyMsg:
		s.table.Update(msg)
	}
	return nil
}

func ids(xs []int32) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

func (s *placementScreen) rebuild() {
	rows := make([]row, 0, len(s.info.Partitions))
	for _, p := range s.info.Partitions {
		leader := fmt.Sprint(p.Leader)
		if p.Leader < 0 {
			leader = "none"
		}
		errText := "-"
		if p.Err != "" {
			errText = p.Err
		}
		rows = append(rows, row{Key: fmt.Sprint(p.Partition), Cells: []string{
			fmt.Sprintf("p%d", p.Partition), leader, ids(p.Replicas), ids(p.ISR),
			fmt.Sprint(p.LogStart), fmt.Sprint(p.LSO), fmt.Sprint(p.HWM),
			orNA(p.Size >= 0, func() string { return humanBytes(p.Size) }), errText,
		}})
	}
	s.table.SetRows(rows)
}

func (s *placementScreen) View() string {
	st := s.c.Styles
	if _, ok := s.c.Src.(TopicPlacer); !ok {
		return wrapIndented(st.Muted, "placement: "+ErrNotAvailable.Error()+" (a local data dir has one copy of each partition)", s.w)
	}
	if s.err != nil {
		return wrapIndented(st.StatusError, "placement: "+s.err.Error(), s.w)
	}
	if !s.loaded {
		return st.Muted.Render("  loading " + s.topic + "…")
	}
	keys := make([]string, 0, len(s.info.Configs))
	for k := range s.info.Configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cfg := make([]string, 0, len(keys))
	for _, k := range keys {
		cfg = append(cfg, k+"="+s.info.Configs[k])
	}
	conf := "none"
	if len(cfg) > 0 {
		conf = strings.Join(cfg, " ")
	}
	size := "sizes: DescribeLogDirs answered"
	if !s.info.SizeKnown {
		size = "sizes: n/a (the cluster did not answer DescribeLogDirs)"
	}
	// Both wrap rather than being cut at the edge (a topic's configs can
	// be many).
	head := wrapIndented(st.Muted, fmt.Sprintf("replication factor %d · %s", s.info.ReplicationFactor, size), s.w) + "\n" +
		wrapIndented(st.Muted, "configs (non-default): "+conf, s.w)
	s.table.SetSize(s.w, max(s.h-2-strings.Count(head, "\n"), 3)) // the rows under the lines of head
	return s.table.under(head + "\n")
}

func (s *placementScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Back, k.Filter}
}

func (s *placementScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Back, k.Filter}}
}
