package codec

// Header is one record header: a string key and an opaque byte value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one event in a partition log.
//
// Key == nil is a null key (keyless record, never deduplicated by compaction);
// Key != nil with len 0 is an empty key. Value == nil is a tombstone; a
// non-nil empty Value is an ordinary empty payload.
type Record struct {
	Offset    int64 // absolute offset; assigned by the log on append
	Timestamp int64 // commit time, Unix milliseconds; assigned by the log on append
	// Attributes is the record's attributes byte: the Attr* bits, stored
	// and read back as given (0 for every record written before they
	// existed, and for Kafka clients' records).
	Attributes uint8
	Key        []byte
	Value      []byte
	Headers    []Header
}

// Record attribute bits (doc.go, "Record").
const (
	// AttrTextValue says the value was produced as text (a JSON string on
	// the websocket API): it reads back as that text, even when the bytes
	// happen to be valid JSON such as 42 or null. Clear: the producer did
	// not say (raw frames, Kafka clients, JSON values that are not strings).
	AttrTextValue uint8 = 0x01

	// AttrJSONValue says the value's bytes were checked to be one valid
	// JSON value when they were produced (a JSON value that is not a string
	// on the websocket API), so that a reader may embed them as JSON without
	// checking them again. Clear: nobody checked (binary frames, Kafka
	// clients, records written before the bit was defined); a reader checks
	// as before. Never set together with AttrTextValue.
	AttrJSONValue uint8 = 0x02

	// attrKnown is every defined bit; a record with another bit set is
	// corrupt.
	attrKnown = AttrTextValue | AttrJSONValue
)

// Codec is the compression applied to a batch's records section (flags bits 0–2).
type Codec uint8

const (
	CodecNone Codec = 0
	CodecZstd Codec = 1
)

// String returns "none" or "zstd" (or "codec(N)" for an unknown value).
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecZstd:
		return "zstd"
	}
	return "codec(" + string(rune('0'+c)) + ")"
}

// ParseCodec maps "none" / "zstd" (and "" meaning the default, zstd) to a Codec.
func ParseCodec(s string) (Codec, bool) {
	switch s {
	case "", "zstd":
		return CodecZstd, true
	case "none":
		return CodecNone, true
	}
	return 0, false
}
