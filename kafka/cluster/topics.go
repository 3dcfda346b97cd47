package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka"
	"github.com/pulselog/pulse/kafka/cluster/clusterinfo"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topics lists the cluster's topics (internal ones excluded), sorted by name.
func (s *Source) Topics() ([]engine.TopicInfo, error) {
	ds, err := s.describeTopics()
	if err != nil {
		return nil, err
	}
	out := make([]engine.TopicInfo, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.info)
	}
	return out, nil
}

// Describe describes one topic: its configuration as Pulse names it and,
// per partition, log start and high watermark (LEO is the HWM: a cluster
// shows no hidden tail). Segments is -1 (a cluster has no segment listing
// Pulse can read) and Bytes is -1 where DescribeLogDirs is not allowed.
func (s *Source) Describe(name string) (engine.TopicInfo, error) {
	d, err := s.describeTopic(name)
	if err != nil {
		return engine.TopicInfo{}, err
	}
	return d.info, nil
}

// ClusterTopic describes one topic as the cluster sees it: replication
// factor, non-default configs, and per partition leader, replicas, ISR, log
// start, HWM, last stable offset and size.
func (s *Source) ClusterTopic(name string) (clusterinfo.Topic, error) {
	d, err := s.describeTopic(name)
	if err != nil {
		return clusterinfo.Topic{}, err
	}
	return d.cluster, nil
}

type described struct {
	info    engine.TopicInfo
	cluster clusterinfo.Topic
}

func (s *Source) describeTopic(name string) (described, error) {
	if err := engine.ValidateTopicName(name); err != nil {
		return described{}, err
	}
	ds, err := s.describe([]string{name})
	if err != nil {
		return described{}, err
	}
	return ds[0], nil
}

func (s *Source) describeTopics() ([]described, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	// Asked of the cluster, not of the client's cache: a topic the Source
	// just altered, created or deleted is purged from that cache (forget),
	// and a list of all topics answered from it would leave it out.
	md, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, s.acl)
	if err != nil {
		return nil, mapErr("list topics", err)
	}
	var names []string
	for _, t := range md.Topics {
		if t.Topic != nil && !t.IsInternal && t.ErrorCode == 0 {
			names = append(names, *t.Topic)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return s.describe(names)
}

// describe gathers metadata, offsets, configs and sizes of names in one
// request of each kind; a missing topic is engine.ErrTopicNotFound.
func (s *Source) describe(names []string) ([]described, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	md, err := s.adm.Metadata(ctx, names...)
	if err != nil {
		return nil, mapErr("metadata", err)
	}
	for _, n := range names {
		t, ok := md.Topics[n]
		if !ok {
			return nil, fmt.Errorf("topic %q: %w", n, engine.ErrTopicNotFound)
		}
		if t.Err != nil {
			return nil, mapErr(fmt.Sprintf("topic %q", n), t.Err)
		}
	}
	starts, err := s.adm.ListStartOffsets(ctx, names...)
	if err != nil {
		return nil, mapErr("list start offsets", err)
	}
	ends, err := s.adm.ListEndOffsets(ctx, names...)
	if err != nil {
		return nil, mapErr("list end offsets", err)
	}
	stable, err := s.adm.ListCommittedOffsets(ctx, names...)
	if err != nil {
		return nil, mapErr("list stable offsets", err)
	}
	cfgs, err := s.adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return nil, mapErr("describe configs", err)
	}
	sizes, sizesOK := s.sizes(names)

	sort.Strings(names)
	out := make([]described, 0, len(names))
	for _, n := range names {
		t := md.Topics[n]
		var d described
		d.info.Name = n
		d.cluster.Name = n
		d.cluster.SizeKnown = sizesOK
		d.cluster.Configs = map[string]string{}
		if rc, err := cfgs.On(n, nil); err == nil && rc.Err == nil {
			for _, c := range rc.Configs {
				if c.Value != nil && c.Source != kmsg.ConfigSourceDefaultConfig {
					d.cluster.Configs[c.Key] = *c.Value
				}
			}
			d.info.Config = topicConfig(rc.Configs)
		}
		d.info.Config.Partitions = len(t.Partitions)
		for p := 0; p < len(t.Partitions); p++ {
			pd := t.Partitions[int32(p)]
			if len(pd.Replicas) > d.cluster.ReplicationFactor {
				d.cluster.ReplicationFactor = len(pd.Replicas)
			}
			cp := clusterinfo.Partition{Partition: p, Leader: pd.Leader, Replicas: pd.Replicas, ISR: pd.ISR, Size: -1}
			if pd.Err != nil {
				cp.Err = pd.Err.Error()
			}
			if o, ok := starts.Lookup(n, int32(p)); ok && o.Err == nil {
				cp.LogStart = o.Offset
			}
			if o, ok := ends.Lookup(n, int32(p)); ok && o.Err == nil {
				cp.HWM = o.Offset
			} else if ok && o.Err != nil && cp.Err == "" {
				cp.Err = o.Err.Error()
			}
			if o, ok := stable.Lookup(n, int32(p)); ok && o.Err == nil {
				cp.LSO = o.Offset
			}
			if sizesOK {
				cp.Size = sizes[n][int32(p)]
			}
			d.cluster.Partitions = append(d.cluster.Partitions, cp)
			d.info.Partitions = append(d.info.Partitions, engine.PartitionInfo{
				Topic: n, Partition: p, LogStart: cp.LogStart, HWM: cp.HWM, LEO: cp.HWM,
				Segments: -1, Bytes: cp.Size,
			})
		}
		out = append(out, d)
	}
	return out, nil
}

// sizes returns each partition's size on its leader from DescribeLogDirs;
// ok is false when the cluster does not allow or answer it.
func (s *Source) sizes(names []string) (map[string]map[int32]int64, bool) {
	ctx, cancel := s.opCtx()
	defer cancel()
	set := make(kadm.TopicsSet)
	for _, n := range names {
		set.Add(n)
	}
	all, err := s.adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		return nil, false
	}
	out := map[string]map[int32]int64{}
	any := false
	for _, dirs := range all {
		for _, dir := range dirs {
			if dir.Err != nil {
				continue
			}
			for t, ps := range dir.Topics {
				for p, dp := range ps {
					any = true
					if out[t] == nil {
						out[t] = map[int32]int64{}
					}
					// Replicas hold the same log: keep the largest copy, which
					// is the leader's or an up-to-date follower's.
					out[t][p] = max(out[t][p], dp.Size)
				}
			}
		}
	}
	return out, any
}

// topicConfig reads the Kafka configs Pulse has a name for. A cluster
// that reports no flush.messages fsyncs by its own schedule: interval, as
// Kafka's default flush.messages means.
func topicConfig(cs []kadm.Config) engine.TopicConfig {
	tc := engine.TopicConfig{SyncMode: engine.SyncInterval}
	for _, c := range cs {
		if c.Value == nil {
			continue
		}
		v := *c.Value
		switch c.Key {
		case "compression.type":
			tc.Codec = v
		case "segment.bytes":
			tc.SegmentMaxBytes, _ = strconv.ParseInt(v, 10, 64)
		case "retention.ms":
			if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
				tc.RetentionMaxAge = time.Duration(ms) * time.Millisecond
			}
		case "retention.bytes":
			if b, err := strconv.ParseInt(v, 10, 64); err == nil && b > 0 {
				tc.RetentionMaxBytes = b
			}
		case "flush.messages", "pulse.sync.mode", "delete.retention.ms":
			// The listener's mappings (flush.messages 1 is every-write,
			// delete.retention.ms the tombstone retention); a value it
			// cannot read keeps the default.
			kafka.SetTopicConfig(&tc, c.Key, v)
		case "cleanup.policy":
			if v == "compact" || v == "compact,delete" || v == "delete,compact" {
				tc.Cleanup = engine.CleanupCompact
			} else {
				tc.Cleanup = engine.CleanupDelete
			}
		}
	}
	return tc
}

// kafkaConfigs turns the parts of a Pulse topic config a cluster has into
// Kafka topic configs. The sync mode interval is flush.messages as the
// listener maps it; the default (every-write, what a create that names
// none gets) leaves the cluster its own flush.messages, so that a topic
// created through Pulse does not fsync every message of a real cluster
// unasked (it reads back as the cluster has it: interval on Kafka's
// default). A tombstone retention other than the default is
// delete.retention.ms. A codec other than Pulse's stored ones is refused,
// and so is protect_cursors, which a cluster has no setting for.
func kafkaConfigs(cfg engine.TopicConfig) (map[string]*string, error) {
	def := engine.DefaultTopicConfig()
	out := map[string]*string{}
	set := func(k, v string) { out[k] = &v }
	switch cfg.SyncMode {
	case "", def.SyncMode:
	case engine.SyncInterval:
		set("flush.messages", kafka.FlushMessages(cfg.SyncMode))
	default:
		return nil, fmt.Errorf("%w: sync mode %q (want every-write or interval)", engine.ErrInvalidConfig, cfg.SyncMode)
	}
	switch cfg.Codec {
	case "", "zstd", "none":
		// Pulse's stored codec; the cluster keeps the producer's ("producer").
	default:
		return nil, fmt.Errorf("%w: codec %q", engine.ErrInvalidConfig, cfg.Codec)
	}
	// Settings of Pulse's own retention and compaction that a cluster
	// cannot be given: refused rather than dropped, so that nobody counts
	// on a promise the cluster does not keep.
	if cfg.ProtectCursors {
		return nil, fmt.Errorf("%w: protect_cursors: a cluster's retention does not know Pulse's consumer cursors", engine.ErrInvalidConfig)
	}
	if cfg.TombstoneRetention != 0 && cfg.TombstoneRetention != def.TombstoneRetention {
		set("delete.retention.ms", strconv.FormatInt(cfg.TombstoneRetention.Milliseconds(), 10))
	}
	if cfg.SegmentMaxBytes > 0 && cfg.SegmentMaxBytes != def.SegmentMaxBytes {
		set("segment.bytes", strconv.FormatInt(cfg.SegmentMaxBytes, 10))
	}
	if cfg.RetentionMaxAge > 0 {
		set("retention.ms", strconv.FormatInt(cfg.RetentionMaxAge.Milliseconds(), 10))
	}
	if cfg.RetentionMaxBytes > 0 {
		set("retention.bytes", strconv.FormatInt(cfg.RetentionMaxBytes, 10))
	}
	switch cfg.Cleanup {
	case "", engine.CleanupDelete:
	case engine.CleanupCompact:
		set("cleanup.policy", "compact")
	default:
		return nil, fmt.Errorf("%w: cleanup %q", engine.ErrInvalidConfig, cfg.Cleanup)
	}
	return out, nil
}

// checkPartitionCount holds a topic's partition count to the bound it has
// on a data dir (engine.MaxPartitions; 0 is the default count), so that a
// count the websocket API documents as invalid_config never reaches the
// cluster.
func checkPartitionCount(n int) error {
	if n < 0 || n > engine.MaxPartitions {
		return fmt.Errorf("%w: partitions %d, want 1..%d", engine.ErrInvalidConfig, n, engine.MaxPartitions)
	}
	return nil
}

// CreateTopic creates a topic with the cluster's default replication
// factor. The partition count and the segment size are held to the
// engine's bounds first (a bad one is engine.ErrInvalidConfig naming it,
// and nothing is sent); the cluster checks the rest.
func (s *Source) CreateTopic(name string, cfg engine.TopicConfig) error {
	if err := engine.ValidateTopicName(name); err != nil {
		return err
	}
	if err := checkPartitionCount(cfg.Partitions); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	if cfg.SegmentMaxBytes != 0 {
		if err := engine.CheckSegmentBytes(cfg.SegmentMaxBytes); err != nil {
			return fmt.Errorf("topic %s: %w", name, err)
		}
	}
	parts := cfg.Partitions
	if parts == 0 {
		parts = engine.DefaultTopicConfig().Partitions
	}
	kc, err := kafkaConfigs(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.adm.CreateTopic(ctx, int32(parts), -1, kc, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return mapErr(fmt.Sprintf("create topic %q", name), err)
	}
	s.forget(name)
	return nil
}

// DeleteTopic deletes a topic on the cluster.
func (s *Source) DeleteTopic(name string) error {
	if err := engine.ValidateTopicName(name); err != nil {
		return err
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.adm.DeleteTopic(ctx, name)
	if err == nil {
		err = resp.Err
	}
	s.forget(name)
	s.grow.grown(name)
	if err != nil {
		return mapErr(fmt.Sprintf("delete topic %q", name), err)
	}
	return nil
}

// partitions returns topic's partition count, cached for partsTTL.
func (s *Source) partitions(topic string) (int, error) {
	s.mu.Lock()
	e, ok := s.parts[topic]
	s.mu.Unlock()
	if ok && time.Since(e.at) < partsTTL {
		return e.n, nil
	}
	if err := engine.ValidateTopicName(topic); err != nil {
		return 0, err
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	md, err := s.adm.Metadata(ctx, topic)
	if err != nil {
		return 0, mapErr("metadata", err)
	}
	t, ok := md.Topics[topic]
	if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
		// kgo may answer from a cached "unknown": ask the cluster once more
		// so that a topic another client just created is found.
		s.forget(topic)
		if md, err = s.adm.Metadata(ctx, topic); err != nil {
			return 0, mapErr("metadata", err)
		}
		t, ok = md.Topics[topic]
	}
	if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
		return 0, fmt.Errorf("topic %q: %w", topic, engine.ErrTopicNotFound)
	}
	if t.Err != nil {
		return 0, mapErr(fmt.Sprintf("topic %q", topic), t.Err)
	}
	n := len(t.Partitions)
	s.mu.Lock()
	s.parts[topic] = partsEntry{n: n, at: time.Now()}
	s.mu.Unlock()
	return n, nil
}

// forget drops what the Source and its client cached about topic (kgo
// caches metadata, including "unknown topic", for a while), after a create
// or delete made it stale.
func (s *Source) forget(topic string) {
	s.mu.Lock()
	delete(s.parts, topic)
	s.mu.Unlock()
	s.acl.PurgeTopicsFromClient(topic)
	s.cl.PurgeTopicsFromClient(topic)
}

// forgetAltered drops what the Source cached about topic after an alter:
// the admin client's metadata, not the producer's. Purged, the producer
// would forget its sequence numbers on the topic and start each partition
// again at 0, which a broker takes for a duplicate of the record it
// already has with that number and drops, acking it. After a grow to n
// partitions the producer refreshes its metadata instead, and the alter
// returns once it knows the new partitions (when it knows the topic at
// all), so that a produce to one of them right after is not refused.
func (s *Source) forgetAltered(topic string, grew bool, n int) {
	s.mu.Lock()
	delete(s.parts, topic)
	s.mu.Unlock()
	s.acl.PurgeTopicsFromClient(topic)
	if !grew {
		return
	}
	if leader, _, _ := s.cl.PartitionLeader(topic, 0); leader < 0 {
		return // never produced to: the producer loads it when it is
	}
	ctx, cancel := s.opCtx()
	defer cancel()
	for {
		s.cl.ForceMetadataRefresh()
		if leader, _, _ := s.cl.PartitionLeader(topic, int32(n-1)); leader >= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return // the producer learns them at its next refresh
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkPartition returns ErrPartitionOutOfRange when p is not a partition
// of topic.
func (s *Source) checkPartition(topic string, p int) error {
	n, err := s.partitions(topic)
	if err != nil {
		return err
	}
	if p < 0 || p >= n {
		return fmt.Errorf("%w: partition %d of topic %q: the topic has %d", engine.ErrPartitionOutOfRange, p, topic, n)
	}
	return nil
}

// AlterTopic changes a topic on the cluster as engine.AlterTopic does on a
// data dir: retention, cleanup, segment size, sync mode and tombstone
// retention through IncrementalAlterConfigs (SET of what cfg gives, DELETE
// back to the cluster's default of the retention it leaves unset;
// segment.bytes; flush.messages, 1 for every-write and Kafka's default for
// interval, as Pulse's own listener maps it; delete.retention.ms), and the
// partition count through CreatePartitions (it grows, never shrinks). A
// zero SegmentMaxBytes or TombstoneRetention or an empty SyncMode keeps the
// topic's, and each of those three is sent only when it differs from it.
// Every value is checked with the listener's config parser
// (kafka.SetTopicConfig) and the whole change is first validated by the
// cluster (validate-only requests), so a refused alter changes nothing.
// The codec is fixed at creation.
func (s *Source) AlterTopic(name string, cfg engine.TopicConfig) error {
	if err := engine.ValidateTopicName(name); err != nil {
		return err
	}
	cur, err := s.Describe(name)
	if err != nil {
		return err
	}
	old := cur.Config
	if cfg.Codec != "" && cfg.Codec != old.Codec {
		return fmt.Errorf("%w: topic %s: the codec is fixed at creation", engine.ErrInvalidConfig, name)
	}
	if err := checkPartitionCount(cfg.Partitions); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	if cfg.Partitions < old.Partitions {
		return fmt.Errorf("%w: topic %s: partitions %d: a topic's partitions grow, never shrink (it has %d)", engine.ErrInvalidConfig, name, cfg.Partitions, old.Partitions)
	}
	var alter []kadm.AlterConfig
	var bad error
	check := engine.TopicConfig{}
	set := func(k, v string) {
		if err := kafka.SetTopicConfig(&check, k, v); err != nil && bad == nil {
			bad = fmt.Errorf("topic %s: %w", name, err)
		}
		alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	del := func(k string) { alter = append(alter, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k}) }
	switch cfg.Cleanup {
	case engine.CleanupCompact:
		set("cleanup.policy", "compact")
	case "", engine.CleanupDelete:
		set("cleanup.policy", "delete")
	default:
		return fmt.Errorf("%w: cleanup %q", engine.ErrInvalidConfig, cfg.Cleanup)
	}
	if cfg.RetentionMaxAge > 0 {
		set("retention.ms", strconv.FormatInt(cfg.RetentionMaxAge.Milliseconds(), 10))
	} else {
		del("retention.ms")
	}
	if cfg.RetentionMaxBytes > 0 {
		set("retention.bytes", strconv.FormatInt(cfg.RetentionMaxBytes, 10))
	} else {
		del("retention.bytes")
	}
	if cfg.SegmentMaxBytes != 0 && cfg.SegmentMaxBytes != old.SegmentMaxBytes {
		set("segment.bytes", strconv.FormatInt(cfg.SegmentMaxBytes, 10))
	}
	if cfg.SyncMode != "" && cfg.SyncMode != old.SyncMode {
		if _, err := engine.ParseSyncMode(string(cfg.SyncMode)); err != nil {
			return fmt.Errorf("topic %s: %w", name, err)
		}
		set("flush.messages", kafka.FlushMessages(cfg.SyncMode))
	}
	if cfg.TombstoneRetention != 0 && cfg.TombstoneRetention != old.TombstoneRetention {
		set("delete.retention.ms", strconv.FormatInt(cfg.TombstoneRetention.Milliseconds(), 10))
	}
	if bad != nil {
		return bad
	}
	grow := cfg.Partitions > old.Partitions
	defer s.forgetAltered(name, grow, cfg.Partitions)

	// The cluster validates both parts before either applies.
	if err := s.alterConfigs(name, alter, true); err != nil {
		return err
	}
	if grow {
		if err := s.updatePartitions(name, cfg.Partitions, true); err != nil {
			return err
		}
	}
	if err := s.alterConfigs(name, alter, false); err != nil {
		return err
	}
	if grow {
		if err := s.updatePartitions(name, cfg.Partitions, false); err != nil {
			return fmt.Errorf("topic %s: the settings changed but the partitions did not grow: %w", name, err)
		}
		s.grow.grown(name)
	}
	return nil
}

// alterConfigs sends one IncrementalAlterConfigs of topic name (validate
// only, or applied).
func (s *Source) alterConfigs(name string, alter []kadm.AlterConfig, validate bool) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	send, what := s.adm.AlterTopicConfigs, "alter topic %q"
	if validate {
		send, what = s.adm.ValidateAlterTopicConfigs, "alter topic %q (validating)"
	}
	resp, err := send(ctx, alter, name)
	if err == nil {
		var r kadm.AlterConfigsResponse
		if r, err = resp.On(name, nil); err == nil {
			err = r.Err
			if err != nil && r.ErrMessage != "" {
				err = fmt.Errorf("%w: %s", err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		return mapErr(fmt.Sprintf(what, name), err)
	}
	return nil
}

// updatePartitions grows topic name to n partitions with CreatePartitions
// (validate only, or applied).
func (s *Source) updatePartitions(name string, n int, validate bool) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	send, what := s.adm.UpdatePartitions, "grow topic %q to %d partitions"
	if validate {
		send, what = s.adm.ValidateUpdatePartitions, "grow topic %q to %d partitions (validating)"
	}
	resp, err := send(ctx, n, name)
	if err == nil {
		var r kadm.CreatePartitionsResponse
		if r, err = resp.On(name, nil); err == nil {
			err = r.Err
			if err != nil && r.ErrMessage != "" {
				err = fmt.Errorf("%w: %s", err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		return mapErr(fmt.Sprintf(what, name, n), err)
	}
	return nil
}

// topicState is what the cluster says of a topic now: its id (all zero
// from a broker without topic ids, Pulse's own listener among them) and
// its partition count.
type topicState struct {
	id         [16]byte
	partitions int
}

// topicState asks the cluster, bypassing every cache, for topic's id and
// partition count; engine.ErrTopicNotFound when it has no such topic. The
// request does not allow auto-creation. It gives up when ctx ends, or
// after opTimeout.
func (s *Source) topicState(ctx context.Context, topic string) (topicState, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.acl)
	if err != nil {
		return topicState{}, mapErr("metadata", err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				break
			}
			return topicState{}, mapErr(fmt.Sprintf("topic %q", topic), err)
		}
		return topicState{id: t.TopicID, partitions: len(t.Partitions)}, nil
	}
	return topicState{}, fmt.Errorf("topic %q: %w", topic, engine.ErrTopicNotFound)
}

// growPartitions grows topic to n partitions, leaving its configuration
// as it is, and returns once the producer knows the new partitions (or
// its next metadata refresh will).
func (s *Source) growPartitions(topic string, n int) error {
	if err := checkPartitionCount(n); err != nil {
		return fmt.Errorf("topic %s: %w", topic, err)
	}
	defer s.forgetAltered(topic, true, n)
	if err := s.updatePartitions(topic, n, false); err != nil {
		return err
	}
	s.grow.grown(topic)
	return nil
}
