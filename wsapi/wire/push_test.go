package wire

import (
	"errors"
	"reflect"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// pushRecords are records of every shape a push carries: keys and none,
// empty and binary values, a tombstone, headers with repeated and non-UTF-8
// names (Kafka clients write those), a gap in the offsets (compaction) and
// a timestamp that goes back (records written by a Kafka client with their
// own timestamps).
func pushRecords() []engine.Record {
	return []engine.Record{
		{Offset: 40, Timestamp: 1764424800123, Key: []byte("user-1"), Value: []byte(`{"total":12.5}`)},
		{Offset: 41, Timestamp: 1764424800150, Value: []byte("plain text")},
		{Offset: 42, Timestamp: 1764424800150, Key: []byte{}, Value: []byte{}},
		{Offset: 45, Timestamp: 1764424800100, Key: []byte{0xff, 0x00}, Value: nil},
		{Offset: 46, Timestamp: 1764424900000, Value: []byte{0xff, 0, 1},
			Headers: []engine.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: []byte{}}, {Key: "\xff", Value: []byte{0xfe}}}},
	}
}

func TestBinaryPushRoundTrip(t *testing.T) {
	recs := pushRecords()
	h := BinaryPush{Sub: 3, Partition: 2, Next: 47, Skipped: 5}
	msg := AppendBinaryPush(nil, &h, recs)
	got, err := ParseBinaryPush(msg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sub != 3 || got.Partition != 2 || got.Offset != 40 || got.Timestamp != 1764424800123 || got.Next != 47 || got.Skipped != 5 || got.Count != len(recs) {
		t.Fatalf("header: %+v", got)
	}
	dec, err := DecodePushRecords(&got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, recs) {
		t.Fatalf("records:\n got %+v\nwant %+v", dec, recs)
	}
	// Every prefix that cuts into the records is refused, as is any
	// cut of the header line.
	for n := range len(msg) {
		h, err := ParseBinaryPush(msg[:n])
		if err == nil {
			_, err = DecodePushRecords(&h)
		}
		if !errors.Is(err, ErrBadPush) {
			t.Fatalf("prefix of %d of %d bytes: %v, want ErrBadPush", n, len(msg), err)
		}
	}
}

func TestBinaryPushRefused(t *testing.T) {
	for _, c := range []struct{ name, msg string }{
		{"not JSON", "\x00\x01"},
		{"no newline", `{"sub":1,"partition":0,"offset":0,"timestamp":0,"next":1,"count":1}`},
		{"no count", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1}\n\x00\x00\x00\x01\x00"},
		{"sub 0", "{\"sub\":0,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x00\x00\x00\x01\x00"},
		{"count too large", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":2}\n\x00\x00\x00\x01\x00"},
		{"first delta not 0", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x01\x00\x00\x01\x00"},
		{"offsets repeat", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":2}\n\x00\x00\x00\x01\x00\x00\x00\x00\x01\x00"},
		{"first timestamp delta not 0", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x00\x02\x00\x01\x00"},
		{"bytes after the records", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x00\x00\x00\x01\x00\x00\x00\x00\x00"},
		{"value past the end", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x00\x00\x00\x09\x00"},
		{"headers past the end", "{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x00\x00\x00\x01\x7f"},
	} {
		h, err := ParseBinaryPush([]byte(c.msg))
		if err == nil {
			_, err = DecodePushRecords(&h)
		}
		if !errors.Is(err, ErrBadPush) {
			t.Errorf("%s: %v, want ErrBadPush", c.name, err)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for f, want := range map[string]bool{"": false, "json": false, "binary": true} {
		if got, e := ParseFormat(f); e != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", f, got, e)
		}
	}
	for _, f := range []string{"Binary", "xml", " json"} {
		if _, e := ParseFormat(f); e == nil || e.Code != CodeInvalidRequest {
			t.Errorf("ParseFormat(%q) = %v, want invalid_request", f, e)
		}
	}
}

// FuzzBinaryPush feeds arbitrary bytes, as a client receives them, to the
// decoder of binary pushes: nothing may panic or allocate beyond what the
// bytes can hold, a refusal wraps ErrBadPush, and whatever it accepts
// encodes back (AppendBinaryPush) to a push that decodes to the same
// header and records.
func FuzzBinaryPush(f *testing.F) {
	h := BinaryPush{Sub: 3, Partition: 2, Next: 47, Skipped: 5}
	f.Add(AppendBinaryPush(nil, &h, pushRecords()))
	h = BinaryPush{Sub: 1, Next: 1}
	f.Add(AppendBinaryPush(nil, &h, []engine.Record{{Offset: 0, Timestamp: 1, Value: []byte("v")}}))
	f.Add([]byte("{\"sub\":1,\"partition\":0,\"offset\":9,\"timestamp\":-4,\"next\":1,\"count\":1,\"later\":[1]}\n\x00\x00\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		h, err := ParseBinaryPush(msg)
		var recs []engine.Record
		if err == nil {
			recs, err = DecodePushRecords(&h)
		}
		if err != nil {
			if !errors.Is(err, ErrBadPush) {
				t.Fatalf("error not wrapping ErrBadPush: %v", err)
			}
			return
		}
		h2 := BinaryPush{Sub: h.Sub, Partition: h.Partition, Offset: h.Offset, Timestamp: h.Timestamp, Next: h.Next, Skipped: h.Skipped}
		again := AppendBinaryPush(nil, &h2, recs)
		g, err := ParseBinaryPush(again)
		if err != nil {
			t.Fatalf("re-encoded push refused: %v", err)
		}
		recs2, err := DecodePushRecords(&g)
		if err != nil {
			t.Fatalf("re-encoded records refused: %v", err)
		}
		g.Records, h.Records = nil, nil
		if !reflect.DeepEqual(g, h) || !reflect.DeepEqual(recs, recs2) {
			t.Fatalf("push changed on the round trip:\n%+v %+v\n%+v %+v", h, recs, g, recs2)
		}
	})
}

// TestBinaryPushDocExample: the example push of docs/websocket.md
// ("Binary pushes") is what the encoder writes.
func TestBinaryPushDocExample(t *testing.T) {
	h := BinaryPush{Sub: 1, Partition: 0, Next: 42}
	got := AppendBinaryPush(nil, &h, []engine.Record{
		{Offset: 40, Timestamp: 1764424800123, Key: []byte("k"), Value: []byte("hi")},
		{Offset: 41, Timestamp: 1764424800150, Value: []byte("x")},
	})
	want := "{\"sub\":1,\"partition\":0,\"offset\":40,\"timestamp\":1764424800123,\"next\":42,\"count\":2}\n" +
		"\x00\x00\x02k\x03hi\x00" +
		"\x01\x36\x00\x02x\x00"
	if string(got) != want {
		t.Fatalf("encoded\n%q\nwant (docs/websocket.md)\n%q", got, want)
	}
}
