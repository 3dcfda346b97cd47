package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/internal/wiretest"
)

// FuzzBinaryRecords feeds arbitrary bytes to the decoder of a binary
// frame's records: nothing may panic, a refusal is a protocol error with a
// code and a message, and whatever it accepts encodes back to bytes that
// decode to the same records.
func FuzzBinaryRecords(f *testing.F) {
	for _, frame := range wiretest.Files(f, "binary", "*.bin") {
		if nl := bytes.IndexByte(frame, '\n'); nl >= 0 {
			f.Add(frame[nl+1:])
		}
	}
	f.Add(AppendBinaryRecords(nil, []engine.Record{
		{Key: []byte("k"), Value: []byte("v"), Headers: []engine.Header{{Key: "h", Value: []byte{0xff}}}},
		{Value: nil}, // a tombstone without a key
		{Key: []byte{}, Value: []byte{}},
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, size, e := DecodeBinaryRecords(b, 100, 1<<20)
		if e != nil {
			if e.Code == "" || e.Message == "" {
				t.Fatalf("error without code or message: %+v", e)
			}
			return
		}
		n := 0
		for _, r := range recs {
			n += len(r.Key) + len(r.Value)
		}
		if len(recs) == 0 || len(recs) > 100 || n != size {
			t.Fatalf("accepted %d records of %d bytes, size %d", len(recs), n, size)
		}
		again := AppendBinaryRecords(nil, recs)
		if !bytes.Equal(again, b) {
			// Uvarints have one shortest form, the encoder's; the decoder
			// also takes padded ones (binary.Uvarint does), so compare
			// what they decode to.
			recs2, _, e := DecodeBinaryRecords(again, 100, 1<<20)
			if e != nil || !reflect.DeepEqual(recs, recs2) {
				t.Fatalf("records changed on the round trip (%v):\n%+v\n%+v", e, recs, recs2)
			}
		}
	})
}
