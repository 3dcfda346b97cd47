package codec

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// handBatch is one batch written out by hand from the layout in doc.go, not
// by the encoder: base offset 7, two records, codec none.
//
//	record 0: offset 7, timestamp first, key "k", value "v1", header h=x
//	record 1: offset 8, timestamp first+5 ms, null key, value "hi" as text
var handBatch = strings.Join([]string{
	// header, 52 bytes
	"01",               // magic
	"01",               // version
	"0000",             // flags: codec none, not sparse
	"d519f352",         // crc32c (Castagnoli) of bytes 8..end, computed apart from Pulse
	"0000000000000007", // baseOffset 7
	"00000041",         // batchLen 65
	"0000019acfe9d700", // firstTimestamp 1764424800000
	"0000019acfe9d705", // lastTimestamp 1764424800005
	"00000002",         // recordCount 2
	"00000000",         // producerID
	"00000000",         // producerEpoch
	"00000000",         // baseSequence
	// record 0
	"00000022",       // length 34
	"00",             // attributes
	"00000000",       // timestampDelta 0
	"00000000",       // offsetDelta 0
	"00000001", "6b", // key "k"
	"00000002", "7631", // value "v1"
	"00000001",       // headerCount 1
	"00000001", "68", // header key "h"
	"00000001", "78", // header value "x"
	// record 1
	"00000017",         // length 23
	"01",               // attributes: AttrTextValue
	"00000005",         // timestampDelta 5
	"00000001",         // offsetDelta 1
	"ffffffff",         // null key
	"00000002", "6869", // value "hi"
	"00000000", // headerCount 0
}, "")

// TestHandWrittenBatch decodes a batch written byte by byte from the
// documented layout and checks that the encoder writes exactly those bytes.
func TestHandWrittenBatch(t *testing.T) {
	raw, err := hex.DecodeString(handBatch)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != HeaderLen+65 {
		t.Fatalf("vector is %d bytes, want %d", len(raw), HeaderLen+65)
	}
	b, err := DecodeBatch(raw)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	h := b.Header
	if h.BaseOffset != 7 || h.RecordCount != 2 || h.BatchLen != 65 || h.Codec() != CodecNone ||
		h.FirstTimestamp != 1764424800000 || h.LastTimestamp != 1764424800005 || h.CRC != 0xd519f352 {
		t.Fatalf("header %+v", h)
	}
	if len(b.Records) != 2 {
		t.Fatalf("%d records", len(b.Records))
	}
	r0, r1 := b.Records[0], b.Records[1]
	if r0.Offset != 7 || r0.Timestamp != 1764424800000 || string(r0.Key) != "k" || string(r0.Value) != "v1" ||
		r0.Attributes != 0 || len(r0.Headers) != 1 || r0.Headers[0].Key != "h" || string(r0.Headers[0].Value) != "x" {
		t.Fatalf("record 0: %+v", r0)
	}
	if r1.Offset != 8 || r1.Timestamp != 1764424800005 || r1.Key != nil || string(r1.Value) != "hi" ||
		r1.Attributes != AttrTextValue || len(r1.Headers) != 0 {
		t.Fatalf("record 1: %+v", r1)
	}

	recs := []Record{
		{Timestamp: 1764424800000, Key: []byte("k"), Value: []byte("v1"), Headers: []Header{{Key: "h", Value: []byte("x")}}},
		{Timestamp: 1764424800005, Attributes: AttrTextValue, Value: []byte("hi")},
	}
	enc, err := AppendBatch(nil, 7, recs, EncodeOptions{})
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if !bytes.Equal(enc, raw) {
		t.Fatalf("encoder wrote\n%x\nwant the hand-written\n%x", enc, raw)
	}
}
