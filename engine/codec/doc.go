// Package codec encodes and decodes Pulse record batches, the unit written to
// segment files. This comment is the reference for their byte layout.
//
// # Batch
//
// All integers are big-endian. A batch is a fixed 52-byte header followed by
// the records section:
//
//	 0        1        2                4                                8
//	+--------+--------+----------------+--------------------------------+
//	| magic  |version |     flags      |             crc32c             |
//	|  0x01  |  0x01  |      u16       |    Castagnoli, bytes 8..end    |
//	+--------+--------+----------------+--------------------------------+
//	 8                                                                  16
//	+-------------------------------------------------------------------+
//	|                       baseOffset i64                              |
//	+-------------------------------------------------------------------+
//	16                 20                                               28
//	+------------------+------------------------------------------------+
//	| batchLen u32     |            firstTimestamp i64 (ms)             |
//	+------------------+------------------------------------------------+
//	28                                                 36               40
//	+--------------------------------------------------+----------------+
//	|             lastTimestamp i64 (ms)               | recordCount u32|
//	+--------------------------------------------------+----------------+
//	40                 44                 48                 52
//	+------------------+------------------+------------------+
//	| producerID u32   | producerEpoch u32| baseSequence i32 |
//	+------------------+------------------+------------------+
//	52
//	+-------------------------------------------------------------------+
//	| records section: batchLen bytes, as stored (compressed or not)     |
//	+-------------------------------------------------------------------+
//
// flags: bits 0–2 are the codec (0 none, 1 zstd); bit 3 (FlagSparse, 0x0008)
// marks a compacted batch whose offsets may skip; any other bit set makes the
// batch corrupt. The crc32c covers everything from baseOffset (byte 8) to the
// end of the records section as stored, so a batch is verified without
// decompressing it.
//
// producerID, producerEpoch and baseSequence name the idempotent Kafka
// producer whose records the batch holds: its producer id (1 to 2³²−1, as
// the Kafka listener hands them out), its epoch (0 to 32767) and the
// sequence number of the batch's first record (0 to 2³¹−1); record i has
// sequence baseSequence+i. producerID 0 means no producer: records written
// by the websocket API, by Kafka producers that are not idempotent, by
// compaction (which drops the stamp) and by every Pulse before the fields
// were used; producerEpoch and baseSequence are then 0. A stamped batch
// holds exactly the records of one batch its producer sent, nothing else,
// however many records that is (the flush limits do not cut it). The fields
// are not checked by the decoder.
//
// With zstd the records section is exactly one zstd frame whose header
// declares its content size. A decoder refuses a declared or actual content
// size over MaxBatchBytes (256 MiB), as it refuses a batchLen over that bound,
// so a corrupt header cannot make anyone allocate without limit.
//
// # Record
//
// The records section is recordCount records back to back:
//
//	length          u32  byte length of everything after this field
//	attributes      u8   bit 0 (AttrTextValue, 0x01): value produced as text; bit 1 (AttrJSONValue, 0x02): value checked as JSON; bits 2–7 reserved, 0
//	timestampDelta  i32  record timestamp - firstTimestamp (ms)
//	offsetDelta     u32  record offset - baseOffset
//	keyLength       u32  0xFFFFFFFF: null key
//	key             keyLength bytes
//	valueLength     u32  0xFFFFFFFF: null value (tombstone)
//	value           valueLength bytes
//	headerCount     u32
//	headers         headerCount × (keyLen u32, key, valueLen u32, value)
//
// A header value may be null (valueLen 0xFFFFFFFF); a header key may not.
//
// attributes bit 0 (AttrTextValue) records how the value was produced, so
// that a reader can give it back with its type: set, the value is text (a
// JSON string on the websocket API, stored as its UTF-8 text) and reads back
// as a string even when its bytes are valid JSON (42, null, {"a":1}); clear,
// the producer said nothing (a JSON value that is not a string, raw or
// binary frames, Kafka clients, every record written before the bit was
// defined) and the websocket API shows valid JSON as JSON.
//
// attributes bit 1 (AttrJSONValue) says the value's bytes were checked to be
// one valid JSON value when they were produced (a non-string JSON value of a
// websocket or HTTP produce request, a JSON object or array frame of the
// plain produce endpoint): a reader may embed them as JSON without checking
// them again. Clear, nobody checked (binary produce frames, Kafka clients,
// raw bytes, every record written before the bit was defined) and a reader
// checks the bytes itself, as before the bit existed. The two bits are never
// both set. The bit changes nothing about the value's bytes or how they read
// back; it only saves the check.
//
// Any other bit set makes the batch corrupt. (A Pulse from before a bit was
// defined reports a batch holding a record with that bit as corrupt: such a
// data dir cannot be opened by an older version without loss.)
//
// In an ordinary batch the records hold the contiguous offsets
// baseOffset .. baseOffset+recordCount-1, so offsetDelta of record i is i
// (decode checks offsetDelta < recordCount and strictly increasing). A sparse
// batch carries the offsets that survived compaction: offsetDelta is strictly
// increasing and below 1<<31. The first record's timestampDelta is 0 and the
// last record's timestamp is lastTimestamp.
//
// # Aliasing
//
// Decoded records alias the bytes they were decoded from: Key, Value and
// header Value slices point into the caller's batch buffer (codec none) or
// into a buffer allocated for the decompressed section (zstd). Decoding
// therefore costs no copy per record; the price is that a caller must not
// modify or reuse the batch buffer while the records are in use. Header keys
// are strings, copied once per batch into one shared allocation.
//
// # Concurrency
//
// Every function is safe for concurrent use. zstd encoders and decoders are
// kept in a fixed pool of single-threaded instances (GOMAXPROCS of them,
// created on first use), never built per call.
package codec
