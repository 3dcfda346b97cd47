package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
)

// PartitionWatcher is a source that reports a topic gaining partitions
// (*engine.Engine has it): the merged tail then follows the new ones.
type PartitionWatcher interface {
	PartitionsChangedC(topic string) (<-chan struct{}, error)
}

// alteredMsg is the result of an alter.
type alteredMsg struct {
	to
	name string
	cfg  engine.TopicConfig
	err  error
}

// alterTopicScreen is the form that changes a topic's retention, cleanup,
// segment size, sync mode and partition count (which only grows); the
// engine applies each live. The codec is shown, fixed at creation.
type alterTopicScreen struct {
	c       *Common
	id      int
	name    string
	cfg     engine.TopicConfig // as it was when the form opened
	parts   int                // partitions when the form opened
	form    *form
	sending bool
	errText string
}

func newAlterTopicScreen(c *Common, info engine.TopicInfo) *alterTopicScreen {
	cfg := info.Config
	age := ""
	if cfg.RetentionMaxAge > 0 {
		age = humanDuration(cfg.RetentionMaxAge)
	}
	size := ""
	if cfg.RetentionMaxBytes > 0 {
		size = humanBytes(cfg.RetentionMaxBytes)
	}
	s := &alterTopicScreen{c: c, id: c.newID(), name: info.Name, cfg: cfg, parts: len(info.Partitions)}
	s.form = &form{c: c, fields: []*field{
		{label: "cleanup", line: newLine("", string(cfg.Cleanup)), hint: "delete or compact"},
		{label: "max age", line: newLine("forever", age), hint: "e.g. 1h, 7d; empty keeps forever"},
		{label: "max bytes", line: newLine("unlimited", size), hint: "per partition, e.g. 1GiB"},
		{label: "segment", line: newLine("", humanBytes(cfg.SegmentMaxBytes)), hint: "e.g. 16MiB, at least 1MiB"},
		{label: "sync mode", line: newLine("", string(cfg.SyncMode)), hint: "every-write or interval"},
		{label: "partitions", line: newLine("", strconv.Itoa(len(info.Partitions))), hint: "grows, never shrinks"},
	}}
	return s
}

func (s *alterTopicScreen) ID() int          { return s.id }
func (s *alterTopicScreen) Crumb() string    { return s.name + " / edit" }
func (s *alterTopicScreen) Init() tea.Cmd    { return s.form.init() }
func (s *alterTopicScreen) Capturing() bool  { return true }
func (s *alterTopicScreen) SetSize(w, h int) { s.form.setWidth(w) }

// config reads the form into the topic's new configuration.
func (s *alterTopicScreen) config() (engine.TopicConfig, error) {
	f := s.form.fields
	cfg := s.cfg
	var err error
	if cfg.Cleanup, err = parseCleanup(f[0].value()); err != nil {
		return cfg, err
	}
	if cfg.RetentionMaxAge, err = parseAge(f[1].value()); err != nil {
		return cfg, err
	}
	cfg.RetentionMaxBytes = 0
	if v := strings.TrimSpace(f[2].value()); v != "" {
		if cfg.RetentionMaxBytes, err = parseBytes(v); err != nil {
			return cfg, err
		}
	}
	if cfg.SegmentMaxBytes, err = parseBytes(f[3].value()); err != nil {
		return cfg, err
	}
	if cfg.SyncMode, err = parseSyncMode(f[4].value()); err != nil {
		return cfg, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(f[5].value()))
	if err != nil || n < 1 {
		return cfg, fmt.Errorf("%w: partitions %q (want a number ≥ 1)", ErrBadInput, f[5].value())
	}
	if n < s.parts {
		return cfg, fmt.Errorf("%w: partitions %d: a topic's partitions grow, never shrink (it has %d)", ErrBadInput, n, s.parts)
	}
	cfg.Partitions = n
	return cfg, nil
}

func (s *alterTopicScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case alteredMsg:
		s.sending = false
		if msg.err != nil {
			s.errText = msg.err.Error()
			return errStatus(fmt.Errorf("alter %s: %w", msg.name, msg.err))
		}
		return tea.Sequence(popRefresh, selectTopic(msg.name), status("%s", s.savedText(msg.name, msg.cfg)))
	case tea.KeyMsg:
		if s.sending {
			return nil
		}
		cmd, submit := s.form.update(msg)
		if !submit {
			return cmd
		}
		cfg, err := s.config()
		if err != nil {
			s.errText = err.Error()
			return errStatus(err)
		}
		alt, ok := s.c.Src.(TopicAlterer)
		if !ok {
			return errStatus(fmt.Errorf("alter %s: %w", s.name, ErrNotAvailable))
		}
		s.sending, s.errText = true, ""
		id, name := s.id, s.name
		return func() tea.Msg { return alteredMsg{to: to{id}, name: name, cfg: cfg, err: alt.AlterTopic(name, cfg)} }
	}
	cmd, _ := s.form.update(msg)
	return cmd
}

// savedText is the status after a save: the changes, in words while they
// fit the terminal's width, else in short words ("orders, live: compact,
// keep 7d/1.0 GiB, seg 16.0 MiB, interval, 3→5 partitions" fits 80
// columns); only a line that still does not fit is shortened, with "…",
// rather than cut at the terminal's edge.
func (s *alterTopicScreen) savedText(name string, cfg engine.TopicConfig) string {
	old := s.cfg
	var long, short []string
	add := func(changed bool, l, sh string) {
		if changed {
			long, short = append(long, l), append(short, sh)
		}
	}
	add(cfg.Cleanup != old.Cleanup, "cleanup "+string(cfg.Cleanup), string(cfg.Cleanup))
	add(cfg.RetentionMaxAge != old.RetentionMaxAge || cfg.RetentionMaxBytes != old.RetentionMaxBytes,
		"retention "+retention(cfg), "keep "+retention(cfg))
	add(cfg.SegmentMaxBytes != old.SegmentMaxBytes, "segment "+humanBytes(cfg.SegmentMaxBytes), "seg "+humanBytes(cfg.SegmentMaxBytes))
	add(cfg.SyncMode != old.SyncMode, "sync "+string(cfg.SyncMode), string(cfg.SyncMode))
	add(cfg.Partitions != s.parts, fmt.Sprintf("partitions %d→%d", s.parts, cfg.Partitions), fmt.Sprintf("%d→%d partitions", s.parts, cfg.Partitions))
	if len(long) == 0 {
		return name + ": saved, nothing changed"
	}
	w := max(s.c.Width, 20)
	text := name + ", applied live: " + strings.Join(long, ", ")
	if lipgloss.Width(text) > w {
		text = name + ", live: " + strings.Join(short, ", ")
	}
	if lipgloss.Width(text) > w {
		// Still too wide (a long name, or every setting changed at their
		// longest): the name gives way to a third of the line, the list is
		// cut last; the topics table shows the whole configuration.
		head := truncate(name, max(w/3, 8)) + ", live: "
		text = head + truncate(strings.Join(short, ", "), max(w-lipgloss.Width(head), 1))
	}
	return text
}

func (s *alterTopicScreen) View() string {
	st := s.c.Styles
	fixed := fmt.Sprintf("  fixed at creation: codec %s · every change applies live", s.cfg.Codec)
	saves := "  enter saves (durable in meta.db); esc cancels"
	if dataDir(s.c.Src) == "" {
		// On a cluster the codec is its compression.type, which Kafka
		// alters but this form does not; a cluster may report none.
		fixed = "  every change applies live"
		if s.cfg.Codec != "" {
			fixed = fmt.Sprintf("  compression.type %s: not changed here · every change applies live", s.cfg.Codec)
		}
		saves = "  enter saves on the cluster; esc cancels"
	}
	head := st.PanelTitle.Render("  Edit topic "+s.name) + "\n" + st.Muted.Render(truncate(fixed, max(s.c.Width, 20))) + "\n\n"
	return formScreenView(s.c, head, s.form, s.errText, saves)
}

func (s *alterTopicScreen) ShortHelp() []key.Binding { return formKeys(s.c.Keys) }

func (s *alterTopicScreen) FullHelp() [][]key.Binding { return [][]key.Binding{formKeys(s.c.Keys)} }

// parseCleanup reads a cleanup policy.
func parseCleanup(v string) (engine.Cleanup, error) {
	c, err := engine.ParseCleanup(strings.TrimSpace(v))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return c, nil
}

// parseSyncMode reads a sync mode.
func parseSyncMode(v string) (engine.SyncMode, error) {
	m, err := engine.ParseSyncMode(strings.TrimSpace(v))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return m, nil
}
