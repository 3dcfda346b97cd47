package tui

import (
	"context"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// Source is what every source of the UI has, the embedded engine and a
// Kafka cluster alike (*engine.Engine and *cluster.Source satisfy it):
// topics, partitions with their watermarks, reads, produce, cursors. Every
// call is made from a tea.Cmd, never from Update or View.
type Source interface {
	Topics() ([]engine.TopicInfo, error)
	Describe(name string) (engine.TopicInfo, error)
	CreateTopic(name string, cfg engine.TopicConfig) error
	DeleteTopic(name string) error
	Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error)
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
	NotifyC(topic string, partition int) (<-chan struct{}, error)
	OffsetForTimestamp(topic string, partition int, ms int64) (int64, error)
	Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error)
}

// The interfaces below are optional: the UI checks for them with a type
// assertion on the Source and shows "not available" (or "needs a local
// data dir") where one is missing. *engine.Engine implements all of them
// but Groups; a cluster source implements ConsumerLister and GroupLister.

// DataDir is a source on a local data directory: the engine-only screens
// need one (they reach its files through SegmentFiles, SnapshotReader and
// CrashLab), and recovery reports show paths relative to it.
type DataDir interface {
	Dir() string
}

// SegmentLister lists a partition's segments (the segments screen, the
// compression ratio of the topics screen).
type SegmentLister interface {
	Segments(topic string, partition int) ([]engine.SegmentInfo, error)
}

// LocalFiles is a source with a data dir and segments: what the segments,
// recovery, frames, hex and crash lab screens need.
type LocalFiles interface {
	DataDir
	SegmentLister
}

// Reachability is a source that can be away: a cluster whose brokers its
// clients cannot reach. Unreachable is nil while they can, else the Kafka
// client's error naming the brokers; it does not block (it says what the
// clients last saw), and the UI asks it at every refresh.
type Reachability interface {
	Unreachable() error
}

// OpenProblems is a source whose open found problems no partition's
// recovery report holds (the engine: a meta.db rebuilt from the topic
// directories, an interrupted delete finished); the UI shows them on the
// status line as it opens.
type OpenProblems interface {
	Problems() []string
}

// Namer names a source without a data dir for the header ("kafka
// host:port").
type Namer interface {
	Name() string
}

// localFiles returns src as LocalFiles when it is one.
func localFiles(src Source) (LocalFiles, bool) {
	lf, ok := src.(LocalFiles)
	return lf, ok
}

// dataDir is src's data directory, "" for a source without one.
func dataDir(src Source) string {
	if d, ok := src.(DataDir); ok {
		return d.Dir()
	}
	return ""
}

// ConsumerLister lists the consumers that committed a cursor on a topic,
// with their lag.
type ConsumerLister interface {
	Consumers(topic string) ([]engine.ConsumerInfo, error)
}

// MaintenanceReporter reports a partition's retention and compaction status.
type MaintenanceReporter interface {
	MaintenanceStatus(topic string, partition int) (engine.MaintenanceStatus, error)
}

// MaintenanceTrigger runs a retention or compaction pass over every
// partition of a topic now, returning when it is done.
type MaintenanceTrigger interface {
	RunRetention(topic string) error
	RunCompaction(topic string) error
}

// needsLocal returns the screen mk builds when the source has local files,
// else a screen saying that what needs a local data dir.
func needsLocal(c *Common, what string, mk func() Screen) Screen {
	if _, ok := localFiles(c.Src); ok {
		return mk()
	}
	return &needsDataDirScreen{c: c, id: c.newID(), what: what}
}

// needsDataDirScreen stands in for an engine-only screen on a source
// without a data dir.
type needsDataDirScreen struct {
	c    *Common
	id   int
	what string
}

func (s *needsDataDirScreen) ID() int                  { return s.id }
func (s *needsDataDirScreen) Init() tea.Cmd            { return nil }
func (s *needsDataDirScreen) Update(tea.Msg) tea.Cmd   { return nil }
func (s *needsDataDirScreen) SetSize(int, int)         {}
func (s *needsDataDirScreen) Crumb() string            { return s.what }
func (s *needsDataDirScreen) ShortHelp() []key.Binding { return []key.Binding{s.c.Keys.Back} }
func (s *needsDataDirScreen) FullHelp() [][]key.Binding {
	return [][]key.Binding{{s.c.Keys.Back}}
}

func (s *needsDataDirScreen) View() string {
	return wrapIndented(s.c.Styles.Warn, fmt.Sprintf("%s needs a local data dir", s.what), s.c.Width) + "\n" +
		wrapIndented(s.c.Styles.Muted, fmt.Sprintf("this pulse shows %s, whose files it cannot read; run pulse on a data dir (--data) for %s", s.c.Opts.DataDirName, s.what), s.c.Width)
}

// segmentsOf lists a partition's segments, or says they need a data dir.
func segmentsOf(src Source, topic string, p int) ([]engine.SegmentInfo, error) {
	sl, ok := src.(SegmentLister)
	if !ok {
		return nil, fmt.Errorf("segments: %w", ErrNeedsDataDir)
	}
	return sl.Segments(topic, p)
}
