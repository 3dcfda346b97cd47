package engine

import (
	"errors"
	"fmt"
)

// TopicCreator is what AutoCreate needs: the engine facade, or any source
// that creates topics (a Kafka cluster's, kafka/cluster.Source).
type TopicCreator interface {
	CreateTopic(name string, cfg TopicConfig) error
}

// AutoCreate is the auto-create rule of every surface that creates a topic
// on first use (the websocket and HTTP produce and subscribe, the Kafka
// listener's produce and metadata requests), called once a produce or read
// found topic name missing: it is created with DefaultTopicConfig, and a
// topic created meanwhile by another caller is fine. A partition (>= 0)
// that a topic with the default configuration would not have creates
// nothing and is ErrPartitionOutOfRange; partition -1 is any partition.
// Whether a surface auto-creates at all is its option.
func AutoCreate(src TopicCreator, name string, partition int) error {
	cfg := DefaultTopicConfig()
	if partition >= cfg.Partitions {
		return fmt.Errorf("%w: partition %d of topic %q: a topic created on first use has %d", ErrPartitionOutOfRange, partition, name, cfg.Partitions)
	}
	if err := src.CreateTopic(name, cfg); err != nil && !errors.Is(err, ErrTopicExists) {
		return err
	}
	return nil
}

// ProducePartitions is how many partitions a produce to topic may name:
// the topic's, or, when it does not exist yet (and so would be
// auto-created), those of DefaultTopicConfig. Any other error of Describe
// is returned.
func ProducePartitions(src interface {
	Describe(name string) (TopicInfo, error)
}, topic string) (int, error) {
	t, err := src.Describe(topic)
	switch {
	case err == nil:
		return len(t.Partitions), nil
	case errors.Is(err, ErrTopicNotFound):
		return DefaultTopicConfig().Partitions, nil
	}
	return 0, err
}
