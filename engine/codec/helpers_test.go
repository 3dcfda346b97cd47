package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// recordsEqual reports the first difference between two record lists,
// telling nil from empty for keys, values and header values.
func recordsEqual(want, got []Record) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := &want[i], &got[i]
		switch {
		case w.Offset != g.Offset:
			return fmt.Errorf("record %d: offset %d, want %d", i, g.Offset, w.Offset)
		case w.Timestamp != g.Timestamp:
			return fmt.Errorf("record %d: timestamp %d, want %d", i, g.Timestamp, w.Timestamp)
		case w.Attributes != g.Attributes:
			return fmt.Errorf("record %d: attributes 0x%02x, want 0x%02x", i, g.Attributes, w.Attributes)
		case !bytesEqualNil(w.Key, g.Key):
			return fmt.Errorf("record %d: key %q (nil %v), want %q (nil %v)", i, g.Key, g.Key == nil, w.Key, w.Key == nil)
		case !bytesEqualNil(w.Value, g.Value):
			return fmt.Errorf("record %d: value of %d bytes (nil %v), want %d bytes (nil %v)", i, len(g.Value), g.Value == nil, len(w.Value), w.Value == nil)
		case len(w.Headers) != len(g.Headers):
			return fmt.Errorf("record %d: %d headers, want %d", i, len(g.Headers), len(w.Headers))
		}
		for j := range w.Headers {
			if w.Headers[j].Key != g.Headers[j].Key || !bytesEqualNil(w.Headers[j].Value, g.Headers[j].Value) {
				return fmt.Errorf("record %d header %d: %q=%q (nil %v), want %q=%q (nil %v)", i, j,
					g.Headers[j].Key, g.Headers[j].Value, g.Headers[j].Value == nil,
					w.Headers[j].Key, w.Headers[j].Value, w.Headers[j].Value == nil)
			}
		}
	}
	return nil
}

func bytesEqualNil(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// mustAppend encodes a batch or fails the test.
func mustAppend(t testing.TB, base int64, recs []Record, opts EncodeOptions) []byte {
	t.Helper()
	b, err := AppendBatch(nil, base, recs, opts)
	if err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	return b
}

// withOffsets returns recs with Offset base+i and Timestamp ts0+i (what a
// decoder of an ordinary batch returns).
func withOffsets(recs []Record, base, ts0 int64) []Record {
	out := make([]Record, len(recs))
	copy(out, recs)
	for i := range out {
		out[i].Offset = base + int64(i)
		if out[i].Timestamp == 0 {
			out[i].Timestamp = ts0 + int64(i)
		}
	}
	return out
}

// fixCRC recomputes the CRC of a whole batch in place.
func fixCRC(b []byte) {
	binary.BigEndian.PutUint32(b[offCRC:], checksum(b))
}

// jsonRecord returns a deterministic JSON-like value of about size bytes.
func jsonRecord(i, size int) []byte {
	events := []string{"page_view", "add_to_cart", "checkout", "login", "search"}
	b := fmt.Appendf(nil, `{"id":%d,"user":"user-%04d","event":%q,"path":"/products/%d","session":"%08x","props":{"price":%d.%02d,"qty":%d,"ref":"campaign-%d"},"pad":"`,
		i, i%977, events[i%len(events)], i*7919%10007, uint32(i)*2654435761, i%500, i%100, 1+i%5, i%13)
	// Pad with pseudo-random words, so the payload compresses like text
	// rather than like a repeated pattern.
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu red green blue cyan magenta yellow black white orange purple north south east west up down left right small large tiny huge fast slow hot cold new old first last open closed ready done error ok warn info debug trace")
	x := uint64(i)*0x9E3779B97F4A7C15 + 1
	for len(b) < size-2 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b = append(b, words[x%uint64(len(words))]...)
		b = append(b, ' ')
	}
	return append(b[:size-2], `"}`...)
}
