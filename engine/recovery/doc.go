// Package recovery opens a partition directory after any crash
// and says what it found.
//
// Run is the whole procedure, in this order:
//
//  1. Every ".tmp-*" file is deleted: an unrenamed temp (atomic replace,
//     compaction) is never the only copy of anything.
//  2. The snapshot fast path, when the 40-byte snapshot file is valid and
//     names the active segment on disk with at most its size: every
//     segment's index is checked entry by entry without the data, then
//     against the batch headers at its first and last entries and every
//     header after the last entry, which must chain exactly to the end of a
//     sealed segment's file, or to the snapshot's size and log end in the
//     active segment (docs/architecture.md, "What the snapshot fast path
//     checks", lists what is left to reads and to `pulse verify`); a sealed
//     segment that fails is scanned; only the active segment's growth past
//     the checkpoint is scanned (all of it when the checkpointed prefix does
//     not check out). Otherwise the full scan: every segment in offset
//     order, every batch's header and CRC.
//  3. The scan reads with segment.Reader at LevelCRC, the reader every
//     other walker of segment bytes uses. A scanned batch is accepted when
//     its header parses, its CRC matches,
//     its base offset is at or above the previous batch's end and below the
//     segment's end (the next segment's base; none for the active one), and
//     its last offset is below that end. A batch that is not acceptable is
//     followed by a byte-by-byte search for the next acceptable one: found,
//     the bytes between are a CorruptRange, reported and never truncated (the
//     partition is degraded, readers skip the range and count it); not found
//     in the active segment, they are a torn tail and truncated at the last
//     valid batch boundary; not found in a sealed segment, they are a
//     CorruptRange up to the next segment's base. A sealed segment whose
//     valid batches end before the next segment's base, the last one not
//     sparse (compaction may end a segment early, nothing else does), lost
//     whole batches at its end: the offsets up to that base are a Gap.
//  4. An index that is missing, ends in a partial entry, has an entry that
//     is not a batch boundary of its offset, or leaves a batch unindexed
//     more than IndexIntervalBytes after the previous entry, is rebuilt from
//     the data (temp file, rename, directory fsync).
//  5. The high-watermark is the persisted hwm file clamped to the recovered
//     end; the records between are the hidden tail, fsynced and exposed
//     (HiddenTailExpose, the default) or kept hidden (HiddenTailHide).
//  6. A snapshot that did not describe the log (full scan) or that a
//     truncation left ahead of it is replaced by a checkpoint of the
//     recovered log, or removed when the active segment holds a corrupt
//     range (so that the next open scans and reports it again).
//
// Every Run produces a Report; with Options.ReadOnly it is computed without
// changing a byte, which is what `pulse inspect` prints. CheckSegmentFile
// applies the same batch checks to one file for `pulse verify` and
// `pulse dump`.
//
// File formats owned here: the snapshot (see EncodeSnapshot) and the hwm file
// (8 bytes, big-endian).
package recovery
