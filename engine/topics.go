package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/plog"
	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// Limits on topic configuration.
const (
	MaxPartitions      = meta.MaxPartitions
	MinSegmentMaxBytes = 1 << 20
	MaxSegmentMaxBytes = 1 << 30 // index positions are 32-bit; stay well inside
)

// normalize fills zero fields of cfg with the defaults and checks the rest.
func normalize(cfg TopicConfig) (TopicConfig, error) {
	d := DefaultTopicConfig()
	if cfg.Partitions == 0 {
		cfg.Partitions = d.Partitions
	}
	if cfg.Codec == "" {
		cfg.Codec = d.Codec
	}
	if cfg.SegmentMaxBytes == 0 {
		cfg.SegmentMaxBytes = d.SegmentMaxBytes
	}
	if cfg.SyncMode == "" {
		cfg.SyncMode = d.SyncMode
	}
	if cfg.Cleanup == "" {
		cfg.Cleanup = d.Cleanup
	}
	if cfg.TombstoneRetention == 0 {
		cfg.TombstoneRetention = d.TombstoneRetention
	}
	if err := CheckPartitions(cfg.Partitions); err != nil {
		return cfg, err
	}
	if cfg.RetentionMaxAge < 0 || cfg.RetentionMaxBytes < 0 || cfg.TombstoneRetention < 0 {
		return cfg, fmt.Errorf("%w: negative retention", ErrInvalidConfig)
	}
	if err := CheckSegmentBytes(cfg.SegmentMaxBytes); err != nil {
		return cfg, err
	}
	if _, err := ParseSyncMode(string(cfg.SyncMode)); err != nil {
		return cfg, err
	}
	if _, err := ParseCleanup(string(cfg.Cleanup)); err != nil {
		return cfg, err
	}
	if err := CheckCodec(cfg.Codec); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// ParseSyncMode, ParseCleanup, CheckCodec and CheckSegmentBytes check one
// field of a topic configuration as a user wrote it: they are the one
// validator of those values, used by normalize and by every surface that
// reads a config (websocket, Kafka, terminal UI). An error wraps
// ErrInvalidConfig.
func ParseSyncMode(s string) (SyncMode, error) {
	switch m := SyncMode(s); m {
	case SyncEveryWrite, SyncInterval:
		return m, nil
	}
	return "", fmt.Errorf("%w: sync mode %q, want %q or %q", ErrInvalidConfig, s, SyncEveryWrite, SyncInterval)
}

// CheckPartitions checks a topic's partition count: see ParseSyncMode.
func CheckPartitions(n int) error {
	if n < 1 || n > MaxPartitions {
		return fmt.Errorf("%w: partitions %d, want 1..%d", ErrInvalidConfig, n, MaxPartitions)
	}
	return nil
}

// CheckSegmentBytes checks a segment roll size: see ParseSyncMode.
func CheckSegmentBytes(n int64) error {
	if n < MinSegmentMaxBytes || n > MaxSegmentMaxBytes {
		return fmt.Errorf("%w: segment size %d bytes, want %d..%d (1 MiB..1 GiB)", ErrInvalidConfig, n, MinSegmentMaxBytes, MaxSegmentMaxBytes)
	}
	return nil
}

// ParseCleanup checks a cleanup policy: see ParseSyncMode.
func ParseCleanup(s string) (Cleanup, error) {
	switch c := Cleanup(s); c {
	case CleanupDelete, CleanupCompact:
		return c, nil
	}
	return "", fmt.Errorf("%w: cleanup %q, want %q or %q", ErrInvalidConfig, s, CleanupDelete, CleanupCompact)
}

// CheckCodec checks a codec name: see ParseSyncMode.
func CheckCodec(s string) error {
	if _, ok := codec.ParseCodec(s); !ok {
		return fmt.Errorf("%w: codec %q, want zstd or none", ErrInvalidConfig, s)
	}
	return nil
}

// CreateTopic creates a topic. Zero fields of cfg take DefaultTopicConfig's
// values. The partition directories are made first and the meta.db commit
// is the point of no return, so a crash leaves either no topic or a whole one.
//
// The name is reserved (state creating) under the engine's lock, and the
// I/O — directories, fsyncs, the meta.db commit, the recovery of every
// partition — happens outside it, so reads and produces of other topics
// never wait for it; the topic is visible only once it is whole. A create
// that meets the same name being created or deleted waits for that to end:
// of two creates of one name, one wins and the other gets ErrTopicExists.
func (e *Engine) CreateTopic(name string, cfg TopicConfig) error {
	cfg, err := checkRequest(name, cfg)
	if err != nil {
		return err
	}
	t, err := e.reserveTopic(name, cfg)
	if err != nil {
		return err
	}
	defer e.ops.Done()
	err = e.makeTopic(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		delete(e.topics, name)
	} else {
		t.state = topicActive
		for _, l := range t.parts {
			r := l.Report()
			e.reports[r.Name()] = r
		}
	}
	close(t.settled)
	t.settled = nil
	return err
}

// reserveTopic enters name in the topic map in state creating, once no
// create or delete of the same name is under way, and counts the create in
// e.ops (the caller calls e.ops.Done).
func (e *Engine) reserveTopic(name string, cfg TopicConfig) (*topic, error) {
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, ErrClosed
		}
		if old, ok := e.topics[name]; ok && old.state != topicActive && old.state != topicAltering {
			settled := old.settled
			e.mu.Unlock()
			<-settled
			continue
		}
		if err := e.checkCreateLocked(name, cfg); err != nil {
			e.mu.Unlock()
			return nil, err
		}
		t := &topic{
			name: name, cfg: cfg, createdAt: time.Now().UTC(), parts: make([]*plog.Log, cfg.Partitions),
			state: topicCreating, settled: make(chan struct{}),
		}
		e.topics[name] = t
		e.ops.Add(1)
		e.mu.Unlock()
		return t, nil
	}
}

// checkCreateLocked refuses what CreateTopic refuses from the engine's
// state: a topic of that name, or one past the data dir's caps.
func (e *Engine) checkCreateLocked(name string, cfg TopicConfig) error {
	if old, ok := e.topics[name]; ok && old.state != topicDeleting {
		return fmt.Errorf("%w: %s", ErrTopicExists, name)
	}
	return e.checkCapsLocked(name, cfg.Partitions)
}

// checkRequest checks the name of a create or an alter and returns its
// configuration filled with the defaults and checked (normalize).
func checkRequest(name string, cfg TopicConfig) (TopicConfig, error) {
	if err := ValidateTopicName(name); err != nil {
		return cfg, err
	}
	cfg, err := normalize(cfg)
	if err != nil {
		return cfg, fmt.Errorf("topic %s: %w", name, err)
	}
	return cfg, nil
}

// CheckCreate returns the error CreateTopic(name, cfg) would return for its
// name, its configuration or the engine's state (an existing topic, the
// caps), and changes nothing: a validate-only request's answer. A create or
// delete of the name under way is taken as settled.
func (e *Engine) CheckCreate(name string, cfg TopicConfig) error {
	return e.checkAgainstState(name, cfg, func(cfg TopicConfig) error {
		return e.checkCreateLocked(name, cfg)
	})
}

// CheckAlter is CheckCreate for AlterTopic(name, cfg).
func (e *Engine) CheckAlter(name string, cfg TopicConfig) error {
	return e.checkAgainstState(name, cfg, func(cfg TopicConfig) error {
		t, ok := e.topics[name]
		if !ok || t.state == topicCreating || t.state == topicDeleting {
			return fmt.Errorf("%w: %s", ErrTopicNotFound, name)
		}
		return e.checkAlterLocked(t, cfg)
	})
}

// checkAgainstState runs checkRequest, then check under the engine's read
// lock.
func (e *Engine) checkAgainstState(name string, cfg TopicConfig, check func(TopicConfig) error) error {
	cfg, err := checkRequest(name, cfg)
	if err != nil {
		return err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return ErrClosed
	}
	return check(cfg)
}

// makeTopic does a reserved topic's I/O: its partition directories, the
// meta.db commit, then the recovery of every partition. It holds no lock:
// nothing but the creating state protects t, and only this goroutine
// touches t.parts until the topic is active.
func (e *Engine) makeTopic(t *topic) error {
	name, cfg := t.name, t.cfg
	for p := range cfg.Partitions {
		if err := os.MkdirAll(e.partitionDir(name, p), 0o755); err != nil {
			return fmt.Errorf("topic %s: %w", name, err)
		}
	}
	if err := fsutil.SyncDir(filepath.Join(e.opts.Dir, layout.TopicsDir)); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	if err := e.meta.PutTopic(meta.Topic{Name: name, Partitions: cfg.Partitions, Config: raw, CreatedAt: t.createdAt, State: meta.TopicActive}); err != nil {
		return fmt.Errorf("topic %s: %w", name, mapMetaErr(err))
	}
	for p := range cfg.Partitions {
		l, err := e.openPartition(name, p, cfg, 0)
		if err != nil {
			for _, o := range t.parts[:p] {
				o.Close()
			}
			return e.undoCreate(name, err)
		}
		t.parts[p] = l
	}
	return nil
}

// undoCreate deletes a topic whose create failed (with cause) after its
// meta.db commit, as DeleteTopic does (marked deleting, files removed,
// record deleted), so the failed create leaves nothing the next open
// serves. Its partitions are closed. A crash or an error after the mark
// leaves a delete the next open finishes.
func (e *Engine) undoCreate(name string, cause error) error {
	if err := e.meta.MarkTopicDeleting(name); err != nil {
		return errors.Join(cause, fmt.Errorf("topic %s: undoing the create: %w (meta.db still lists the topic, so the next open opens it)", name, mapMetaErr(err)))
	}
	if err := e.finishDelete(name); err != nil {
		return errors.Join(cause, fmt.Errorf("undoing the create: %w (the next open finishes the delete)", err))
	}
	return cause
}

// checkCapsLocked refuses a new topic of n partitions past Options.MaxTopics
// or Options.MaxPartitions, counting the topics served and being created.
// The caller holds e.mu.
func (e *Engine) checkCapsLocked(name string, n int) error {
	topics, parts := 0, 0
	for _, t := range e.topics {
		if t.state != topicDeleting {
			topics++
			parts += len(t.parts) + t.adding
		}
	}
	if m := e.opts.MaxTopics; m >= 0 && topics+1 > m {
		return fmt.Errorf("%w: topic %s would be topic %d, the cap is %d topics (--max-topics)", ErrTooManyTopics, name, topics+1, m)
	}
	if m := e.opts.MaxPartitions; m >= 0 && parts+n > m {
		return fmt.Errorf("%w: topic %s adds %d partitions to %d, the cap is %d partitions of all topics (--max-partitions)", ErrTooManyTopics, name, n, parts, m)
	}
	return nil
}

// DeleteTopic deletes a topic and all its data. The topic is first marked
// deleting in meta.db; its files are removed only after that commit, and the
// record last, so a crash at any point is finished by the next open.
//
// The topic stops being served at once (state deleting, under the engine's
// lock): a produce or read of it from then on gets ErrTopicNotFound, and
// one already under way when its partition closes gets ErrTopicNotFound
// saying it was deleted. The meta.db commits, the closing of the
// partitions and the removal of the files happen outside the lock.
func (e *Engine) DeleteTopic(name string) error {
	if err := ValidateTopicName(name); err != nil {
		return err
	}
	var t *topic
	for t == nil {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return ErrClosed
		}
		cur, ok := e.topics[name]
		switch {
		case !ok:
			e.mu.Unlock()
			return fmt.Errorf("%w: %s", ErrTopicNotFound, name)
		case cur.state != topicActive:
			settled := cur.settled
			e.mu.Unlock()
			<-settled
			continue
		}
		t = cur
		t.state, t.settled = topicDeleting, make(chan struct{})
		e.ops.Add(1)
		e.mu.Unlock()
	}
	defer e.ops.Done()
	settle := func(remove bool) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if remove {
			delete(e.topics, name)
			t.grown.close()
			for p := range t.parts {
				delete(e.reports, fmt.Sprintf("%s/%d", name, p))
			}
		} else {
			t.state = topicActive
		}
		close(t.settled)
		t.settled = nil
	}
	if err := e.meta.MarkTopicDeleting(name); err != nil {
		settle(false)
		return fmt.Errorf("topic %s: %w", name, mapMetaErr(err))
	}
	for _, l := range t.parts {
		l.Close()
	}
	err := e.finishDelete(name)
	settle(true)
	return err
}

// finishDelete removes a topic's files and then its meta.db record.
func (e *Engine) finishDelete(name string) error {
	dir := layout.TopicDir(e.opts.Dir, name)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("topic %s: remove files: %w", name, err)
	}
	if err := fsutil.SyncDir(filepath.Join(e.opts.Dir, layout.TopicsDir)); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	if err := e.meta.DeleteTopic(name); err != nil {
		return fmt.Errorf("topic %s: %w", name, mapMetaErr(err))
	}
	return nil
}

// AlterTopic changes a topic's configuration; the change is stored in
// meta.db (one synced commit) before it applies, and applies live:
// retention, cleanup and tombstone retention from the next maintenance pass,
// the segment size from the next batch written (an active segment already
// past the new size rolls before it), the sync mode from the next append
// (appends already made keep the promise they were made under). The
// partition count may grow, never shrink: the new partitions are recorded
// and opened at once, and serve produces and reads as soon as AlterTopic
// returns. The codec is fixed at creation. Whatever is refused
// (ErrInvalidConfig, ErrTooManyTopics past Options.MaxPartitions) changes
// nothing.
func (e *Engine) AlterTopic(name string, cfg TopicConfig) error {
	cfg, err := checkRequest(name, cfg)
	if err != nil {
		return err
	}
	// The topic is marked altering under the engine's lock (it serves on;
	// a create, delete or alter of the same name waits for the change to
	// end), and the I/O — directories, the meta.db commit, the recovery of
	// new partitions — happens outside it, so reads and produces of every
	// topic go on meanwhile.
	t, err := e.beginAlter(name, cfg)
	if err != nil {
		return err
	}
	defer e.ops.Done()
	grown, err := e.alter(t, cfg)
	e.mu.Lock()
	defer e.mu.Unlock()
	if grown != nil {
		for _, l := range grown.parts[len(t.parts):] {
			r := l.Report()
			e.reports[r.Name()] = r
		}
		e.topics[t.name] = grown
		t.grown.close()
	}
	t.state, t.adding = topicActive, 0
	close(t.settled)
	t.settled = nil
	return err
}

// beginAlter marks the active topic name altering, once no create, delete
// or alter of it is under way, and counts the alter in e.ops (the caller
// calls e.ops.Done). What can be refused from the topic's state is refused
// here: a codec change, a shrink, and a grow past Options.MaxPartitions
// (the partitions a grow adds count against it until it ends).
func (e *Engine) beginAlter(name string, cfg TopicConfig) (*topic, error) {
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, ErrClosed
		}
		t, ok := e.topics[name]
		if !ok {
			e.mu.Unlock()
			return nil, fmt.Errorf("%w: %s", ErrTopicNotFound, name)
		}
		if t.state != topicActive {
			settled := t.settled
			e.mu.Unlock()
			<-settled
			continue
		}
		if err := e.checkAlterLocked(t, cfg); err != nil {
			e.mu.Unlock()
			return nil, err
		}
		t.state, t.settled, t.adding = topicAltering, make(chan struct{}), cfg.Partitions-len(t.parts)
		e.ops.Add(1)
		e.mu.Unlock()
		return t, nil
	}
}

// alter stores and applies cfg to t, which is in state altering: only this
// goroutine changes t's partitions or config until it ends. A grow returns
// the topic that replaces t, with the new partitions open.
func (e *Engine) alter(t *topic, cfg TopicConfig) (*topic, error) {
	name, have := t.name, len(t.parts)
	if cfg.Partitions > have {
		if err := e.prepareGrow(name, have, cfg.Partitions); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", name, err)
	}
	if cfg.Partitions > have {
		err = e.meta.GrowTopic(name, cfg.Partitions, raw)
	} else {
		err = e.meta.UpdateTopicConfig(name, raw)
	}
	if err != nil {
		return nil, fmt.Errorf("topic %s: %w", name, mapMetaErr(err))
	}
	// Stored: from here on the change is what the next open applies too.
	for _, l := range t.parts {
		if err := applyLive(l, cfg); err != nil {
			return nil, fmt.Errorf("topic %s: %w", name, err)
		}
	}
	if cfg.Partitions == have {
		t.cfgMu.Lock()
		t.cfg = cfg
		t.cfgMu.Unlock()
		return nil, nil
	}
	parts, err := e.openNewPartitions(name, have, cfg)
	if err != nil {
		t.cfgMu.Lock()
		t.cfg = cfg
		t.cfg.Partitions = have // the rest of the change applies
		kept := t.cfg
		t.cfgMu.Unlock()
		err = fmt.Errorf("topic %s: grow to %d partitions: %w", name, cfg.Partitions, err)
		return nil, e.undoGrow(name, have, cfg.Partitions, kept, err)
	}
	parts = append(append(make([]*plog.Log, 0, cfg.Partitions), t.parts...), parts...)
	return &topic{name: name, createdAt: t.createdAt, parts: parts, cfg: cfg}, nil
}

// growth is a topic's "it has more partitions now" broadcast: a channel
// made on first use and closed once, when the topic is replaced by a grown
// one (or deleted).
type growth struct {
	mu     sync.Mutex // guards c and closed
	c      chan struct{}
	closed bool
}

func (g *growth) channel() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c == nil {
		g.c = make(chan struct{})
		if g.closed {
			close(g.c)
		}
	}
	return g.c
}

func (g *growth) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		if g.c != nil {
			close(g.c)
		}
	}
}

// PartitionsChangedC returns a channel that is closed when topic gains
// partitions (AlterTopic) or is deleted. Take it before Describe: a change
// between the two closes the channel already held, so a reader that
// follows every partition of a topic never misses one.
func (e *Engine) PartitionsChangedC(topic string) (<-chan struct{}, error) {
	t, err := e.topic(topic)
	if err != nil {
		return nil, err
	}
	return t.grown.channel(), nil
}

// openNewPartitions opens partitions from..cfg.Partitions-1 of topic name,
// several at once (as load does): each is independent, and the topic is
// altering, so nothing else opens them (e.mu is not held: this is I/O). On
// error the ones opened are closed again.
func (e *Engine) openNewPartitions(name string, from int, cfg TopicConfig) ([]*plog.Log, error) {
	logs := make([]*plog.Log, cfg.Partitions-from)
	errs := make([]error, len(logs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range logs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			logs[i], errs[i] = e.openPartition(name, from+i, cfg, 0)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, l := range logs {
			if l != nil {
				l.Close()
			}
		}
		return nil, err
	}
	return logs, nil
}

// undoGrow takes back a grow of topic name from have to want partitions
// whose new partitions failed to open (with cause) after the meta.db commit:
// their files are removed first, then meta.db goes back to have partitions
// (keeping the rest of the change, cfg), so the failed grow leaves nothing
// the next open serves. A crash or an error between the two leaves empty
// partitions that the next open opens: a grow, never a loss, since the new
// partitions were never served.
func (e *Engine) undoGrow(name string, have, want int, cfg TopicConfig, cause error) error {
	for p := have; p < want; p++ {
		if err := os.RemoveAll(e.partitionDir(name, p)); err != nil {
			return errors.Join(cause, fmt.Errorf("undoing the grow: %w (meta.db keeps %d partitions: the next open opens them)", err, want))
		}
	}
	if err := fsutil.SyncDir(layout.TopicDir(e.opts.Dir, name)); err != nil {
		return errors.Join(cause, fmt.Errorf("undoing the grow: %w (meta.db keeps %d partitions: the next open opens them)", err, want))
	}
	raw, err := json.Marshal(cfg)
	if err == nil {
		err = e.meta.UndoGrowTopic(name, have, raw)
	}
	if err != nil {
		return errors.Join(cause, fmt.Errorf("undoing the grow: %w (meta.db keeps %d partitions: the next open opens them)", mapMetaErr(err), want))
	}
	return cause
}

// applyLive sets the live options of one open partition to cfg's.
func applyLive(l *plog.Log, cfg TopicConfig) error {
	if err := l.SetSegmentMaxBytes(cfg.SegmentMaxBytes); err != nil {
		return err
	}
	return l.SetSyncMode(cfg.SyncMode)
}

// checkGrowLocked refuses adding n partitions to topic name past
// Options.MaxPartitions. The caller holds e.mu.
// checkAlterLocked refuses what AlterTopic refuses from t's state: a codec
// change, a shrink, and a grow past Options.MaxPartitions.
func (e *Engine) checkAlterLocked(t *topic, cfg TopicConfig) error {
	old, have := t.config(), len(t.parts)
	switch {
	case cfg.Codec != old.Codec:
		return fmt.Errorf("%w: topic %s: the codec is fixed at creation (%s)", ErrInvalidConfig, t.name, old.Codec)
	case cfg.Partitions < have:
		return fmt.Errorf("%w: topic %s: partitions can grow, never shrink (it has %d, asked for %d)", ErrInvalidConfig, t.name, have, cfg.Partitions)
	case cfg.Partitions > have:
		return e.checkGrowLocked(t.name, cfg.Partitions-have)
	}
	return nil
}

func (e *Engine) checkGrowLocked(name string, n int) error {
	parts := 0
	for _, t := range e.topics {
		parts += len(t.parts) + t.adding
	}
	if m := e.opts.MaxPartitions; m >= 0 && parts+n > m {
		return fmt.Errorf("%w: topic %s grows by %d partitions to %d in all, the cap is %d partitions of all topics (--max-partitions)", ErrTooManyTopics, name, n, parts+n, m)
	}
	return nil
}

// prepareGrow makes the directories of partitions from..to-1 of topic
// name before meta.db records them (as CreateTopic does): a crash before
// that commit leaves empty directories beyond the recorded count, which the
// next open reports and does not serve, and which a later grow reuses. A
// directory there that holds anything is not Pulse's to adopt: refused.
func (e *Engine) prepareGrow(name string, from, to int) error {
	for p := from; p < to; p++ {
		dir := e.partitionDir(name, p)
		ents, err := os.ReadDir(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("topic %s partition %d: %w", name, p, err)
		case len(ents) > 0:
			return fmt.Errorf("%w: topic %s: partition directory %s already holds %d files that meta.db does not record; move it away first", ErrInvalidConfig, name, dir, len(ents))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("topic %s partition %d: %w", name, p, err)
		}
	}
	if err := fsutil.SyncDir(layout.TopicDir(e.opts.Dir, name)); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	return nil
}

// Topics describes every topic, sorted by name.
func (e *Engine) Topics() ([]TopicInfo, error) {
	e.mu.RLock()
	closed := e.closed
	e.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	ts := e.activeTopics()
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	out := make([]TopicInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.info())
	}
	return out, nil
}

// Describe describes one topic.
func (e *Engine) Describe(name string) (TopicInfo, error) {
	t, err := e.topic(name)
	if err != nil {
		return TopicInfo{}, err
	}
	return t.info(), nil
}

// Config returns one topic's configuration: Describe without the sizes of
// its partitions, cheap enough for every produce request.
func (e *Engine) Config(name string) (TopicConfig, error) {
	t, err := e.topic(name)
	if err != nil {
		return TopicConfig{}, err
	}
	return t.config(), nil
}

func (t *topic) info() TopicInfo {
	info := TopicInfo{Name: t.name, Config: t.config(), CreatedAt: t.createdAt, Partitions: make([]PartitionInfo, len(t.parts))}
	for p, l := range t.parts {
		info.Partitions[p] = partitionInfo(t.name, p, l)
	}
	return info
}

func partitionInfo(topic string, p int, l *plog.Log) PartitionInfo {
	hwm := l.HWM()
	pi := PartitionInfo{
		Topic: topic, Partition: p,
		LogStart: l.LogStart(), HWM: hwm, LEO: l.LEO(),
		Degraded: l.Degraded(), SkippedRecords: l.SkippedRecords(),
		Compacting: l.Compacting(),
	}
	if err := l.Failure(); err != nil {
		pi.Failed = err.Error()
	}
	if end := l.Report().RecoveredEnd; end > hwm {
		pi.HiddenTail = end - hwm
	}
	pi.Segments, pi.Bytes = l.Size()
	return pi
}

// mapMetaErr translates meta.db errors to the engine's sentinels.
func mapMetaErr(err error) error {
	switch {
	case errors.Is(err, meta.ErrTopicNotFound):
		return fmt.Errorf("%w: %w", ErrTopicNotFound, err)
	case errors.Is(err, meta.ErrTopicExists):
		return fmt.Errorf("%w: %w", ErrTopicExists, err)
	}
	return err
}
