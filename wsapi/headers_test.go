package wsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// headerMaps returns n distinct header names split between headers and
// headers_b64 (the last quarter), as a JSON record carries them.
func headerMaps(n int) (map[string]string, map[string]string) {
	hs, b64 := map[string]string{}, map[string]string{}
	for i := range n {
		if i >= n-n/4 {
			b64[fmt.Sprintf("h%02d", i)] = "dg=="
		} else {
			hs[fmt.Sprintf("h%02d", i)] = "v"
		}
	}
	return hs, b64
}

func jsonRecord(t *testing.T, headers int) map[string]any {
	t.Helper()
	hs, b64 := headerMaps(headers)
	return map[string]any{"value": "v", "headers": hs, "headers_b64": b64}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A produced record holds at most wire.MaxRecordHeaders headers whatever
// its encoding: a JSON produce (inline or in records), a POST body (one
// object, an array, NDJSON) and a binary frame refuse one more with
// invalid_request naming the record and the limit, and store nothing; the
// limit itself is accepted everywhere.
func TestRecordHeaderLimitInEveryEncoding(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	over, limit := wire.MaxRecordHeaders+1, wire.MaxRecordHeaders
	want := fmt.Sprintf("%d headers (at most %d", over, limit)

	post := func(contentType string, body []byte) (int, string) {
		t.Helper()
		resp, err := http.Post("http://"+ts.addr+"/v1/topics/h/records", contentType, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	binary := func(id, headers int) map[string]any {
		t.Helper()
		rec := engine.Record{Value: []byte("v")}
		for i := range headers {
			rec.Headers = append(rec.Headers, engine.Header{Key: fmt.Sprintf("h%02d", i), Value: []byte("v")})
		}
		if err := c.ws.WriteMessage(websocket.BinaryMessage, binFrame(fmt.Sprintf(`{"op":"produce","id":%d,"topic":"h"}`, id), engine.Record{Value: []byte("ok")}, rec)); err != nil {
			t.Fatal(err)
		}
		return c.next()
	}
	ndjson := func(headers int) []byte {
		return []byte("{\"value\":\"ok\"}\n\n" + string(mustJSON(t, jsonRecord(t, headers))) + "\n")
	}

	inline := jsonRecord(t, over)
	inline["op"], inline["topic"] = "produce", "h"
	for _, tc := range []struct {
		name, where string
		reply       func() (code, msg string)
	}{
		{"websocket inline", "", func() (string, string) {
			m := c.call(1, inline)
			return errCode(m), fmt.Sprint(m["error"])
		}},
		{"websocket records", "record 1: ", func() (string, string) {
			m := c.call(2, map[string]any{"op": "produce", "topic": "h", "records": []any{map[string]any{"value": "ok"}, jsonRecord(t, over)}})
			return errCode(m), fmt.Sprint(m["error"])
		}},
		{"binary frame", "record 1: ", func() (string, string) {
			m := binary(3, over)
			return errCode(m), fmt.Sprint(m["error"])
		}},
		{"POST object", "", func() (string, string) {
			status, body := post("application/json", mustJSON(t, jsonRecord(t, over)))
			code, msg := bodyErrCode(t, body)
			if status != http.StatusBadRequest {
				t.Errorf("POST object: status %d, want 400", status)
			}
			return code, msg
		}},
		{"POST array", "record 1: ", func() (string, string) {
			_, body := post("application/json", mustJSON(t, []any{map[string]any{"value": "ok"}, jsonRecord(t, over)}))
			return bodyErrCode(t, body)
		}},
		{"NDJSON", "record 1: ", func() (string, string) {
			_, body := post("application/x-ndjson", ndjson(over))
			return bodyErrCode(t, body)
		}},
	} {
		code, msg := tc.reply()
		if code != wire.CodeInvalidRequest || !strings.Contains(msg, tc.where+want) {
			t.Errorf("%s with %d headers: %s %q, want %s naming %q", tc.name, over, code, msg, wire.CodeInvalidRequest, tc.where+want)
		}
		if d := topicDirs(t, ts.dir); len(d) != 0 {
			t.Fatalf("%s with %d headers stored something: %v", tc.name, over, d)
		}
	}

	// The limit itself is a record like any other, in each encoding.
	inline = jsonRecord(t, limit)
	inline["op"], inline["topic"] = "produce", "h"
	if m := c.call(4, inline); errCode(m) != "" {
		t.Errorf("websocket inline with %d headers: %v", limit, m)
	}
	if m := c.call(5, map[string]any{"op": "produce", "topic": "h", "records": []any{jsonRecord(t, limit)}}); errCode(m) != "" {
		t.Errorf("websocket records with %d headers: %v", limit, m)
	}
	if m := binary(6, limit); errCode(m) != "" {
		t.Errorf("binary frame with %d headers: %v", limit, m)
	}
	if status, body := post("application/json", mustJSON(t, jsonRecord(t, limit))); status != http.StatusOK {
		t.Errorf("POST object with %d headers: %d %s", limit, status, body)
	}
	if status, body := post("application/x-ndjson", ndjson(limit)); status != http.StatusOK {
		t.Errorf("NDJSON with %d headers: %d %s", limit, status, body)
	}
	info, err := ts.eng.Describe("h")
	if err != nil {
		t.Fatal(err)
	}
	// inline, records, binary (2), POST, NDJSON (2)
	if hwm := info.Partitions[0].HWM; hwm != 7 {
		t.Errorf("HWM %d after the accepted produces, want 7", hwm)
	}
}
