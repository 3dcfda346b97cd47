package wsapi

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine"
)

// addSeeds adds every file of testdata/dir to f's corpus.
func addSeeds(f *testing.F, dir string) {
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", dir, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzRequest feeds arbitrary client frames through the server's decoding:
// the request, its records and its from. Nothing may panic, a refusal is
// invalid_json exactly when the frame is not a UTF-8 JSON object, and every
// record accepted must survive the trip back out as a push record, its value
// byte for byte.
func FuzzRequest(f *testing.F) {
	addSeeds(f, "requests")
	f.Add([]byte(`{"op":"produce","id":9,"topic":"t","partition":"1","value":1}`))
	f.Add([]byte(`{"op":"produce","id":9,"topic":"t","value":"42"}`))
	f.Add([]byte("{\"op\":\"produce\",\"value\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		preq, e := decodeRequest(msg, "request")
		var obj map[string]json.RawMessage
		isObject := utf8.Valid(msg) && json.Unmarshal(msg, &obj) == nil
		switch {
		case e != nil && e.Code == CodeInvalidJSON:
			if isObject {
				t.Fatalf("a UTF-8 JSON object refused as invalid_json: %s: %v", msg, e)
			}
			return
		case e != nil && e.Code == CodeInvalidRequest:
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
		parseFrom(req.From)
		req.Config.engineConfig()
		ins := req.Records
		if req.RecordIn.hasValue() {
			ins = append(ins, req.RecordIn)
		}
		for _, in := range ins {
			rec, err := in.toRecord(1 << 20)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("toRecord returned a non-protocol error %T %v", err, err)
				}
				continue
			}
			rec.Offset, rec.Timestamp = 42, 1700000000000
			out := appendRecordJSON(nil, 3, &rec)
			if !json.Valid(out) {
				t.Fatalf("record JSON is not valid: %s", out)
			}
			back, err := DecodeRecord(out)
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
	addSeeds(f, "requests")
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

// FuzzValidJSON checks validJSON against json.Valid.
func FuzzValidJSON(f *testing.F) {
	addSeeds(f, "requests")
	addSeeds(f, "records")
	f.Add([]byte(`[1e5, -0.5, "\ud800", {"a":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if validJSON(b) != json.Valid(b) {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, validJSON(b), json.Valid(b))
		}
	})
}

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
	addSeeds(f, "records")
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
		check(appendRecordJSON(nil, 1, &rec))
	})
}

// TestValidJSONEveryPosition puts each special byte at every position of a
// string around the eight-byte word boundaries of skipString.
func TestValidJSONEveryPosition(t *testing.T) {
	specials := []string{`"`, `\`, `\"`, `\u00e9`, `\x`, "\x00", "\x1f", "\x20", "\x7f", "\x80", "\xff", "é"}
	for pos := range 40 {
		for tail := range 12 {
			for _, sp := range specials {
				s := `"` + strings.Repeat("a", pos) + sp + strings.Repeat("b", tail) + `"`
				for _, doc := range []string{s, "[" + s + "]", `{"k":` + s + `}`} {
					if got, want := validJSON([]byte(doc)), json.Valid([]byte(doc)); got != want {
						t.Fatalf("validJSON(%q) = %v, json.Valid %v", doc, got, want)
					}
				}
			}
		}
	}
}

// TestValidJSONStructures compares validJSON with json.Valid on structural
// edge cases, nesting around the fast path's depth limit included.
func TestValidJSONStructures(t *testing.T) {
	docs := []string{
		`[1,]`, `{"a":1,}`, `{"a" 1}`, `[}`, `{]`, `[[]]`, `{"a":{}}`, ` [ 1 , 2 ] `, `{"a":[{"b":[]}]}`,
		`-`, `-01`, `1.`, `1e`, `1e+`, `1.5e-3`, `tru`, `nulll`, `[true,false,null]`, `{"a":1}{}`, `{,}`,
		`[1 2]`, `{"a":1 "b":2}`, `{"a"}`, `{1:2}`, `""`, `"\u12"`, `"\uzzzz"`, `[-]`, `0`, ` `, ``,
	}
	for _, n := range []int{1, 62, 63, 64, 65, 100} {
		docs = append(docs, strings.Repeat("[", n)+strings.Repeat("]", n), strings.Repeat(`{"a":`, n)+"1"+strings.Repeat("}", n),
			strings.Repeat("[", n)+strings.Repeat("]", n-1))
	}
	for _, d := range docs {
		if got, want := validJSON([]byte(d)), json.Valid([]byte(d)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid %v", d, got, want)
		}
	}
}

// TestPlainRun checks the word-at-a-time scan of string bytes against a
// byte loop: every stop byte at every position of runs of every filler,
// including bytes >= 0x80 and the neighbours of the stop bytes.
func TestPlainRun(t *testing.T) {
	slow := func(b []byte, j int) int {
		for j < len(b) && b[j] >= 0x20 && b[j] != '"' && b[j] != '\\' {
			j++
		}
		return j
	}
	fillers := []byte{' ', '!', '#', '[', ']', 'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	stops := []byte{'"', '\\', 0, 0x1f, '\n'}
	for n := 0; n <= 20; n++ {
		for _, f := range fillers {
			b := bytes.Repeat([]byte{f}, n)
			for start := 0; start <= n; start++ {
				if got, want := plainRun(b, start), slow(b, start); got != want {
					t.Fatalf("plainRun(%q, %d) = %d, want %d", b, start, got, want)
				}
			}
			for pos := range n {
				for _, s := range stops {
					c := bytes.Clone(b)
					c[pos] = s
					if pos+1 < n {
						c[pos+1] = s ^ 0x80 // a byte that only differs in its high bit
					}
					for start := 0; start <= n; start++ {
						if got, want := plainRun(c, start), slow(c, start); got != want {
							t.Fatalf("plainRun(%q, %d) = %d, want %d", c, start, got, want)
						}
					}
				}
			}
		}
	}
}
