package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka/cluster/clusterinfo"
)

// GroupLister describes a cluster's consumer groups: state, members with
// their assignment, committed offsets and lag (a Kafka cluster source).
type GroupLister interface {
	Groups() ([]clusterinfo.Group, error)
}

// addGroupCommands registers ":groups".
func addGroupCommands(cmds map[string]command) {
	cmds["groups"] = command{usage: "groups  consumer groups: state, members, committed offsets, lag", run: func(m *Model, _ []string) tea.Cmd {
		return push(newGroupsScreen(m.c))
	}}
}

type groupsMsg struct {
	to
	groups []clusterinfo.Group
	err    error
}

// groupsScreen lists every consumer group partition by partition: group,
// state, members, topic/partition, committed offset, HWM and lag.
type groupsScreen struct {
	c      *Common
	id     int
	table  *table
	groups []clusterinfo.Group
	loaded bool
	err    error
	w, h   int
}

func newGroupsScreen(c *Common) *groupsScreen {
	s := &groupsScreen{c: c, id: c.newID()}
	s.table = newTable(c, []column{
		{Title: "GROUP", Width: 20},
		{Title: "STATE", Width: 12},
		{Title: "MEMBERS", Width: 7, Right: true, Drop: 3},
		{Title: "TOPIC", Width: 16},
		{Title: "P", Width: 4, Right: true},
		{Title: "COMMITTED", Width: 11, Right: true},
		{Title: "HWM", Width: 11, Right: true, Drop: 2},
		{Title: "LAG", Width: 9, Right: true},
		{Title: "MEMBER", Width: 12, Flex: true, Drop: 4},
	}, "no consumer groups")
	return s
}

func (s *groupsScreen) ID() int            { return s.id }
func (s *groupsScreen) Crumb() string      { return "groups" }
func (s *groupsScreen) Init() tea.Cmd      { return s.load() }
func (s *groupsScreen) Refresh() tea.Cmd   { return s.load() }
func (s *groupsScreen) SetFilter(f string) { s.table.SetFilter(f) }
func (s *groupsScreen) Filter() string     { return s.table.Filter() }

func (s *groupsScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.SetSize(w, h)
}

func (s *groupsScreen) load() tea.Cmd {
	gl, ok := s.c.Src.(GroupLister)
	if !ok {
		return nil
	}
	id := s.id
	return func() tea.Msg {
		gs, err := gl.Groups()
		return groupsMsg{to: to{id}, groups: gs, err: err}
	}
}

func (s *groupsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case groupsMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.groups = msg.groups
			s.rebuild()
		}
	case tea.KeyMsg:
		s.table.Update(msg)
	}
	return nil
}

func (s *groupsScreen) rebuild() {
	var rows []row
	gs := append([]clusterinfo.Group(nil), s.groups...)
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name < gs[j].Name })
	for _, g := range gs {
		state := g.State
		if g.Err != "" {
			state = "error: " + g.Err
		}
		if len(g.Partitions) == 0 {
			members := "-"
			if len(g.Members) > 0 {
				var ms []string
				for _, m := range g.Members {
					ms = append(ms, memberCell(g, m.ID))
				}
				members = strings.Join(ms, ", ")
			}
			rows = append(rows, row{Key: g.Name, Cells: []string{g.Name, state, fmt.Sprint(len(g.Members)), "-", "-", "-", "-", "-", members}})
			continue
		}
		for _, gp := range g.Partitions {
			member := memberCell(g, gp.Member)
			rows = append(rows, row{
				Key: fmt.Sprintf("%s/%s/%d", g.Name, gp.Topic, gp.Partition),
				Cells: []string{g.Name, state, fmt.Sprint(len(g.Members)), gp.Topic, fmt.Sprint(gp.Partition),
					fmt.Sprint(gp.Committed), fmt.Sprint(gp.HWM), fmt.Sprint(gp.Lag), member},
			})
		}
	}
	s.table.SetRows(rows)
}

// memberCell names the member with id in g as "client-id host" (its Kafka
// client id and address), the id itself when g does not list it, "-" for none.
func memberCell(g clusterinfo.Group, id string) string {
	if id == "" {
		return "-"
	}
	for _, m := range g.Members {
		if m.ID == id {
			return strings.TrimSpace(m.ClientID + " " + m.Host)
		}
	}
	return id
}

func (s *groupsScreen) View() string {
	st := s.c.Styles
	if _, ok := s.c.Src.(GroupLister); !ok {
		return wrapIndented(st.Muted, "consumer groups: "+ErrNotAvailable.Error()+" (a Kafka cluster or Pulse's Kafka listener has them; the engine has consumer cursors, on the partitions screen)", s.w)
	}
	if s.err != nil {
		return wrapIndented(st.StatusError, "groups: "+s.err.Error(), s.w)
	}
	if !s.loaded {
		return st.Muted.Render("  loading consumer groups…")
	}
	return s.table.View()
}

func (s *groupsScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Back, k.Filter}
}

func (s *groupsScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Back, k.Filter}}
}

// clusterSummary is the partitions screen's summary line on a source
// without local files, w cells wide: only what a cluster topic has.
func clusterSummary(c *Common, info engine.TopicInfo, w int) string {
	cfg := info.Config
	parts := []string{"cluster topic", fmt.Sprintf("%d partitions", len(info.Partitions)), "retention " + retention(cfg), "cleanup " + string(cfg.Cleanup)}
	if cfg.Codec != "" {
		parts = append(parts, "compression "+cfg.Codec)
	}
	parts = append(parts, "segments and recovery need a local data dir")
	return c.Styles.Muted.Render(fieldsLine(parts, w))
}
