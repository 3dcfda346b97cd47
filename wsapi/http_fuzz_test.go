package wsapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"github.com/pulselog/pulse/wsapi/wire"
)

// FuzzRecordsBody feeds arbitrary POST bodies through both body formats.
// Nothing may panic; a JSON array and the NDJSON of its elements decode to
// the same records; every accepted record that converts to an engine
// record reads back out as a valid JSON object.
func FuzzRecordsBody(f *testing.F) {
	for _, s := range []string{
		`{"value":1}`, `[{"value":"a"},{"key":"k","value":{"x":[1,2]}}]`,
		"{\"value\":1}\n\n{\"value_b64\":\"AAEC\"}\n", `{"key":5}`, `[]`, `[1]`, `{"value":1} {"value":2}`,
		`{"headers":{"h":"v"},"tombstone":true}`, `{"partition":"1","value":1}`, "[{\"value\": {\"a\": 1},\n \"key\": \"k\"}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ins, single, e := decodeRecordsBody(body, bodyJSON)
		if e == nil && len(ins) == 0 {
			t.Fatalf("%q: no error and no record", body)
		}
		if e == nil && single != (bytes.TrimSpace(body)[0] == '{') {
			t.Fatalf("%q: single = %v", body, single)
		}
		nd, _, nde := decodeRecordsBody(body, bodyNDJSON)
		if nde == nil && len(nd) == 0 {
			t.Fatalf("%q as NDJSON: no error and no record", body)
		}
		if e == nil && !single {
			// The same elements, one per line.
			var raws []json.RawMessage
			if err := json.Unmarshal(body, &raws); err != nil {
				t.Fatal(err)
			}
			var lines []byte
			for _, r := range raws {
				var c bytes.Buffer
				if json.Compact(&c, r) != nil {
					t.Fatalf("element %q does not compact", r)
				}
				lines = append(append(lines, c.Bytes()...), '\n')
			}
			nd, _, nde := decodeRecordsBody(lines, bodyNDJSON)
			if nde != nil || len(nd) != len(ins) {
				t.Fatalf("array %q decoded, its NDJSON %q: %v", body, lines, nde)
			}
			for i := range ins {
				a, _ := toRecord(&ins[i], 1<<20)
				b, _ := toRecord(&nd[i], 1<<20)
				sortHeaders(&a.Headers)
				sortHeaders(&b.Headers)
				// A value sent as JSON is stored as sent: the NDJSON line
				// was compacted, so compare compacted values.
				for _, r := range []*[]byte{&a.Value, &b.Value} {
					var c bytes.Buffer
					if json.Compact(&c, *r) == nil {
						*r = c.Bytes()
					}
				}
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("record %d: array gives %+v, NDJSON %+v", i, a, b)
				}
			}
		}
		for _, in := range ins {
			rec, err := toRecord(&in, 1<<20)
			if err != nil {
				continue
			}
			out := wire.AppendRecordJSON(nil, 0, &rec)
			var m map[string]any
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatalf("record %+v reads out as invalid JSON %q: %v", rec, out, err)
			}
		}
	})
}

func sortHeaders[H any](hs *[]H) {
	sort.Slice(*hs, func(i, j int) bool {
		a, _ := json.Marshal((*hs)[i])
		b, _ := json.Marshal((*hs)[j])
		return string(a) < string(b)
	})
}

// FuzzLastEventID: whatever a client sends as Last-Event-ID parses or is
// refused without panicking, and an accepted one round-trips through the
// id the stream writes.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"0/41", "0/-1,1/7,2/3", "x", "0/", "/1", "1/2,1/3", " 0/1 , 2/5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		last, e := parseLastEventID(s)
		if e != nil {
			if e.Code != wire.CodeInvalidRequest {
				t.Fatalf("%q: code %s", s, e.Code)
			}
			return
		}
		parts := make([]int, 0, len(last))
		for p := range last {
			parts = append(parts, p)
		}
		sort.Ints(parts)
		id := string(appendEventID(nil, parts, last))
		again, e := parseLastEventID(id)
		if e != nil || !reflect.DeepEqual(again, last) {
			t.Fatalf("%q → %v → %q → %v, %v", s, last, id, again, e)
		}
	})
}
