package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/units"
)

// ensureTopic checks that topic exists, creating it with the default
// configuration when allowCreate and auto-creation are on; it returns the
// Kafka error code, 0 when the topic is there.
func (s *Server) ensureTopic(topic string, allowCreate bool) int16 {
	_, code := s.ensureTopicConfig(topic, allowCreate)
	return code
}

// ensureTopicConfig is ensureTopic that also returns the topic's
// configuration. engine.Config is the engine's cheapest call that names a
// topic (it sizes no partition, unlike Describe), and this runs on every
// produce request.
func (s *Server) ensureTopicConfig(topic string, allowCreate bool) (engine.TopicConfig, int16) {
	cfg, err := s.eng.Config(topic)
	if err == nil {
		return cfg, errNone
	}
	if !errors.Is(err, engine.ErrTopicNotFound) || !allowCreate || !s.opts.AutoCreate {
		return cfg, engineErrorCode(err)
	}
	if err := engine.AutoCreate(s.eng, topic, -1); err != nil {
		return cfg, engineErrorCode(err)
	}
	if cfg, err = s.eng.Config(topic); err != nil {
		return cfg, engineErrorCode(err)
	}
	return cfg, errNone
}

func (s *Server) clusterID() *string {
	id, err := s.eng.Identity()
	if err != nil {
		return nil
	}
	return &id.Cluster.ID
}

// metadata answers Metadata: Pulse is broker 0, at the address advertised
// to pr, and the leader of every partition.
func (s *Server) metadata(r *kmsg.MetadataRequest, pr peer) *kmsg.MetadataResponse {
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = nodeID, pr.advHost, pr.advPort
	resp.Brokers = []kmsg.MetadataResponseBroker{b}
	resp.ClusterID = s.clusterID()
	resp.ControllerID = nodeID

	var names []string
	all := r.Topics == nil || (r.GetVersion() == 0 && len(r.Topics) == 0)
	if all {
		infos, _ := s.eng.Topics()
		for _, t := range infos {
			names = append(names, t.Name)
		}
	} else {
		for _, t := range r.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
			}
		}
	}
	allowCreate := !all && (r.GetVersion() < 4 || r.AllowAutoTopicCreation)
	for _, name := range names {
		rt := kmsg.NewMetadataResponseTopic()
		rt.Topic = kmsg.StringPtr(name)
		if code := s.ensureTopic(name, allowCreate); code != 0 {
			rt.ErrorCode = code
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		info, err := s.eng.Describe(name)
		if err != nil {
			rt.ErrorCode = engineErrorCode(err)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		for p := range info.Partitions {
			rp := kmsg.NewMetadataResponseTopicPartition()
			rp.Partition = int32(p)
			rp.Leader = nodeID
			rp.Replicas = []int32{nodeID}
			rp.ISR = []int32{nodeID}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// createTopics creates topics; Kafka configs Pulse has an equivalent for
// are honoured (docs/kafka.md), others are ignored.
func (s *Server) createTopics(r *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		cfg, code, msg := topicConfig(t)
		if code == 0 {
			if err := engine.ValidateTopicName(t.Topic); err != nil {
				code, msg = errInvalidTopic, err.Error()
			} else if _, err := s.eng.Describe(t.Topic); err == nil {
				code, msg = errTopicAlreadyExists, "topic "+t.Topic+" already exists"
			} else {
				create := s.eng.CreateTopic
				if r.ValidateOnly {
					create = s.eng.CheckCreate
				}
				if err := create(t.Topic, cfg); err != nil {
					code, msg = engineErrorCode(err), err.Error()
					if code == errUnknownServerError {
						code = errInvalidConfig
					}
				}
			}
		}
		rt.ErrorCode = code
		if msg != "" {
			rt.ErrorMessage = kmsg.StringPtr(msg)
		}
		if code == 0 {
			// As a Kafka broker (KIP-525, v5+), with validate_only too:
			// the topic as created, or as it would be.
			if !r.ValidateOnly {
				if stored, err := s.eng.Config(t.Topic); err == nil {
					cfg = stored
				}
			}
			rt.NumPartitions = int32(cfg.Partitions)
			rt.ReplicationFactor = 1
			for _, e := range topicConfigEntries(cfg) {
				rc := kmsg.NewCreateTopicsResponseTopicConfig()
				rc.Name, rc.Value, rc.ReadOnly, rc.Source = e.name, kmsg.StringPtr(e.value), e.readOnly, int8(e.source)
				rt.Configs = append(rt.Configs, rc)
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// topicConfig translates a CreateTopics entry to an engine config: the
// default one with the entry's settings.
func topicConfig(t kmsg.CreateTopicsRequestTopic) (engine.TopicConfig, int16, string) {
	cfg := engine.DefaultTopicConfig()
	if t.NumPartitions > 0 {
		cfg.Partitions = int(t.NumPartitions)
	} else if t.NumPartitions == 0 || t.NumPartitions < -1 {
		return cfg, errInvalidPartitions, "partitions must be at least 1"
	}
	if len(t.ReplicaAssignment) > 0 {
		cfg.Partitions = len(t.ReplicaAssignment)
	}
	if err := engine.CheckPartitions(cfg.Partitions); err != nil {
		return cfg, errInvalidPartitions, err.Error()
	}
	for _, a := range t.ReplicaAssignment {
		if msg, ok := replicasOnPulse(a.Replicas); !ok {
			return cfg, errInvalidReplicaAssignment, msg
		}
	}
	if t.ReplicationFactor > 1 || t.ReplicationFactor == 0 || t.ReplicationFactor < -1 {
		return cfg, errInvalidReplicationFactor, "Pulse is one broker: replication factor must be 1"
	}
	for _, c := range t.Configs {
		if c.Value == nil {
			continue
		}
		if code, msg := setTopicConfig(&cfg, c.Name, *c.Value); code != 0 {
			return cfg, code, msg
		}
	}
	return cfg, 0, ""
}

// setTopicConfig sets the Kafka-named topic setting name to v in cfg (the
// names CreateTopics and IncrementalAlterConfigs take; others are ignored,
// as a broker ignores settings it has no use for). A bad value is
// INVALID_CONFIG with a message naming it.
func setTopicConfig(cfg *engine.TopicConfig, name, v string) (int16, string) {
	bad := func() (int16, string) {
		return errInvalidConfig, "config " + name + "=" + v + " is invalid"
	}
	switch name {
	case "cleanup.policy":
		switch v {
		case "delete":
			cfg.Cleanup = engine.CleanupDelete
		case "compact":
			cfg.Cleanup = engine.CleanupCompact
		default:
			return bad()
		}
	case "retention.ms":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			return bad()
		}
		// -1 or 0: no limit; so is anything past what a Duration holds
		// (Long.MAX_VALUE is Kafka's other "forever").
		cfg.RetentionMaxAge = 0
		if n > 0 && n <= units.MaxDurationMillis {
			cfg.RetentionMaxAge = time.Duration(n) * time.Millisecond
		}
	case "retention.bytes":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			return bad()
		}
		cfg.RetentionMaxBytes = max(n, 0) // -1: no limit
	case "segment.bytes":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || engine.CheckSegmentBytes(n) != nil {
			return bad()
		}
		cfg.SegmentMaxBytes = n
	case "delete.retention.ms":
		// How long compaction keeps a tombstone. 0 (remove at the next
		// pass) is 1 ms: the engine's zero is its 24 h default.
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		cfg.TombstoneRetention = time.Millisecond
		if n > 0 {
			cfg.TombstoneRetention = time.Duration(min(n, units.MaxDurationMillis)) * time.Millisecond
		}
	case "pulse.sync.mode":
		m, err := engine.ParseSyncMode(v)
		if err != nil {
			return bad()
		}
		cfg.SyncMode = m
	case "flush.messages":
		// Kafka fsyncs every flush.messages messages: 1 is every write,
		// more (its default is Long.MAX_VALUE) leaves it to the interval.
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n < 1:
			return bad()
		case n == 1:
			cfg.SyncMode = engine.SyncEveryWrite
		default:
			cfg.SyncMode = engine.SyncInterval
		}
	}
	return 0, ""
}

func (s *Server) deleteTopics(r *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	for _, name := range r.TopicNames {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic = kmsg.StringPtr(name)
		if err := s.eng.DeleteTopic(name); err != nil {
			rt.ErrorCode = engineErrorCode(err)
			rt.ErrorMessage = kmsg.StringPtr(err.Error())
		} else {
			s.pids.forgetTopic(name)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// describeConfigs describes topics (with their Kafka-named settings) and
// the broker.
func (s *Server) describeConfigs(r *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range r.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		var entries []configEntry
		switch res.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			info, err := s.eng.Describe(res.ResourceName)
			if err != nil {
				rr.ErrorCode = engineErrorCode(err)
				rr.ErrorMessage = kmsg.StringPtr(err.Error())
				break
			}
			entries = topicConfigEntries(info.Config)
		case kmsg.ConfigResourceTypeBroker:
			// As in Kafka: this broker's id, or "" for the defaults.
			if res.ResourceName != "" && res.ResourceName != strconv.Itoa(nodeID) {
				rr.ErrorCode = errInvalidRequest
				rr.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Pulse is broker %d: no broker %q", nodeID, res.ResourceName))
				break
			}
			for _, e := range [][2]string{
				{"auto.create.topics.enable", strconv.FormatBool(s.opts.AutoCreate)},
				{"num.partitions", "1"},
				{"default.replication.factor", "1"},
				{"socket.request.max.bytes", strconv.Itoa(s.opts.MaxRequestBytes)},
			} {
				entries = append(entries, configEntry{name: e[0], value: e[1], readOnly: true, source: kmsg.ConfigSourceStaticBrokerConfig})
			}
		default:
			rr.ErrorCode = errInvalidRequest
			rr.ErrorMessage = kmsg.StringPtr("Pulse describes topic and broker configs only")
		}
		want := map[string]bool{}
		for _, k := range res.ConfigNames {
			want[k] = true
		}
		for _, e := range entries {
			if res.ConfigNames != nil && !want[e.name] {
				continue
			}
			rc := kmsg.NewDescribeConfigsResponseResourceConfig()
			rc.Name, rc.Value, rc.ReadOnly, rc.Source = e.name, kmsg.StringPtr(e.value), e.readOnly, e.source
			rc.IsDefault = e.source == kmsg.ConfigSourceDefaultConfig
			rr.Configs = append(rr.Configs, rc)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// topicConfigKV is a topic configuration under its Kafka names, in the
// order DescribeConfigs lists them.
func topicConfigKV(c engine.TopicConfig) [][2]string {
	retMS, retBytes := int64(-1), int64(-1)
	if c.RetentionMaxAge > 0 {
		retMS = c.RetentionMaxAge.Milliseconds()
	}
	if c.RetentionMaxBytes > 0 {
		retBytes = c.RetentionMaxBytes
	}
	return [][2]string{
		{"cleanup.policy", string(c.Cleanup)},
		{"retention.ms", strconv.FormatInt(retMS, 10)},
		{"retention.bytes", strconv.FormatInt(retBytes, 10)},
		{"segment.bytes", strconv.FormatInt(c.SegmentMaxBytes, 10)},
		{"delete.retention.ms", strconv.FormatInt(c.TombstoneRetention.Milliseconds(), 10)},
		{"message.timestamp.type", "LogAppendTime"},
		{"min.insync.replicas", "1"},
		{"pulse.codec", c.Codec},
		{"pulse.sync.mode", string(c.SyncMode)},
		{"flush.messages", FlushMessages(c.SyncMode)},
	}
}

// configEntry is one setting as DescribeConfigs and CreateTopics (v5+)
// describe it.
type configEntry struct {
	name, value string
	readOnly    bool
	source      kmsg.ConfigSource
}

// topicConfigEntries is a topic configuration as Kafka's responses
// describe it: topicConfigKV's names and values, read-only unless
// alterable, DEFAULT_CONFIG where the value is the one a topic gets when
// nothing sets it (and what an IncrementalAlterConfigs DELETE returns it
// to), DYNAMIC_TOPIC_CONFIG otherwise, so Kafka's tools list only the
// other ones as the topic's own.
func topicConfigEntries(c engine.TopicConfig) []configEntry {
	kv := topicConfigKV(c)
	entries := make([]configEntry, len(kv))
	for i, e := range kv {
		entries[i] = configEntry{name: e[0], value: e[1], readOnly: !alterable[e[0]], source: kmsg.ConfigSourceDynamicTopicConfig}
		if e[1] == topicDefaults[e[0]] {
			entries[i].source = kmsg.ConfigSourceDefaultConfig
		}
	}
	return entries
}

// topicDefaults are the values of engine.DefaultTopicConfig under their
// Kafka names: what DescribeConfigs reports as DEFAULT_CONFIG.
var topicDefaults = func() map[string]string {
	m := map[string]string{}
	for _, e := range topicConfigKV(engine.DefaultTopicConfig()) {
		m[e[0]] = e[1]
	}
	return m
}()

// alterable is the topic settings IncrementalAlterConfigs changes.
var alterable = map[string]bool{
	"cleanup.policy": true, "retention.ms": true, "retention.bytes": true,
	"segment.bytes": true, "delete.retention.ms": true, "pulse.sync.mode": true, "flush.messages": true,
}

// incrementalAlterConfigs changes topic settings (SET and DELETE of the
// alterable ones, each applied live by engine.AlterTopic; the partition
// count grows through CreatePartitions).
func (s *Server) incrementalAlterConfigs(r *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	def := engine.DefaultTopicConfig()
	for _, res := range r.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		code, msg := func() (int16, string) {
			if res.ResourceType != kmsg.ConfigResourceTypeTopic {
				return errInvalidRequest, "Pulse alters topic configs only"
			}
			info, err := s.eng.Describe(res.ResourceName)
			if err != nil {
				return engineErrorCode(err), err.Error()
			}
			cfg := info.Config
			for _, c := range res.Configs {
				switch c.Op {
				case kmsg.IncrementalAlterConfigOpSet:
					if c.Value == nil {
						return errInvalidConfig, "config " + c.Name + " set without a value"
					}
					if code, msg := setTopicConfig(&cfg, c.Name, *c.Value); code != 0 {
						return code, msg
					}
				case kmsg.IncrementalAlterConfigOpDelete: // back to the default
					switch c.Name {
					case "cleanup.policy":
						cfg.Cleanup = def.Cleanup
					case "retention.ms":
						cfg.RetentionMaxAge = def.RetentionMaxAge
					case "retention.bytes":
						cfg.RetentionMaxBytes = def.RetentionMaxBytes
					case "segment.bytes":
						cfg.SegmentMaxBytes = def.SegmentMaxBytes
					case "delete.retention.ms":
						cfg.TombstoneRetention = def.TombstoneRetention
					case "pulse.sync.mode", "flush.messages":
						cfg.SyncMode = def.SyncMode
					}
				default:
					return errInvalidRequest, "config " + c.Name + ": only SET and DELETE apply to a topic's settings"
				}
			}
			alter := s.eng.AlterTopic
			if r.ValidateOnly {
				alter = s.eng.CheckAlter
			}
			if err := alter(res.ResourceName, cfg); err != nil {
				return engineErrorCode(err), err.Error()
			}
			return 0, ""
		}()
		rr.ErrorCode = code
		if msg != "" {
			rr.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// findCoordinator names Pulse, at the address advertised to pr, as the
// coordinator of every group. Pulse has no transactions: a transactional
// id gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which clients take as
// fatal at once (COORDINATOR_NOT_AVAILABLE they would retry until they
// give up), and no coordinator, as in Kafka's error answers.
func (s *Server) findCoordinator(r *kmsg.FindCoordinatorRequest, pr peer) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	node, host, port := int32(nodeID), pr.advHost, pr.advPort
	code, msg := int16(0), (*string)(nil)
	switch r.CoordinatorType {
	case 0: // group
	case 1: // transaction
		code, msg = errTransactionalIDAuthorizationFailed, kmsg.StringPtr(noTransactions)
	default:
		code, msg = errInvalidRequest, kmsg.StringPtr(fmt.Sprintf("unknown coordinator type %d", r.CoordinatorType))
	}
	if code != 0 {
		node, host, port = -1, "", -1
	}
	if r.GetVersion() >= 4 {
		for _, k := range r.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.Host, c.Port, c.ErrorCode, c.ErrorMessage = k, node, host, port, code, msg
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp
	}
	resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = code, msg, node, host, port
	return resp
}

// noTransactions is the message of every refusal of a transactional id.
const noTransactions = "Pulse has no transactions: a transactional id cannot be used"
