package tui

import "github.com/pulselog/pulse/engine"

// TopicAlterer changes a topic's configuration after creation (optional,
// like the interfaces of source.go; *engine.Engine implements it). The
// engine stores the change in meta.db and its retention and compaction
// passes use it from their next run.
type TopicAlterer interface {
	AlterTopic(name string, cfg engine.TopicConfig) error
}
