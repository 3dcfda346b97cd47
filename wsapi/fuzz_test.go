package wsapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/internal/wiretest"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// FuzzRequest feeds arbitrary client frames through the server's decoding:
// the request, its records and its from. Nothing may panic, a refusal is
// invalid_json exactly when the frame is not a UTF-8 JSON object, and every
// record accepted must survive the trip back out as a push record, its value
// byte for byte.
func FuzzRequest(f *testing.F) {
	wiretest.AddSeeds(f, "requests")
	f.Add([]byte(`{"op":"produce","id":9,"topic":"t","partition":"1","value":1}`))
	f.Add([]byte(`{"op":"produce","id":9,"topic":"t","value":"42"}`))
	f.Add([]byte("{\"op\":\"produce\",\"value\":\"\xff\"}"))
	f.Add([]byte(`{"op":"produce","topic":"t","value_b64":"IG51bGwg"}`)) // bytes " null "
	f.Fuzz(func(t *testing.T, msg []byte) {
		preq, e := decodeRequest(msg, "request")
		var obj map[string]json.RawMessage
		isObject := utf8.Valid(msg) && json.Unmarshal(msg, &obj) == nil
		switch {
		case e != nil && e.Code == wire.CodeInvalidJSON:
			if isObject {
				t.Fatalf("a UTF-8 JSON object refused as invalid_json: %s: %v", msg, e)
			}
			return
		case e != nil && e.Code == wire.CodeInvalidRequest:
			if !isObject || preq == nil || !strings.Contains(e.Message, "field ") {
				t.Fatalf("invalid_request %v for %s", e, msg)
			}
			// The id is kept (when it is spelled once, plainly).
			if id, ok := obj["id"]; ok && bytes.Count(msg, []byte(`"id"`)) == 1 && !bytes.Equal(id, preq.ID) {
				t.Fatalf("invalid_request for %s lost the id: %q", msg, preq.ID)
			}
			return
		case e != nil:
			t.Fatalf("decodeRequest: %v", e)
		case !isObject:
			t.Fatalf("decodeRequest accepted %q, which is not a UTF-8 JSON object", msg)
		}
		req := *preq
		wire.ParseFrom(req.From)
		engineConfig(req.Config)
		ins := req.Records
		if req.RecordIn.HasValue() {
			ins = append(ins, req.RecordIn)
		}
		for _, in := range ins {
			rec, err := toRecord(&in, 1<<20)
			if err != nil {
				if _, ok := err.(*wire.Error); !ok {
					t.Fatalf("toRecord returned a non-protocol error %T %v", err, err)
				}
				continue
			}
			rec.Offset, rec.Timestamp = 42, 1700000000000
			out := wire.AppendRecordJSON(nil, 3, &rec)
			if !json.Valid(out) {
				t.Fatalf("record JSON is not valid: %s", out)
			}
			back, err := wsclient.DecodeRecord(out)
			if err != nil {
				t.Fatalf("decoding our own record %s: %v", out, err)
			}
			if back.Offset != 42 || back.Partition != 3 || (back.Key == nil) != (rec.Key == nil) || !bytes.Equal(back.Key, rec.Key) {
				t.Fatalf("record %s came back as %+v", out, back)
			}
			if (back.Value == nil) != (rec.Value == nil) {
				t.Fatalf("tombstone lost: %s", out)
			}
			// A JSON string comes back as its text (it is marked as
			// text), any other JSON as the bytes sent.
			if v := rec.Value; !bytes.Equal(back.Value, v) {
				t.Fatalf("value %q came back as %q via %s", v, back.Value, out)
			}
			if len(back.Headers) > len(rec.Headers) {
				t.Fatalf("headers grew: %v -> %v", rec.Headers, back.Headers)
			}
		}
	})
}

// FuzzFastDecode checks the fast request decoder against encoding/json:
// whenever it accepts a message, the result is exactly json.Unmarshal's;
// and a request of the shape it is for, built from the input, it accepts.
func FuzzFastDecode(f *testing.F) {
	wiretest.AddSeeds(f, "requests")
	f.Add([]byte(`{"op":"produce","records":[{"value":{"a":[1,2.5e3,-0,true,null,"x\u00e9\n"]}}],"op":"x"}`))
	f.Add([]byte(`{"op":"produce","partition":01,"value":1}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		checkFastDecodeScope(t, msg)
		var fast request
		if !fastDecode(msg, &fast) {
			return
		}
		var slow request
		if err := json.Unmarshal(msg, &slow); err != nil {
			t.Fatalf("fast decoder accepted %q, encoding/json says %v", msg, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast and slow decoders differ on %q:\nfast %+v\nslow %+v", msg, fast, slow)
		}
	})
}

// FuzzDecodeReused decodes a request into the request the read pump
// reuses, after another one: the result must be the one a fresh decode
// gives (nothing of the earlier request shows through).
func FuzzDecodeReused(f *testing.F) {
	f.Add([]byte(`{"op":"produce","topic":"a","records":[{"value":1},{"value":2,"key":"k"}]}`), []byte(`{"op":"produce","topic":"a","value":3}`))
	f.Add([]byte(`{"op":"produce","topic":"a","value":3}`), []byte(`{"op":"produce","topic":"b","records":[{"value":4}]}`))
	f.Add([]byte(`{"op":"produce","topic":"a","records":[{"value":1,"headers":{"h":"v"}}]}`), []byte(`{"op":"subscribe","topic":"a","from":"earliest"}`))
	f.Add([]byte(`{"op":"produce","topic":"a","value":1}`), []byte(`{"op":"produce","topic":"a","value":2,"id":"x"}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var reused request
		decodeRequestInto(first, "request", &reused)
		got, gotErr := decodeRequestInto(second, "request", &reused)
		want, wantErr := decodeRequest(second, "request")
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Fatalf("after %q, %q: error %v, fresh %v", first, second, gotErr, wantErr)
		}
		if got == nil || want == nil {
			if (got == nil) != (want == nil) {
				t.Fatalf("after %q, %q: request %v, fresh %v", first, second, got, want)
			}
			return
		}
		g, w := *got, *want
		g.spare, g.lastTopic, w.spare, w.lastTopic = nil, "", nil, ""
		if len(g.Records) == 0 && len(w.Records) == 0 && (g.Records == nil) != (w.Records == nil) {
			t.Fatalf("after %q, %q: records %#v, fresh %#v", first, second, g.Records, w.Records)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("after %q, %q:\nreused %+v\nfresh  %+v", first, second, g, w)
		}
	})
}

// FuzzAlter feeds arbitrary alter_topic requests to decodeAlter: nothing
// panics, a refusal is invalid_request or invalid_config, and an accepted
// alter names only fields alter_topic changes.
func FuzzAlter(f *testing.F) {
	f.Add([]byte(`{"op":"alter_topic","topic":"t","alter":{"retention_ms":5,"cleanup":"compact"}}`))
	f.Add([]byte(`{"op":"alter_topic","topic":"t","alter":{"codec":"none"}}`))
	f.Add([]byte(`{"op":"alter_topic","topic":"t","alter":{"partitions":"7"}}`))
	f.Add([]byte(`{"alter":null}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		a, e := decodeAlter(msg)
		if e != nil {
			if e.Code != wire.CodeInvalidRequest && e.Code != wire.CodeInvalidConfig {
				t.Fatalf("decodeAlter(%s): %v", msg, e)
			}
			return
		}
		var body struct {
			Alter map[string]json.RawMessage `json:"alter"`
		}
		if err := json.Unmarshal(msg, &body); err != nil || body.Alter == nil {
			t.Fatalf("decodeAlter accepted %s, whose alter is not an object (%v)", msg, err)
		}
		for name := range body.Alter {
			if !slices.Contains(alterableFields, name) {
				t.Fatalf("decodeAlter accepted field %q of %s", name, msg)
			}
		}
		if _, perr := applyAlter(a, engine.DefaultTopicConfig()); perr != nil && perr.Code != wire.CodeInvalidConfig {
			t.Fatalf("applyAlter of %s: %v", msg, perr)
		}
	})
}
