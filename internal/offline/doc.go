// Package offline holds the tools that read a data directory at rest,
// without a running Pulse: Dump (one segment, index, snapshot or hwm
// file), Verify (every batch's CRC and offsets), Inspect (what crash
// recovery would do), MetaCheck and MetaDump (meta.db) and Crashlab (a
// fault applied to a scratch copy of a partition). They share how a path
// given on the command line resolves to partitions (a data, topic or
// partition directory), how a directory that Pulse did not write is told
// apart, and how a data dir held by a running pulse is noticed. None of
// them writes to the directory it reads. cmd/pulse holds their commands
// and flags.
package offline
