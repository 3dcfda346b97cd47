package wsclient

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/pulselog/pulse/wsapi/wire"
)

// TestProduceRequestEncoding checks the hand-written encoders of produce
// requests against encoding/json: every record field, alone and together,
// inline (one record) and in "records".
func TestProduceRequestEncoding(t *testing.T) {
	s := func(v string) *string { return &v }
	p := func(v int) *int { return &v }
	recs := []wire.RecordIn{
		{},
		{Value: json.RawMessage(`{"a":[1,2,{"b":"c\"d"}]}`)},
		{Key: s("k\"ey\n"), Value: json.RawMessage(`"text"`)},
		{KeyB64: s("AAE="), ValueB64: s("AgM=")},
		{Key: s(""), Tombstone: true},
		{Value: json.RawMessage(`42`), Headers: map[string]string{"h1": "v1", "h\"2": "v\u00e92"}},
		{ValueB64: s(""), HeadersB64: map[string]string{"x": "AA=="}, Partition: p(3)},
		{Key: s("k"), Value: json.RawMessage(`null`), Headers: map[string]string{"a": "b"}, HeadersB64: map[string]string{"c": "AA=="}, Partition: p(0)},
	}
	// want is the request as encoding/json would write it.
	want := func(id int64, partition int, fields map[string]any) map[string]any {
		m := map[string]any{"op": "produce", "id": float64(id), "topic": "t\"opic"}
		if partition >= 0 {
			m["partition"] = float64(partition)
		}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	recordMap := func(r wire.RecordIn, inline bool) map[string]any {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if r.Value == nil {
			delete(m, "value")
		}
		if inline {
			delete(m, "partition") // the request's partition wins
		}
		return m
	}
	decode := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	for i, r := range recs {
		for _, partition := range []int{-1, 2} {
			got := decode(appendProduceRecord([]byte("junk"), 7, "t\"opic", partition, &r)[4:])
			if w := want(7, partition, recordMap(r, true)); !reflect.DeepEqual(got, w) {
				t.Errorf("record %d, partition %d inline:\n got %v\nwant %v", i, partition, got, w)
			}
		}
	}
	var all []any
	for _, r := range recs {
		all = append(all, recordMap(r, false))
	}
	got := decode(appendProduceRequest(nil, 9, "t\"opic", 1, recs))
	if w := want(9, 1, map[string]any{"records": all}); !reflect.DeepEqual(got, w) {
		t.Errorf("records:\n got %v\nwant %v", got, w)
	}
}

// TestDecodedHeadersInNameOrder: a pushed record's headers (a JSON object,
// text and base64 alike) come out in their names' order, the order a JSON
// produce stores them in, the same on every decode, not in map order.
func TestDecodedHeadersInNameOrder(t *testing.T) {
	raw := []byte(`{"partition":0,"offset":1,"timestamp":2,"value":"v","headers":{"zeta":"1","alpha":"2","mid":"3","beta":"4"},"headers_b64":{"bin":"/w=="}}`)
	want := []string{"alpha", "beta", "bin", "mid", "zeta"}
	for range 20 {
		r, err := decodeRecordJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range r.Headers {
			got = append(got, h.Key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("header order %v, want %v", got, want)
		}
	}
}
