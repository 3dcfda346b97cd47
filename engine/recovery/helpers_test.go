package recovery

import (
	"fmt"
	"os"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// testRecords returns n records with recognisable keys and values.
func testRecords(base int64, n int) []codec.Record {
	recs := make([]codec.Record, n)
	for i := range recs {
		off := base + int64(i)
		recs[i] = codec.Record{
			Offset:    off,
			Timestamp: 1_700_000_000_000 + off,
			Key:       []byte(fmt.Sprintf("key-%d", off%7)),
			Value:     []byte(fmt.Sprintf("value %d: the quick brown fox jumps over the lazy dog", off)),
			Headers:   []codec.Header{{Key: "h", Value: []byte{byte(off)}}},
		}
	}
	return recs
}

// appendBatch appends a batch of n records at base to dst.
func appendBatch(t testing.TB, dst []byte, base int64, n int, c codec.Codec) []byte {
	t.Helper()
	out, err := codec.AppendBatch(dst, base, testRecords(base, n), codec.EncodeOptions{Codec: c})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// appendSparse appends a compacted batch holding the given offsets.
func appendSparse(t testing.TB, dst []byte, offsets []int64, c codec.Codec) []byte {
	t.Helper()
	recs := make([]codec.Record, len(offsets))
	for i, o := range offsets {
		recs[i] = testRecords(o, 1)[0]
	}
	out, err := codec.AppendBatch(dst, offsets[0], recs, codec.EncodeOptions{Codec: c, Sparse: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// longTests reports whether PULSE_LONG=1 asks for the long variants.
func longTests() bool { return os.Getenv("PULSE_LONG") == "1" }
