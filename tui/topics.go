package tui

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
)

// rateSamples is how many produce-rate samples a topic keeps for its sparkline.
const rateSamples = 30

// ratioEvery: compression ratios (which need every partition's segments)
// are recomputed on every ratioEvery-th refresh.
const ratioEvery = 3

type topicsMsg struct {
	to
	infos []engine.TopicInfo
	err   error
}

// ratiosMsg sums every topic's segments: raw and stored bytes for the
// compression ratio, and records actually stored (fewer than the offset span
// once compaction has run).
type ratiosMsg struct {
	to
	raw, stored, records map[string]int64
}

type topicDeletedMsg struct {
	to
	name string
	err  error
}

// rateHistory samples a topic's summed HWM to derive a produce rate.
type rateHistory struct {
	hwm     int64
	at      time.Time
	samples []float64
}

// topicsScreen lists every topic: partitions, records, bytes, compression
// ratio, produce rate, retention, cleanup and badges.
type topicsScreen struct {
	c       *Common
	id      int
	table   *table
	infos   []engine.TopicInfo
	rates   map[string]*rateHistory
	raw     map[string]int64
	stored  map[string]int64
	records map[string]int64
	loads   int
	loaded  bool
	err     error
	// created is a topic to select once a load shows it: one just created
	// here, edited, or opened by name (selectTopic).
	created string
}

func newTopicsScreen(c *Common) *topicsScreen {
	s := &topicsScreen{c: c, id: c.newID(), rates: map[string]*rateHistory{}}
	s.table = newTable(c, []column{
		{Title: "TOPIC", Width: 10, Flex: true},
		{Title: "PARTS", Width: 5, Right: true, Drop: 2},
		{Title: "RECORDS", Width: 11, Right: true},          // stored
		{Title: "OFFSETS", Width: 11, Right: true, Drop: 7}, // span: HWM − log start
		{Title: "SIZE", Width: 10, Right: true, Drop: 4},
		{Title: "RATIO", Width: 6, Right: true, Drop: 5},
		{Title: "RATE", Width: 19, Drop: 6},
		{Title: "RETENTION", Width: 14, Drop: 3},
		{Title: "CLEANUP", Width: 7},
		{Title: "STATUS", Width: 16},
	}, "no topics yet: n creates one, or produce to any name over the websocket API")
	return s
}

func (s *topicsScreen) ID() int          { return s.id }
func (s *topicsScreen) Crumb() string    { return "Topics" }
func (s *topicsScreen) Init() tea.Cmd    { return s.load() }
func (s *topicsScreen) Refresh() tea.Cmd { return s.load() }

// RefreshAll reloads everything now, the per-segment sums included (ctrl+r).
func (s *topicsScreen) RefreshAll() tea.Cmd { s.loads = 0; return s.load() }

func (s *topicsScreen) SetSize(w, h int)   { s.table.SetSize(w, h) }
func (s *topicsScreen) SetFilter(f string) { s.table.SetFilter(f) }
func (s *topicsScreen) Filter() string     { return s.table.Filter() }

func (s *topicsScreen) load() tea.Cmd {
	src, id := s.c.Src, s.id
	cmds := []tea.Cmd{func() tea.Msg {
		infos, err := src.Topics()
		return topicsMsg{to: to{id}, infos: infos, err: err}
	}}
	if s.loads%ratioEvery == 0 {
		cmds = append(cmds, s.loadRatios())
	}
	s.loads++
	return tea.Batch(cmds...)
}

// loadRatios sums raw and stored bytes of every segment of every topic.
func (s *topicsScreen) loadRatios() tea.Cmd {
	src, id := s.c.Src, s.id
	if _, ok := src.(SegmentLister); !ok {
		return nil // a cluster has no segments to read: the column says n/a
	}
	return func() tea.Msg {
		infos, err := src.Topics()
		if err != nil {
			return nil
		}
		msg := ratiosMsg{to: to{id}, raw: map[string]int64{}, stored: map[string]int64{}, records: map[string]int64{}}
		for _, t := range infos {
			for _, p := range t.Partitions {
				segs, err := segmentsOf(src, t.Name, p.Partition)
				if err != nil {
					continue
				}
				for _, sg := range segs {
					msg.raw[t.Name] += sg.RawBytes
					msg.stored[t.Name] += sg.Bytes
					msg.records[t.Name] += sg.Records
				}
			}
		}
		return msg
	}
}

func (s *topicsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case topicsMsg:
		s.loaded, s.err = true, msg.err
		if msg.err == nil {
			s.infos = msg.infos
			sort.Slice(s.infos, func(i, j int) bool { return s.infos[i].Name < s.infos[j].Name })
			s.sample()
			s.rebuild()
			// A cluster's metadata can lag its CreateTopics answer: the
			// topic is selected at the first list that has it.
			if s.created != "" && slices.ContainsFunc(s.infos, func(t engine.TopicInfo) bool { return t.Name == s.created }) {
				s.table.Select(s.created)
				s.created = ""
			}
		}
		return nil
	case ratiosMsg:
		s.raw, s.stored, s.records = msg.raw, msg.stored, msg.records
		s.rebuild()
		return nil
	case topicDeletedMsg:
		if msg.err != nil {
			return errStatus(fmt.Errorf("delete %s: %w", msg.name, msg.err))
		}
		delete(s.rates, msg.name)
		return tea.Batch(status("deleted topic %s", msg.name), s.load())
	case topicCreatedMsg:
		s.created = msg.name
		return tea.Batch(status("created topic %s", msg.name), s.load())
	case tea.KeyMsg:
		return s.key(msg)
	}
	s.table.Update(msg)
	return nil
}

// selectTopic selects name: now when the list has it, else at the first
// load that shows it.
func (s *topicsScreen) selectTopic(name string) {
	if slices.ContainsFunc(s.infos, func(t engine.TopicInfo) bool { return t.Name == name }) {
		s.table.Select(name)
		s.created = ""
		return
	}
	s.created = name
}

func (s *topicsScreen) key(msg tea.KeyMsg) tea.Cmd {
	k := s.c.Keys
	if s.table.Update(msg) {
		s.created = "" // the selection is the user's now
		return nil
	}
	if key.Matches(msg, k.Create) {
		return push(newCreateTopicScreen(s.c, s.id))
	}
	r, ok := s.table.Selected()
	if !ok {
		return nil
	}
	name := r.Key
	switch {
	case key.Matches(msg, k.Enter):
		return push(newPartitionsScreen(s.c, name))
	case key.Matches(msg, k.Tail):
		return push(newTailScreen(s.c, name, allPartitions))
	case key.Matches(msg, k.Produce):
		return push(newProduceScreen(s.c, name, -1))
	case key.Matches(msg, k.Edit):
		for _, t := range s.infos {
			if t.Name == name {
				return push(newAlterTopicScreen(s.c, t))
			}
		}
		return nil
	case key.Matches(msg, k.Delete):
		var records int64
		for _, t := range s.infos {
			if t.Name == name {
				for _, p := range t.Partitions {
					records += p.HWM - p.LogStart
				}
			}
		}
		src, id := s.c.Src, s.id
		return confirm(fmt.Sprintf("Delete topic %s and its %s? This cannot be undone.", name, plural(records, "record", "records")),
			func() tea.Msg {
				return topicDeletedMsg{to: to{id}, name: name, err: src.DeleteTopic(name)}
			})
	}
	return nil
}

// sample records each topic's summed HWM and the rate since the last sample.
func (s *topicsScreen) sample() {
	now := s.c.Opts.Now()
	seen := map[string]bool{}
	for _, t := range s.infos {
		seen[t.Name] = true
		var hwm int64
		for _, p := range t.Partitions {
			hwm += p.HWM
		}
		h, ok := s.rates[t.Name]
		if !ok {
			s.rates[t.Name] = &rateHistory{hwm: hwm, at: now}
			continue
		}
		el := now.Sub(h.at).Seconds()
		if el <= 0 {
			el = s.c.Opts.Refresh.Seconds()
			if el <= 0 {
				el = 1
			}
		}
		rate := float64(hwm-h.hwm) / el
		if rate < 0 {
			rate = 0
		}
		h.samples = append(h.samples, rate)
		if len(h.samples) > rateSamples {
			h.samples = h.samples[len(h.samples)-rateSamples:]
		}
		h.hwm, h.at = hwm, now
	}
	for n := range s.rates {
		if !seen[n] {
			delete(s.rates, n)
		}
	}
}

func (s *topicsScreen) rebuild() {
	rows := make([]row, 0, len(s.infos))
	for _, t := range s.infos {
		var records, span, bytes int64
		degraded, compacting, failed, sizeKnown := false, false, false, true
		for _, p := range t.Partitions {
			span += p.HWM - p.LogStart
			bytes += p.Bytes
			sizeKnown = sizeKnown && p.Bytes >= 0 // -1: the source cannot tell
			degraded = degraded || p.Degraded
			compacting = compacting || p.Compacting
			failed = failed || p.Failed != ""
		}
		// Records stored: the span, less what compaction removed from it.
		records = span
		if n, ok := s.records[t.Name]; ok && t.Config.Cleanup == engine.CleanupCompact && n < records {
			records = n
		}
		rate := "-"
		if h := s.rates[t.Name]; h != nil {
			rate = sparkline(h.samples, 8) + " " + fmt.Sprintf("%s/s", humanCount(int64(recentRate(h.samples)+0.5)))
		}
		st, stStyle := "ok", func(c *Common) lipgloss.Style { return c.Styles.Good }
		switch {
		case failed:
			st, stStyle = "failed", func(c *Common) lipgloss.Style { return c.Styles.Bad }
		case degraded && compacting:
			st, stStyle = "degraded compacting", func(c *Common) lipgloss.Style { return c.Styles.BadgeDegraded }
		case degraded:
			st, stStyle = "degraded", func(c *Common) lipgloss.Style { return c.Styles.BadgeDegraded }
		case compacting:
			st, stStyle = "compacting", func(c *Common) lipgloss.Style { return c.Styles.BadgeCompacting }
		}
		rows = append(rows, row{
			Key: t.Name,
			Cells: []string{
				t.Name,
				fmt.Sprint(len(t.Partitions)),
				humanCount(records),
				humanCount(span),
				orNA(sizeKnown, func() string { return humanBytes(bytes) }),
				orNA(s.hasSegments(), func() string { return ratio(s.raw[t.Name], s.stored[t.Name]) }),
				rate,
				retention(t.Config),
				string(t.Config.Cleanup),
				st,
			},
			Styles: map[int]func(*Common) lipgloss.Style{
				6: func(c *Common) lipgloss.Style { return c.Styles.Spark },
				9: stStyle,
			},
		})
	}
	s.table.SetRows(rows)
}

// recentRate averages the last rateWindow samples: a topic in sync-mode
// interval moves its HWM once per fsync, so single samples alternate
// between zero and a burst.
func recentRate(samples []float64) float64 {
	const rateWindow = 3
	if len(samples) > rateWindow {
		samples = samples[len(samples)-rateWindow:]
	}
	if len(samples) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range samples {
		sum += v
	}
	return sum / float64(len(samples))
}

// retention renders a topic's retention limits: "7d", "1.0 GiB", "1h/64.0 MiB" or "forever".
func retention(cfg engine.TopicConfig) string {
	switch {
	case cfg.RetentionMaxAge > 0 && cfg.RetentionMaxBytes > 0:
		return humanDuration(cfg.RetentionMaxAge) + "/" + humanBytes(cfg.RetentionMaxBytes)
	case cfg.RetentionMaxAge > 0:
		return humanDuration(cfg.RetentionMaxAge)
	case cfg.RetentionMaxBytes > 0:
		return humanBytes(cfg.RetentionMaxBytes)
	}
	return "forever"
}

func (s *topicsScreen) View() string {
	if s.err != nil {
		return s.table.under(s.c.Styles.StatusError.Render("topics: "+s.err.Error()) + "\n")
	}
	if !s.loaded {
		return s.c.Styles.Muted.Render("  loading topics…")
	}
	return s.table.View()
}

func (s *topicsScreen) ShortHelp() []key.Binding {
	k := s.c.Keys
	return []key.Binding{k.Enter, k.Tail, k.Produce, k.Create, k.Edit, k.Delete, k.Filter}
}

func (s *topicsScreen) FullHelp() [][]key.Binding {
	k := s.c.Keys
	return [][]key.Binding{{k.Enter, k.Tail, k.Produce, k.Create, k.Edit, k.Delete}}
}

func (s *topicsScreen) hasSegments() bool {
	_, ok := s.c.Src.(SegmentLister)
	return ok
}
