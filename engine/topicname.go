package engine

import "github.com/pulselog/pulse/meta"

// MaxTopicNameLen is the longest topic name accepted (Kafka's limit).
const MaxTopicNameLen = meta.MaxTopicNameLen

// ValidateTopicName checks a topic name against Kafka's rule: 1–249
// characters of [a-zA-Z0-9._-], and neither "." nor "..". A name that passes
// is safe to use as a single path element. Failures match ErrInvalidTopic.
// The rule lives in meta, which keys every record by topic name.
func ValidateTopicName(name string) error { return meta.ValidateTopicName(name) }

// ValidateConsumerName checks a consumer name against the cursor store's
// rule, the one every API takes (a Kafka group id such as "my group" is
// fine): 1–249 bytes without '/' or NUL. Failures match ErrInvalidConsumer.
func ValidateConsumerName(name string) error { return meta.ValidateConsumerName(name) }
