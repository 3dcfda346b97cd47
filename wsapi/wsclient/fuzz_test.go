package wsclient

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/internal/wiretest"
	"github.com/pulselog/pulse/wsapi/wire"
)

// FuzzFastAcks checks the client's fast ack parser against encoding/json,
// and that it reads back every batch ack reply the server writes.
func FuzzFastAcks(f *testing.F) {
	f.Add([]byte(`{"id":7,"acks":[{"partition":0,"offset":1,"timestamp":1700000000000},{"partition":2,"offset":3,"timestamp":4}]}`))
	f.Add([]byte(`{"id":7,"partition":0,"offset":1,"timestamp":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastAcksScope(t, b)
		var fast envelope
		if !fastAcks(b, &fast) {
			return
		}
		var slow envelope
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fastAcks accepted %q, encoding/json says %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fastAcks and encoding/json differ on %q:\n%+v\n%+v", b, fast, slow)
		}
	})
}

// FuzzFastReply checks the client's fast parser of single acks and pushes
// against encoding/json: whatever it accepts, encoding/json must accept and
// read the same; and it accepts the single acks and pushes the server writes.
func FuzzFastReply(f *testing.F) {
	f.Add([]byte(`{"id":7,"partition":0,"offset":1,"timestamp":2}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"records":[{"partition":1,"offset":8,"timestamp":5,"key":"k","value":{"a":[1,2]}}]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"skipped":4,"records":[]}`))
	f.Add([]byte(`{"id":1,"error":{"code":"internal","message":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastReplyScope(t, b)
		var fast envelope
		if !fastReply(b, &fast) {
			if !reflect.DeepEqual(fast, envelope{}) {
				t.Fatalf("fastReply refused %q but changed the envelope: %+v", b, fast)
			}
			return
		}
		var slow envelope
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fastReply accepted %q, encoding/json says %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fastReply and encoding/json differ on %q:\n%+v\n%+v", b, fast, slow)
		}
	})
}

// FuzzDecodeRecord feeds arbitrary server records to the client: nothing
// may panic, and DecodeRecord's fast path must read exactly what its
// encoding/json path reads, on arbitrary bytes and on records the server
// wrote; and a record of the common shape it reads back as written.
func FuzzDecodeRecord(f *testing.F) {
	wiretest.AddSeeds(f, "records")
	f.Add([]byte(`{"partition":1,"offset":8,"timestamp":5,"key":"k","value":"text"}`))
	f.Add([]byte(`{"partition":1,"offset":8,"timestamp":5,"tombstone":true}`))
	f.Add([]byte(`{"partition":1,"offset":8,"timestamp":5,"key":"","value":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastRecordScope(t, b)
		check := func(raw []byte) {
			fast, ok := fastRecord(raw)
			if !ok {
				return
			}
			slow, err := decodeRecordJSON(raw)
			if err != nil {
				t.Fatalf("fastRecord accepted %q, encoding/json says %v", raw, err)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("fastRecord and encoding/json differ on %q:\n%+v\n%+v", raw, fast, slow)
			}
		}
		DecodeRecord(b)
		check(b)
		rec := engine.Record{Offset: 3, Timestamp: 4, Key: b, Value: b}
		check(wire.AppendRecordJSON(nil, 1, &rec))
	})
}

// FuzzFastPush checks the client's one-pass push parser against fastReply
// and DecodeRecord: whatever it accepts, they must accept and read the same;
// and it reads back the pushes of the server's records. With value_lens,
// fastPush takes an object or array value of the announced length without
// checking inside it: when such a value is not one JSON value (the
// lengths lied), it may read other records than the full check, but only
// records that lie within the message, in order.
func FuzzFastPush(f *testing.F) {
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"records":[{"partition":1,"offset":8,"timestamp":5,"key":"k","value":{"a":[1,2]}}]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"records":[{"partition":1,"offset":8,"timestamp":5,"key":"k","value":{"a":[1,2]}}],"value_lens":[11]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":10,"records":[{"partition":1,"offset":8,"timestamp":5,"value":[1,{"b":"}"}]},{"partition":1,"offset":9,"timestamp":5,"tombstone":true}],"value_lens":[15,0]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"records":[{"partition":1,"offset":8,"timestamp":5,"value":{"a":1},"headers":{"h":"v"}}],"value_lens":[27]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"records":[{"partition":1,"offset":8,"timestamp":5,"value":"text"}],"value_lens":[6]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"skipped":4,"records":[]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"next":9,"records":[{"partition":1,"offset":8,"timestamp":5,"tombstone":true}],"records":[]}`))
	f.Add([]byte(`{"sub":3,"partition":1,"error":{"code":"internal","message":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFastPushScope(t, b)
		var fast envelope
		recs, ok := fastPush(b, &fast)
		if !ok {
			if !reflect.DeepEqual(fast, envelope{}) || recs != nil {
				t.Fatalf("fastPush refused %q but changed the envelope: %+v", b, fast)
			}
			return
		}
		if lied(t, b, recs) {
			return
		}
		var slow envelope
		if !fastReply(b, &slow) {
			t.Fatalf("fastPush accepted %q, fastReply refuses it", b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fastPush and fastReply differ on %q:\n%+v\n%+v", b, fast, slow)
		}
		if len(recs) != len(slow.Records) {
			t.Fatalf("fastPush read %d records of %q, fastReply %d", len(recs), b, len(slow.Records))
		}
		for i, raw := range slow.Records {
			r, err := DecodeRecord(raw)
			if err != nil {
				t.Fatalf("fastPush accepted record %q, DecodeRecord says %v", raw, err)
			}
			if !reflect.DeepEqual(r, recs[i]) {
				t.Fatalf("record %d of %q: fastPush read %+v, DecodeRecord %+v", i, b, recs[i], r)
			}
		}
	})
}

// FuzzBinaryPushClient feeds arbitrary binary messages to the read loop's
// decoder: nothing may panic; a message it routes (env.Sub set) carries
// either an error or exactly the records package wire decodes, each in
// the push's partition.
func FuzzBinaryPushClient(f *testing.F) {
	h := wire.BinaryPush{Sub: 2, Partition: 1, Next: 9}
	f.Add(wire.AppendBinaryPush(nil, &h, []engine.Record{{Offset: 7, Timestamp: 5, Key: []byte("k"), Value: []byte("v")}, {Offset: 8, Timestamp: 6}}))
	f.Add([]byte("{\"sub\":1,\"partition\":0,\"offset\":0,\"timestamp\":0,\"next\":1,\"count\":1}\n\x00\x00\x00\x09"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		var env envelope
		recs := binaryPush(msg, &env)
		if env.Sub == 0 {
			if recs != nil {
				t.Fatalf("records without a push header: %q", msg)
			}
			return
		}
		h, err := wire.ParseBinaryPush(msg)
		if err != nil {
			t.Fatalf("routed a push wire refuses: %v", err)
		}
		want, err := wire.DecodePushRecords(&h)
		if (err != nil) != (env.Error != nil) || len(recs) != len(want) {
			t.Fatalf("client: %d records, error %v; wire: %d records, error %v", len(recs), env.Error, len(want), err)
		}
		for i, r := range recs {
			w := want[i]
			if r.Partition != h.Partition || r.Offset != w.Offset || r.Timestamp != w.Timestamp ||
				!reflect.DeepEqual(r.Key, w.Key) || !reflect.DeepEqual(r.Value, w.Value) || !reflect.DeepEqual(r.Headers, w.Headers) || r.Raw != nil {
				t.Fatalf("record %d: client %+v, wire %+v", i, r, w)
			}
		}
	})
}

// lied reports whether fastPush took a value of recs, read from msg by its
// value_lens length, that is not one JSON value; it fails unless every
// record's Raw lies within msg, after the previous one, and holds the
// record's value.
func lied(t *testing.T, msg []byte, recs []Record) bool {
	t.Helper()
	lied := false
	prev := 0
	for _, r := range recs {
		at := indexIn(msg, r.Raw)
		if at < prev {
			t.Fatalf("record %q is not within %q after byte %d", r.Raw, msg, prev)
		}
		prev = at + len(r.Raw)
		if len(r.Value) == 0 {
			continue
		}
		v := indexIn(msg, r.Value)
		if v < at || v+len(r.Value) > prev {
			t.Fatalf("value %q is not within its record %q", r.Value, r.Raw)
		}
		if msg[v-1] == ':' && !wire.ValidJSON(r.Value) { // embedded, not a string's text
			lied = true
		}
	}
	return lied
}

// indexIn is the index of sub within b, -1 when sub is not a sub-slice of
// b.
func indexIn(b, sub []byte) int {
	if len(sub) == 0 || len(b) == 0 {
		return -1
	}
	i := int(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	if i < 0 || i+len(sub) > len(b) {
		return -1
	}
	return i
}
