// Package meta is Pulse's metadata store: a bbolt database at <data>/meta.db
// holding the broker's control-plane state. Event data never passes through
// it.
//
// # Key space
//
// One bucket per namespace (docs/architecture.md, "meta"). Keys are text so that
// `pulse meta dump` is readable; topic names, consumer names and report kinds
// never contain '/', so '/' separates key parts unambiguously and a prefix scan
// finds every key of one consumer, topic or kind.
//
//	schema      version                      → int64, 8 bytes big-endian (SchemaVersion)
//	identity    cluster/current              → cluster id (pointer)
//	            cluster/<id>                 → JSON Cluster {id, created_at}
//	            broker/current               → broker id (pointer)
//	            broker/<id>                  → JSON Broker {id, cluster_id, created_at}
//	topics      <topic>                      → JSON Topic {name, partitions, config, created_at, state}
//	partitions  <topic>/<p>                  → JSON Partition {topic, partition, created_at}
//	cursors     <consumer>/<topic>/<p>       → int64 offset, 8 bytes big-endian
//	reports     <kind>/<topic>/<p>           → opaque bytes (the engine stores JSON)
//
// Partition numbers are decimal without leading zeros ("0", "17").
//
// # Transactions and durability
//
// Every access goes through bbolt's View or Update; no transaction outlives
// the method that opened it. Updates use bbolt's synced commits (NoSync is
// never set): when a write method returns nil, the change is on disk. Each
// write method is one transaction, so a crash leaves either all of it or none.
//
// # Topic lifecycle
//
// PutTopic writes the topic record and all its partition records in one
// commit. Deleting is two commits around the file removal the engine does:
//
//	MarkTopicDeleting(name)   // commit 1: state "deleting"; cursors, reports and config changes refused
//	remove topics/<name>/     // the engine's files
//	DeleteTopic(name)         // commit 2: topic, partitions, cursors and reports removed
//
// A crash between the two leaves the topic in state "deleting"; on the next
// start the engine finds it with ListTopics and finishes the delete. A name
// is not reusable until DeleteTopic committed.
//
// Cursors and reports can only be written for an existing partition of an
// active topic, checked in the same transaction as the write, so none can
// outlive its topic. Check verifies this and the rest of the key space.
//
// # Startup reconciliation
//
// Reconcile compares the topics with the partition directories the engine
// found on disk and returns every mismatch; it reads no files, and the
// engine decides what to do and reports it.
//
// # Concurrency
//
// A Store is safe for concurrent use: bbolt serialises writers and lets
// readers run alongside them. meta.db is flock'ed by bbolt: a second Open of
// the same file, from this process or another, fails with ErrLocked after
// Options.OpenTimeout instead of waiting forever.
package meta
