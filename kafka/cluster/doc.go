// Package cluster is Pulse's second storage source: an existing Kafka or
// Redpanda cluster instead of a local data dir.
//
// A *Source implements the core of tui.Source and wsapi.Backend on top of
// franz-go (kgo for produce and reads, kadm for administration), so the
// terminal UI and the websocket API run unchanged on a cluster. It also
// implements the optional capabilities a cluster has (consumer groups with
// lag, partition placement, topic configs); the engine-only ones (segments,
// frames, recovery reports, crash lab, compaction) it does not, and the UI
// says so.
//
// Mapping (docs/cluster.md is the user-facing description):
//   - Produce: one kgo producer, acks=all; partition -1 picks murmur2 of the
//     key (as Pulse and Kafka's default partitioner do) or round-robin for
//     keyless records. The ack carries the cluster's partition, offset and
//     record timestamp.
//   - Read: a pool of per-partition readers (kgo consumers assigned one
//     partition at an offset). A reader that ended at offset N is reused by
//     the next Read from N, so a tail costs one Kafka consumer, not one
//     connection per read.
//   - NotifyC: one watcher consumer per Source, assigned each watched
//     partition at its high watermark; every fetched record closes that
//     partition's channel. It waits in Kafka fetches (long-poll), never in
//     a timer loop.
//   - Cursors: consumer cursors are consumer-group offsets; CommitCursor is
//     an OffsetCommit for the group named like the consumer, Cursor an
//     OffsetFetch.
//   - Errors from the cluster are wrapped in the nearest engine sentinel
//     (engine.ErrTopicNotFound, ...), keeping the cluster's message.
//
// Mirror copies a local topic to a cluster (pulse mirror).
package cluster
