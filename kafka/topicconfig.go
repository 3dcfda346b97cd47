package kafka

import (
	"fmt"

	"github.com/pulselog/pulse/engine"
)

// SetTopicConfig sets the Kafka-named topic setting name (cleanup.policy,
// retention.ms, retention.bytes, segment.bytes, flush.messages,
// pulse.sync.mode) to value in cfg, as this listener's CreateTopics and
// IncrementalAlterConfigs read it; other names are ignored. A bad value is
// an error wrapping engine.ErrInvalidConfig that names it. The Kafka-cluster
// source (kafka/cluster) translates with it too, so both speak one mapping.
func SetTopicConfig(cfg *engine.TopicConfig, name, value string) error {
	if code, msg := setTopicConfig(cfg, name, value); code != 0 {
		return fmt.Errorf("%w: %s", engine.ErrInvalidConfig, msg)
	}
	return nil
}

// FlushMessages is the flush.messages value that means sync mode m: 1 for
// every-write, Kafka's default (no fsync by message count) for interval.
func FlushMessages(m engine.SyncMode) string {
	if m == engine.SyncEveryWrite {
		return "1"
	}
	return "9223372036854775807" // Kafka's default: no fsync by message count
}
