// Package engine is Pulse's storage facade: it owns one data directory
// (locked against a second process), its metadata store, and the topics and
// partition logs in it, and routes produces and reads to partitions.
package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// Engine is an open data directory. All methods are safe for concurrent use.
type Engine struct {
	opts Options
	lock *fsutil.DirLock
	meta *meta.Store
	// files bounds the segment descriptors of every partition (nil: no
	// bound, Options.MaxOpenSegments < 0).
	files *segment.Pool

	// mu guards topics (and each topic's state and settled), reports,
	// problems and closed. It is held for reading on every produce and
	// read, and for writing only to change the map or a topic's state: no
	// I/O happens under it (topics.go: a create or delete does its
	// directories, fsyncs, meta.db commit and partition recovery outside,
	// while its topic is marked creating or deleting).
	mu       sync.RWMutex
	topics   map[string]*topic
	reports  map[string]recovery.Report // by "topic/partition"
	problems []string                   // what startup found inconsistent, and what it did
	closed   bool

	bg  sync.WaitGroup // background work that Close waits for
	ops sync.WaitGroup // creates and deletes under way, which Close waits for

	maint maintainer  // retention and compaction sweeper and status, see maintenance.go
	hwms  hwmRecorder // meta.db's record of each partition's HWM, see hwmrecord.go

	members memberSources // who reports consumers' live members, see cursors.go
}

// topic is one open topic.
type topic struct {
	name      string
	createdAt time.Time
	parts     []*plog.Log
	part      partitioner

	// state and settled are guarded by Engine.mu. Only an active topic is
	// served; settled is closed when a create or delete ends (nil while
	// active), so whoever meets a topic in transition waits on it without
	// holding the lock.
	state   topicState
	settled chan struct{}
	adding  int // partitions an alter under way adds (state altering), counted against the caps

	// cfgMu guards cfg, which AlterTopic may change while the topic serves.
	cfgMu sync.Mutex
	cfg   TopicConfig

	grown growth // closed when AlterTopic replaces the topic with more partitions, see topics.go
}

// topicState is where a topic is in its life: see topics.go.
type topicState uint8

const (
	topicActive   topicState = iota // served: every partition open
	topicCreating                   // name reserved; directories, meta.db record and partitions being made
	topicDeleting                   // no longer served; partitions closing, files and record being removed
	topicAltering                   // served; a config change or a grow being stored and applied (see AlterTopic)
)

// config returns the topic's current configuration.
func (t *topic) config() TopicConfig {
	t.cfgMu.Lock()
	defer t.cfgMu.Unlock()
	return t.cfg
}

// Open opens (creating if needed) the data directory opts.Dir: takes its
// LOCK, opens meta.db, finishes interrupted topic deletes, reconciles
// meta.db with the partition directories on disk, and recovers every
// partition. A second process on the same directory gets ErrLocked.
func Open(opts Options) (*Engine, error) {
	opts = opts.withDefaults()
	if opts.Dir == "" {
		return nil, errors.New("engine: no data directory given")
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, layout.TopicsDir), 0o755); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", opts.Dir, err)
	}
	lock, err := fsutil.Lock(opts.Dir)
	if errors.Is(err, ErrLocked) {
		return nil, err // names the directory and the holder's pid
	}
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", opts.Dir, err)
	}
	_, statErr := os.Stat(meta.Path(opts.Dir))
	metaMissing := errors.Is(statErr, fs.ErrNotExist)
	store, err := meta.Open(opts.Dir, meta.DefaultOptions())
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("data directory %s: %w", opts.Dir, err)
	}
	e := &Engine{opts: opts, lock: lock, meta: store, topics: map[string]*topic{}, reports: map[string]recovery.Report{}}
	if opts.MaxOpenSegments > 0 {
		e.files = segment.NewPool(opts.MaxOpenSegments)
	}
	if metaMissing {
		if err := e.rebuildMeta(); err != nil {
			e.closeAll()
			return nil, inDir(opts.Dir, err)
		}
	}
	if err := e.load(); err != nil {
		e.closeAll()
		return nil, inDir(opts.Dir, err)
	}
	e.startMaintenance()
	e.startHWMRecorder()
	return e, nil
}

// inDir names the data directory dir in err, an error of Open, unless err
// names it already ("data directory DIR", or a path in it): every error of
// Open names the directory once, so its callers add nothing of their own.
func inDir(dir string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "data directory "+dir) || strings.Contains(msg, filepath.Join(dir, layout.TopicsDir)+string(filepath.Separator)) {
		return err
	}
	return fmt.Errorf("data directory %s: %w", dir, err)
}

// withDefaults fills what the facade itself uses; the partition logs fill
// their own zero fields from plog.DefaultOptions, which DefaultOptions copies.
func (o Options) withDefaults() Options {
	if o.HiddenTail == "" {
		o.HiddenTail = HiddenTailExpose
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxTopics == 0 {
		o.MaxTopics = DefaultMaxTopics
	}
	if o.MaxPartitions == 0 {
		o.MaxPartitions = DefaultMaxPartitions
	}
	if o.MaxOpenSegments == 0 {
		o.MaxOpenSegments = DefaultMaxOpenSegments
	}
	return o
}

// Dir is the data directory.
func (e *Engine) Dir() string { return e.opts.Dir }

// Identity is the data directory's cluster and broker identity (meta.db).
func (e *Engine) Identity() (Identity, error) {
	id, err := e.meta.Identity()
	if err != nil {
		return Identity{}, fmt.Errorf("data directory %s: identity: %w", e.opts.Dir, err)
	}
	return id, nil
}

// Identity is a data directory's cluster and broker identity.
type Identity = meta.Identity

// partitionDir is where partition p of topic keeps its files.
func (e *Engine) partitionDir(topic string, p int) string {
	return layout.PartitionDir(e.opts.Dir, topic, p)
}

// load finishes interrupted deletes, reconciles meta.db with the disk and
// opens every active topic.
func (e *Engine) load() error {
	stored, err := e.meta.ListTopics()
	if err != nil {
		return fmt.Errorf("data directory %s: %w", e.opts.Dir, err)
	}
	var active []meta.Topic
	for _, t := range stored {
		if t.State == meta.TopicDeleting {
			if err := e.finishDelete(t.Name); err != nil {
				return err
			}
			e.problems = append(e.problems, fmt.Sprintf("topic %s: finished a delete interrupted by a crash", t.Name))
			continue
		}
		active = append(active, t)
	}
	disk, err := e.scanDisk()
	if err != nil {
		return err
	}
	for _, m := range meta.Reconcile(active, disk) {
		if m.Kind == meta.OrphanTopicDir && e.holdsNoData(m.Topic) {
			// A create interrupted before its meta.db commit leaves
			// empty partition directories and nothing else.
			if err := os.RemoveAll(layout.TopicDir(e.opts.Dir, m.Topic)); err != nil {
				return fmt.Errorf("topic directory %s: %w", m.Topic, err)
			}
			e.problems = append(e.problems, fmt.Sprintf("topic directory %s: removed, empty, left by an interrupted create", m.Topic))
			continue
		}
		e.problems = append(e.problems, describeMismatch(m))
	}
	for _, p := range e.problems {
		e.opts.Logger.Warn("data directory", "dir", e.opts.Dir, "found", p)
	}

	type job struct {
		t        *topic
		p        int
		recorded int64 // the HWM meta.db recorded
	}
	var jobs []job
	for _, mt := range active {
		cfg := DefaultTopicConfig()
		if err := json.Unmarshal(mt.Config, &cfg); err != nil {
			return fmt.Errorf("topic %s: stored config: %w", mt.Name, err)
		}
		cfg.Partitions = mt.Partitions
		t := &topic{name: mt.Name, cfg: cfg, createdAt: mt.CreatedAt, parts: make([]*plog.Log, mt.Partitions)}
		e.topics[mt.Name] = t
		recs, err := e.meta.Partitions(mt.Name)
		if err != nil {
			return fmt.Errorf("topic %s: %w", mt.Name, mapMetaErr(err))
		}
		recorded := make([]int64, mt.Partitions)
		for _, r := range recs {
			if r.Partition < mt.Partitions {
				recorded[r.Partition] = r.HWM
			}
		}
		for p := range mt.Partitions {
			jobs = append(jobs, job{t, p, recorded[p]})
		}
	}
	// Partitions recover in parallel: each is independent, and a data dir
	// with hundreds of partitions should open in a blink.
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			j.t.parts[j.p], errs[i] = e.openPartition(j.t.name, j.p, j.t.cfg, j.recorded)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, j := range jobs {
		l := j.t.parts[j.p]
		e.noteRecordedHWM(l, j.recorded)
		r := l.Report()
		e.reports[r.Name()] = r
	}
	e.storeReports()
	return nil
}

// rebuildMeta runs when meta.db was missing (it was just created empty):
// every topic directory that holds data is recorded again as a topic, with
// as many partitions as its highest pNNNNN directory says and the default
// config (the stored one is gone), so no record becomes unreachable and no
// later create of the same name adopts the directory silently. Each topic
// rebuilt is logged, listed in Problems and marked in meta.db (Rebuilt),
// where `pulse meta check` reports it.
func (e *Engine) rebuildMeta() error {
	disk, err := e.scanDisk()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(disk))
	for name := range disk {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		parts := disk[name]
		if len(parts) == 0 || e.holdsNoData(name) {
			continue
		}
		n := slices.Max(parts) + 1
		cfg := DefaultTopicConfig()
		cfg.Partitions = n
		raw, err := json.Marshal(cfg)
		if err != nil {
			return fmt.Errorf("topic %s: %w", name, err)
		}
		why := fmt.Sprintf("meta.db was missing; rebuilt from the topic directory (%d partitions, default config: the stored config was lost)", n)
		if err := e.meta.PutTopic(meta.Topic{Name: name, Partitions: n, Config: raw, CreatedAt: time.Now().UTC(), State: meta.TopicActive, Rebuilt: why}); err != nil {
			return fmt.Errorf("rebuild meta.db: topic %s: %w", name, mapMetaErr(err))
		}
		msg := fmt.Sprintf("topic %s: %s", name, why)
		e.problems = append(e.problems, msg)
		e.opts.Logger.Error("meta.db rebuilt", "dir", e.opts.Dir, "topic", name, "partitions", n)
	}
	return nil
}

// describeMismatch says what startup found and what Pulse does about it.
func describeMismatch(m meta.Mismatch) string {
	switch m.Kind {
	case meta.MissingTopicDir, meta.MissingPartitionDirs:
		return fmt.Sprintf("topic %s: partition directories %v missing on disk; each starts again past the high-watermark meta.db recorded for it, the offsets below it reported lost", m.Topic, m.Partitions)
	case meta.ExtraPartitionDirs:
		return fmt.Sprintf("topic %s: partition directories %v beyond its %d partitions; left untouched, not served", m.Topic, m.Partitions, m.Want)
	case meta.OrphanTopicDir:
		return fmt.Sprintf("topic directory %s is not in meta.db; left untouched, not served (create the topic to adopt it)", m.Topic)
	}
	return fmt.Sprintf("topic %s: %s", m.Topic, m.Kind)
}

// scanDisk lists the partition directories under topics/.
func (e *Engine) scanDisk() (map[string][]int, error) {
	return ScanTopicDirs(e.opts.Dir)
}

// ScanTopicDirs lists the topic directories under <dataDir>/topics (valid
// topic names only) and the partition numbers of their pNNNNN directories.
// It only reads.
func ScanTopicDirs(dataDir string) (map[string][]int, error) {
	root := filepath.Join(dataDir, layout.TopicsDir)
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	disk := map[string][]int{}
	for _, te := range ents {
		if !te.IsDir() || ValidateTopicName(te.Name()) != nil {
			continue
		}
		parts := []int{}
		pents, err := os.ReadDir(filepath.Join(root, te.Name()))
		if err != nil {
			return nil, fmt.Errorf("topic directory %s: %w", te.Name(), err)
		}
		for _, pe := range pents {
			if p, ok := layout.ParsePartitionName(pe.Name()); ok && pe.IsDir() {
				parts = append(parts, p)
			}
		}
		disk[te.Name()] = parts
	}
	return disk, nil
}

// holdsNoData reports whether the directory of topic name contains nothing
// but empty directories.
func (e *Engine) holdsNoData(name string) bool {
	empty := true
	filepath.WalkDir(layout.TopicDir(e.opts.Dir, name), func(_ string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			empty = false
			return filepath.SkipAll
		}
		return nil
	})
	return empty
}

// openPartition creates (if needed) and recovers one partition directory.
func (e *Engine) openPartition(topicName string, p int, cfg TopicConfig, recordedHWM int64) (*plog.Log, error) {
	dir := e.partitionDir(topicName, p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("topic %s partition %d: %w", topicName, p, err)
	}
	c, _ := codec.ParseCodec(cfg.Codec)
	return plog.Open(dir, plog.Options{
		Topic:              topicName,
		Partition:          p,
		Codec:              c,
		SegmentMaxBytes:    cfg.SegmentMaxBytes,
		IndexIntervalBytes: e.opts.IndexIntervalBytes,
		FlushBytes:         e.opts.FlushBytes,
		FlushRecords:       e.opts.FlushRecords,
		FlushInterval:      e.opts.FlushInterval,
		SyncMode:           cfg.SyncMode,
		SyncInterval:       e.opts.SyncInterval,
		SyncBytes:          e.opts.SyncBytes,
		HWMInterval:        e.opts.HWMInterval,
		HiddenTail:         e.opts.HiddenTail,
		RecordedHWM:        recordedHWM,
		FilePool:           e.files,
		Logger:             e.opts.Logger,
		Observer:           e.opts.Observer,
	})
}

// storeReports saves the recovery reports of this open in meta.db, in the
// background so that opening never waits for hundreds of synced commits.
func (e *Engine) storeReports() {
	reports := make([]recovery.Report, 0, len(e.reports))
	for _, r := range e.reports {
		reports = append(reports, r)
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		for _, r := range reports {
			data, err := json.Marshal(r)
			if err == nil {
				err = e.meta.PutReport(ReportRecovery, r.Topic, r.Partition, data)
			}
			if err != nil {
				e.opts.Logger.Error("store recovery report", "partition", r.Name(), "err", err)
			}
		}
	}()
}

// ReportRecovery is the meta.db report kind of recovery reports.
const ReportRecovery = "recovery"

// RecoveryReports returns the recovery report of every partition opened by
// this engine, sorted by topic and partition.
func (e *Engine) RecoveryReports() []recovery.Report {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]recovery.Report, 0, len(e.reports))
	for _, r := range e.reports {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// Problems lists what opening found inconsistent between meta.db and the
// disk, and what was done about each.
func (e *Engine) Problems() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return append([]string(nil), e.problems...)
}

// Close flushes and fsyncs every partition, persists HWMs and snapshots,
// closes meta.db and releases the data directory.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.closed = true
	e.mu.Unlock()
	e.ops.Wait()
	e.stopMaintenance()
	e.stopHWMRecorder()
	return e.closeAll()
}

func (e *Engine) closeAll() error {
	type partErr struct {
		topic string
		p     int
		err   error
	}
	var (
		mu       sync.Mutex
		partErrs []partErr
		wg       sync.WaitGroup
	)
	// A bounded number at once: each close holds its files open (and
	// writes a snapshot), so thousands at once would exhaust descriptors.
	sem := make(chan struct{}, 16)
	for _, t := range e.topics {
		for p, l := range t.parts {
			if l == nil {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := l.Close(); err != nil {
					mu.Lock()
					partErrs = append(partErrs, partErr{t.name, p, err})
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	// One line a partition, in topic and partition order.
	slices.SortFunc(partErrs, func(a, b partErr) int { return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.p, b.p)) })
	var errs []error
	for _, pe := range partErrs {
		errs = append(errs, fmt.Errorf("topic %s partition %d: %w", pe.topic, pe.p, pe.err))
	}
	e.bg.Wait()
	// Every partition is closed: their HWMs are final.
	e.recordHWMs()
	if err := e.meta.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := e.lock.Unlock(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// partition returns partition p of topic name.
func (e *Engine) partition(name string, p int) (*plog.Log, error) {
	_, l, err := e.topicPartition(name, p)
	return l, err
}

// topicPartition returns topic name and its partition p.
func (e *Engine) topicPartition(name string, p int) (*topic, *plog.Log, error) {
	t, err := e.topic(name)
	if err != nil {
		return nil, nil, err
	}
	if p < 0 || p >= len(t.parts) {
		return nil, nil, partitionOutOfRange(name, len(t.parts), p)
	}
	return t, t.parts[p], nil
}

func (e *Engine) topic(name string) (*topic, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	t, ok := e.topics[name]
	if !ok || t.state == topicCreating {
		// A topic being created is not visible until it is whole.
		if err := ValidateTopicName(name); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", ErrTopicNotFound, name)
	}
	if t.state == topicDeleting {
		return nil, fmt.Errorf("%w: %s is being deleted", ErrTopicNotFound, name)
	}
	return t, nil
}

// activeTopics returns the topics being served, in no order (none once
// the engine is closed).
func (e *Engine) activeTopics() []*topic {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil
	}
	ts := make([]*topic, 0, len(e.topics))
	for _, t := range e.topics {
		if t.state == topicActive || t.state == topicAltering {
			ts = append(ts, t)
		}
	}
	return ts
}

// mapPartitionErr is mapLogErr for an error of one of t's partitions: a
// partition closed because its topic was deleted under a produce or read
// says so, rather than that the engine is closed.
func (e *Engine) mapPartitionErr(t *topic, err error) error {
	if errors.Is(err, plog.ErrClosed) {
		e.mu.RLock()
		gone := t.state == topicDeleting || e.topics[t.name] != t
		closed := e.closed
		e.mu.RUnlock()
		if gone && !closed {
			return fmt.Errorf("%w: %s was deleted: %w", ErrTopicNotFound, t.name, err)
		}
	}
	return mapLogErr(err)
}

// mapLogErr translates partition-log errors to the engine's sentinels
// (ErrRecordTooLarge, ErrOffsetOutOfRange and ErrLogFailed are the log's
// own and pass as they are).
func mapLogErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, plog.ErrClosed):
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}
