package plog

import "time"

// Observer receives a partition log's commit figures, for metrics. Calls
// come from the log's syncer goroutine while it commits: each must be short
// and must never block or call back into the log. Options.Observer nil
// observes nothing.
type Observer interface {
	// ObserveFsync reports one data sync (SyncData) of a segment of the
	// partition and how long it took.
	ObserveFsync(topic string, partition int, d time.Duration)
	// ObserveCommit reports one sync pass that made records durable:
	// how many records it covered and how many waiting appends it
	// acknowledged (group commit's batch; 0 in interval mode, whose
	// appends were acknowledged before).
	ObserveCommit(topic string, partition int, records int64, appends int)
}

func (l *Log) observeFsync(d time.Duration) {
	if o := l.opts.Observer; o != nil {
		o.ObserveFsync(l.opts.Topic, l.opts.Partition, d)
	}
}

func (l *Log) observeCommit(records int64, appends int) {
	if o := l.opts.Observer; o != nil && records > 0 {
		o.ObserveCommit(l.opts.Topic, l.opts.Partition, records, appends)
	}
}
