package wsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// Requests that parse as JSON objects but have a field of the wrong type
// are refused with invalid_request, carrying their id (so that a client
// matching replies by id gets its answer) and naming the field; nothing is
// stored.
func TestBadFieldTypesGetInvalidRequestWithID(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "one", "value": 1}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	before := logState(t, ts.eng)
	cases := []struct {
		raw   string // the request; its id is added in front
		field string // named in the message
	}{
		{`"op":"produce","topic":"one","key":5,"value":1`, "key"},
		{`"op":"produce","topic":"one","partition":"1","value":1`, "partition"},
		{`"op":"commit","consumer":"c","topic":"one","partition":0,"offset":1.5`, "offset"},
		{`"op":"create_topic","topic":"two","config":{"partitions":"three"}`, "config.partitions"},
		{`"op":"create_topic","topic":"two","config":{"retention_ms":"1h"}`, "config.retention_ms"},
		{`"op":"produce","topic":"one","records":{"value":1}`, "records"},
		{`"op":"produce","topic":"one","records":[{"value":1,"key_b64":7}]`, "key_b64"},
		{`"op":"produce","topic":"one","value":1,"headers":{"trace":1}`, "headers"},
		{`"op":"produce","topic":"one","value":1,"tombstone":"yes"`, "tombstone"},
		{`"op":"unsubscribe","sub":"1"`, "sub"},
		{`"op":"describe","topic":["one"]`, "topic"},
		{`"op":7`, "op"},
	}
	for i, tc := range cases {
		id := 100 + i
		c.sendText(fmt.Sprintf(`{"id":%d,%s}`, id, tc.raw))
		r := c.waitFor(func(m map[string]any) bool { return m["id"] == float64(id) || (m["id"] == nil && m["error"] != nil) })
		if r["id"] != float64(id) {
			t.Errorf("%s: reply without the request's id: %v", tc.raw, r)
			continue
		}
		if errCode(r) != wire.CodeInvalidRequest {
			t.Errorf("%s: code %q, want %q (%v)", tc.raw, errCode(r), wire.CodeInvalidRequest, r)
		}
		if msg, _ := r["error"].(map[string]any)["message"].(string); !strings.Contains(msg, `"`+tc.field+`"`) {
			t.Errorf("%s: message %q does not name field %q", tc.raw, msg, tc.field)
		}
	}
	// Not an object at all: invalid_json (no id can be read).
	for _, raw := range []string{`[1,2]`, `"produce"`, `{"op":"produce",`} {
		c.sendText(raw)
		if r := c.waitFor(func(m map[string]any) bool { return m["error"] != nil }); errCode(r) != wire.CodeInvalidJSON || r["id"] != nil {
			t.Errorf("%s: %v, want invalid_json without id", raw, r)
		}
	}
	if after := logState(t, ts.eng); after != before {
		t.Errorf("rejected requests changed the log:\nbefore %s\nafter  %s", before, after)
	}
	if dirs := topicDirs(t, ts.dir); strings.Join(dirs, ",") != "one" {
		t.Errorf("topic directories after rejected requests: %v", dirs)
	}
}

// A field of the wrong type in one of a produce's "records" names that
// record by its place, as a POST body's array does, so that the one bad
// record of thousands can be found; nothing is stored.
func TestBadFieldTypeInRecordsNamesTheRecord(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i, tc := range []struct{ records, want string }{
		{`[{"value":1},{"value":2},{"value":3,"key":5}]`, `record 2: field "key": got number, want a string`},
		{`[{"value":1,"key_b64":7}]`, `record 0: field "key_b64": got number, want a string`},
		{`[{"value":1},{"value":2,"headers":{"h":1}}]`, `record 1: field "headers": got number, want a string`},
	} {
		c.sendText(fmt.Sprintf(`{"op":"produce","id":%d,"topic":"one","records":%s}`, i+1, tc.records))
		r := c.next()
		msg, _ := r["error"].(map[string]any)["message"].(string)
		if r["id"] != float64(i+1) || errCode(r) != wire.CodeInvalidRequest || msg != tc.want {
			t.Errorf("records %s: %v, want invalid_request %q", tc.records, r, tc.want)
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Errorf("refused produces made %v", dirs)
	}
}

// A text frame must be UTF-8 (RFC 6455): one that is not is refused with
// invalid_json and nothing is stored (not a value with U+FFFD in it).
func TestInvalidUTF8TextFrameStoresNothing(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i, raw := range []string{
		"{\"op\":\"produce\",\"id\":1,\"topic\":\"u\",\"value\":\"caf\xe9\"}",
		"{\"op\":\"produce\",\"id\":2,\"topic\":\"u\",\"records\":[{\"key\":\"\xff\xfe\",\"value\":1}]}",
		"{\"op\":\"produce\",\"id\":3,\"topic\":\"u\",\"value\":{\"a\":\"\xc3\"}}",
	} {
		c.sendText(raw)
		r := c.waitFor(func(m map[string]any) bool { return m["error"] != nil })
		if errCode(r) != wire.CodeInvalidJSON {
			t.Errorf("frame %d: %v, want invalid_json", i, r)
		}
		if msg, _ := r["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "UTF-8") {
			t.Errorf("frame %d: message %q does not say UTF-8", i, msg)
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Errorf("topic directories after invalid UTF-8: %v", dirs)
	}
	// The produce endpoint: a text frame is a text value.
	p := dialRaw(t, ts.addr, "/v1/topics/u/produce", nil)
	if err := p.ws.WriteMessage(websocket.TextMessage, []byte("caf\xe9")); err != nil {
		t.Fatal(err)
	}
	if m := p.next(); errCode(m) != wire.CodeInvalidJSON {
		t.Errorf("produce endpoint, invalid UTF-8 text frame: %v", m)
	}
	if err := p.ws.WriteMessage(websocket.BinaryMessage, []byte("caf\xe9")); err != nil {
		t.Fatal(err)
	}
	if m := p.next(); errCode(m) != "" || num(t, m, "offset") != 0 {
		t.Errorf("produce endpoint, the same bytes in a binary frame: %v", m)
	}
}

// Replies on one connection come in request order, whatever the op and
// whether or not the request was refused: a subscribe sent after two
// produces to a new topic sees the topic they created.
func TestRepliesInRequestOrder(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	var frames [][]byte
	frames = append(frames, binaryFrame(t, 1, "ordered", "a", "b"))
	frames = append(frames, binaryFrame(t, 2, "ordered", "c"))
	texts := []string{
		`{"op":"subscribe","id":3,"topic":"ordered","from":"earliest"}`,
		`{"op":"describe","id":4,"topic":"ordered"}`,
		`{"op":"produce","id":5,"topic":"ordered","value":"d"}`,
		`{"op":"produce","id":6,"topic":"ordered","key":5,"value":1}`,
		`{"op":"nope","id":7}`,
		`{"op":"topics","id":8}`,
		`{"op":"produce","id":9,"topic":"ordered","records":[{"value":"e"},{"value":"f"}]}`,
		`{"op":"commit","id":10,"consumer":"c1","topic":"ordered","partition":0,"offset":5}`,
		`{"op":"describe","id":11,"topic":"ordered"}`,
	}
	for _, f := range frames {
		if err := c.ws.WriteMessage(websocket.BinaryMessage, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range texts {
		c.sendText(s)
	}
	var got []int64
	var replies []map[string]any
	for len(got) < 11 {
		m := c.next()
		if m["id"] == nil {
			continue // a push
		}
		got = append(got, num(t, m, "id"))
		replies = append(replies, m)
	}
	for i, id := range got {
		if id != int64(i+1) {
			t.Fatalf("replies came in the order %v, want 1..11", got)
		}
	}
	if errCode(replies[2]) != "" {
		t.Errorf("subscribe after two produces to a new topic: %v", replies[2])
	}
	if hwm := replies[3]["topic"].(map[string]any)["partitions"].([]any)[0].(map[string]any)["hwm"]; hwm != float64(3) {
		t.Errorf("describe after produces of 3 records: hwm %v", hwm)
	}
	if errCode(replies[5]) != wire.CodeInvalidRequest || errCode(replies[6]) != wire.CodeUnknownOp {
		t.Errorf("refused requests: %v, %v", replies[5], replies[6])
	}
	if errCode(replies[9]) != "" {
		t.Errorf("commit at offset 5 after 6 records: %v", replies[9])
	}
}

// binaryFrame builds a binary produce frame of keyless records.
func binaryFrame(t *testing.T, id int, topic string, values ...string) []byte {
	t.Helper()
	b := fmt.Appendf(nil, `{"op":"produce","id":%d,"topic":%q}`+"\n", id, topic)
	for _, v := range values {
		b = append(b, 0, byte(len(v)+1))
		b = append(b, v...)
		b = append(b, 0)
	}
	return b
}

// A consumer may subscribe to a topic before anything was produced to it:
// the topic is created as a first produce would create it, and the
// subscription delivers from its first record. When the topic is deleted,
// the subscription gets one last push saying so.
func TestSubscribeBeforeTopicExists(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "subscribe", "topic": "later", "from": "latest"})
	if errCode(r) != "" {
		t.Fatalf("subscribe to a topic that does not exist yet: %v", r)
	}
	sub := num(t, r, "sub")
	tail := dialRaw(t, ts.addr, "/v1/topics/later2/tail?from=earliest", nil)

	p := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := p.call(1, map[string]any{"op": "produce", "topic": "later", "value": "first"}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	// The tail connection's topic was created when it connected: wait for
	// it to show, then produce.
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(time.Millisecond) {
		if _, err := ts.eng.Describe("later2"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tail endpoint did not create its topic")
		}
	}
	if r := p.call(2, map[string]any{"op": "produce", "topic": "later2", "value": "first"}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	push := c.waitFor(func(m map[string]any) bool { return m["sub"] != nil && m["records"] != nil })
	recs := push["records"].([]any)
	if rec := recs[0].(map[string]any); rec["offset"] != float64(0) || rec["value"] != "first" {
		t.Errorf("first push: %v", push)
	}
	if m := tail.next(); m["offset"] != float64(0) || m["value"] != "first" {
		t.Errorf("tail frame: %v", m)
	}

	if r := p.call(3, map[string]any{"op": "delete_topic", "topic": "later"}); errCode(r) != "" {
		t.Fatalf("delete_topic: %v", r)
	}
	last := c.waitFor(func(m map[string]any) bool { return m["sub"] != nil && m["error"] != nil })
	if num(t, last, "sub") != sub || errCode(last) != wire.CodeTopicNotFound {
		t.Errorf("last push after delete: %v", last)
	}
}

// The zero-ceremony endpoints refuse a partition that is not a number as
// an invalid request (not as a partition out of range), and name the
// query parameter.
func TestQueryPartitionNotANumber(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	for _, path := range []string{"/v1/topics/q/tail?partition=abc", "/v1/topics/q/produce?partition=abc"} {
		c := dialRaw(t, ts.addr, path, nil)
		m := c.next()
		if errCode(m) != wire.CodeInvalidRequest {
			t.Errorf("%s: %v, want invalid_request", path, m)
		}
		if msg, _ := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, `partition="abc"`) {
			t.Errorf("%s: message %q", path, msg)
		}
		c.ws.SetReadDeadline(time.Now().Add(hangGuard))
		_, _, err := c.ws.ReadMessage()
		want := wire.CodeInvalidRequest + ": " + m["error"].(map[string]any)["message"].(string)
		if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.ClosePolicyViolation || ce.Text != want {
			t.Errorf("%s: close %v, want 1008 %q", path, err, want)
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Errorf("topic directories: %v", dirs)
	}
}

// A query string that does not parse (a bad percent escape) is refused
// naming it, on the zero-ceremony endpoints and the HTTP ones, instead of
// read without the parameter it spoilt: ?key=%zz would store records with
// no key, ?from=%zz read from the default. Nothing is stored or created.
func TestMalformedQueryRefused(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	for _, path := range []string{"/v1/topics/q/tail?from=%zz", "/v1/topics/q/produce?key=%zz"} {
		c := dialRaw(t, ts.addr, path, nil)
		m := c.next()
		msg, _ := m["error"].(map[string]any)["message"].(string)
		if errCode(m) != wire.CodeInvalidRequest || !strings.Contains(msg, `query "`) || !strings.Contains(msg, "%zz") {
			t.Errorf("%s: %v, want invalid_request naming the query", path, m)
		}
		c.ws.SetReadDeadline(time.Now().Add(hangGuard))
		_, _, err := c.ws.ReadMessage()
		if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.ClosePolicyViolation {
			t.Errorf("%s: close %v, want 1008", path, err)
		}
	}
	for _, c := range []struct{ args []string }{
		{[]string{"http://" + ts.addr + "/v1/topics/q/records?from=%zz"}},
		{[]string{"-d", `{"value":1}`, "http://" + ts.addr + "/v1/topics/q/records?partition=%zz"}},
		{[]string{"--max-time", "5", "http://" + ts.addr + "/v1/topics/q/events?from=%zz"}},
	} {
		status, body := curlRun(t, c.args...)
		code, msg := bodyErrCode(t, body)
		if status != 400 || code != wire.CodeInvalidRequest || !strings.Contains(msg, "%zz") {
			t.Errorf("curl %q: %d %s, want 400 invalid_request naming the query", c.args, status, body)
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Errorf("topic directories: %v", dirs)
	}
}

// Values read back with the type they were produced with: a JSON value as
// the same JSON, a JSON string as the same string ("42" stays the string
// "42", "null" is not a tombstone), a text frame of the produce endpoint as
// its text unless it is a JSON object or array. Raw bytes (binary frames,
// Kafka clients) keep today's reading: valid JSON shows as JSON.
func TestValueRoundTrip(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	jsonValues := []string{
		`"42"`, `"null"`, `"{\"a\":1}"`, `"true"`, `"hi"`, `""`, `"[1, 2]"`, `" 7 "`,
		`42`, `-1.50e3`, `{"a":1}`, `[1,"x",null]`, `true`, `false`, `"caf\u00e9"`,
	}
	var want []string
	for i, v := range jsonValues {
		c.sendText(fmt.Sprintf(`{"op":"produce","id":%d,"topic":"types","value":%s}`, i, v))
		if m := c.waitFor(func(m map[string]any) bool { return m["id"] == float64(i) }); errCode(m) != "" {
			t.Fatalf("produce %s: %v", v, m)
		}
		want = append(want, v)
	}
	want[len(want)-1] = `"café"` // the server writes the text unescaped
	// A tombstone still is one.
	if m := c.call(100, map[string]any{"op": "produce", "topic": "types", "value": nil}); errCode(m) != "" {
		t.Fatalf("tombstone: %v", m)
	}
	want = append(want, "tombstone")

	p := dialRaw(t, ts.addr, "/v1/topics/types/produce", nil)
	for _, f := range []struct{ text, want string }{
		{"42", `"42"`}, {"null", `"null"`}, {"hello", `"hello"`}, {`{"a":1}`, `{"a":1}`}, {` [1] `, `[1]`},
	} {
		if err := p.ws.WriteMessage(websocket.TextMessage, []byte(f.text)); err != nil {
			t.Fatal(err)
		}
		if m := p.next(); errCode(m) != "" {
			t.Fatalf("text frame %q: %v", f.text, m)
		}
		want = append(want, f.want)
	}
	// Binary produce frames carry bytes: valid JSON shows as JSON, as for
	// records written before values had a type.
	if err := c.ws.WriteMessage(websocket.BinaryMessage, binaryFrame(t, 200, "types", "42", `{"b":2}`, "plain")); err != nil {
		t.Fatal(err)
	}
	if m := c.waitFor(func(m map[string]any) bool { return m["id"] == float64(200) }); errCode(m) != "" {
		t.Fatalf("binary produce: %v", m)
	}
	want = append(want, `42`, `{"b":2}`, `"plain"`)

	// Read everything back and compare the value's JSON text exactly.
	c.sendText(`{"op":"subscribe","id":300,"topic":"types","from":"earliest"}`)
	var got []string
	for len(got) < len(want) {
		c.ws.SetReadDeadline(time.Now().Add(hangGuard))
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var push struct {
			Records []map[string]json.RawMessage `json:"records"`
		}
		if err := json.Unmarshal(b, &push); err != nil {
			t.Fatal(err)
		}
		for _, r := range push.Records {
			if string(r["tombstone"]) == "true" {
				got = append(got, "tombstone")
				continue
			}
			got = append(got, string(r["value"]))
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: value %s, want %s", i, got[i], want[i])
		}
	}
}

// A topic's configuration in replies names every field, retention_ms and
// retention_bytes included when they are 0 (no limit).
func TestConfigFieldsPresentWhenZero(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "create_topic", "topic": "cfg", "config": map[string]any{"retention_ms": 0}})
	if errCode(r) != "" {
		t.Fatal(r)
	}
	for _, m := range []map[string]any{r, c.call(2, map[string]any{"op": "describe", "topic": "cfg"})} {
		cfg := m["topic"].(map[string]any)["config"].(map[string]any)
		for _, k := range []string{"partitions", "codec", "segment_bytes", "sync_mode", "retention_ms", "retention_bytes", "cleanup"} {
			if _, ok := cfg[k]; !ok {
				t.Errorf("config without %q: %v", k, cfg)
			}
		}
		if cfg["retention_ms"] != float64(0) || cfg["retention_bytes"] != float64(0) {
			t.Errorf("retention in %v", cfg)
		}
	}
}

// An invalid topic name with a non-ASCII character gets an error that
// names that character, on /v1/ws and in the 1008 close reason of the
// zero-ceremony endpoints (cut, when long, on a character boundary).
func TestNonASCIITopicNameError(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "produce", "topic": "café", "value": 1})
	msg, _ := r["error"].(map[string]any)["message"].(string)
	if errCode(r) != wire.CodeInvalidTopic || !strings.Contains(msg, "'é'") {
		t.Errorf("reply %v: want invalid_topic naming 'é'", r)
	}
	long := strings.Repeat("é", 100)
	tail := dialRaw(t, ts.addr, "/v1/topics/"+long+"/tail", nil)
	if m := tail.next(); errCode(m) != wire.CodeInvalidTopic {
		t.Errorf("tail of %q: %v", long, m)
	}
	tail.ws.SetReadDeadline(time.Now().Add(hangGuard))
	_, _, err := tail.ws.ReadMessage()
	ce, ok := err.(*websocket.CloseError)
	if !ok || ce.Code != websocket.ClosePolicyViolation || !strings.HasPrefix(ce.Text, "invalid_topic: ") || !utf8.ValidString(ce.Text) || len(ce.Text) > maxCloseReason {
		t.Errorf("close %v: want 1008 with a valid UTF-8 reason of at most %d bytes", err, maxCloseReason)
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Errorf("topic directories: %v", dirs)
	}
}

// A tail whose topic is deleted gets the error as its last frame, then
// close 1008 with the same reason.
func TestTailOfDeletedTopic(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	tail := dialRaw(t, ts.addr, "/v1/topics/gone/tail?from=earliest", nil)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "gone", "value": "x"}); errCode(r) != "" {
		t.Fatal(r)
	}
	if m := tail.next(); m["value"] != "x" {
		t.Fatalf("tail frame %v", m)
	}
	if r := c.call(2, map[string]any{"op": "delete_topic", "topic": "gone"}); errCode(r) != "" {
		t.Fatal(r)
	}
	m := tail.next()
	if errCode(m) != wire.CodeTopicNotFound {
		t.Fatalf("last tail frame %v", m)
	}
	tail.ws.SetReadDeadline(time.Now().Add(hangGuard))
	_, _, err := tail.ws.ReadMessage()
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != websocket.ClosePolicyViolation || !strings.HasPrefix(ce.Text, wire.CodeTopicNotFound+": ") {
		t.Errorf("close %v, want 1008 topic_not_found", err)
	}
}

// tombstone_retention_ms and protect_cursors set at create_topic reach the
// engine's topic config and come back in replies; a negative tombstone
// retention is invalid_config and creates nothing.
func TestCreateTopicTombstoneRetentionAndProtectCursors(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "create_topic", "topic": "kv", "config": map[string]any{
		"cleanup": "compact", "tombstone_retention_ms": 3600000, "protect_cursors": true}})
	if errCode(r) != "" {
		t.Fatal(r)
	}
	for _, m := range []map[string]any{r, c.call(2, map[string]any{"op": "describe", "topic": "kv"})} {
		cfg := m["topic"].(map[string]any)["config"].(map[string]any)
		if cfg["tombstone_retention_ms"] != float64(3600000) || cfg["protect_cursors"] != true {
			t.Errorf("config %v: want tombstone_retention_ms 3600000 and protect_cursors true", cfg)
		}
	}
	info, err := ts.eng.Describe("kv")
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.TombstoneRetention != time.Hour || !info.Config.ProtectCursors {
		t.Fatalf("engine config %+v: want a 1h tombstone retention and protected cursors", info.Config)
	}
	r = c.call(3, map[string]any{"op": "create_topic", "topic": "neg", "config": map[string]any{"tombstone_retention_ms": -1}})
	if errCode(r) != wire.CodeInvalidConfig {
		t.Fatalf("negative tombstone retention: %v, want invalid_config", r)
	}
	if _, err := ts.eng.Describe("neg"); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("after a refused create: %v, want ErrTopicNotFound", err)
	}
}

// An unknown op's refusal lists every op there is (each one it names is
// known), and an unsubscribe without "sub" is invalid_request naming the
// field, not a subscription 0 that does not exist.
func TestUnknownOpListsOpsAndUnsubscribeNeedsSub(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "PRODUCE"})
	e, _ := r["error"].(map[string]any)
	msg, _ := e["message"].(string)
	_, list, ok := strings.Cut(msg, "(want ")
	if errCode(r) != wire.CodeUnknownOp || !ok {
		t.Fatalf("unknown op: %v", r)
	}
	list = strings.TrimSuffix(list, ")")
	ops := strings.Split(strings.ReplaceAll(list, " or ", ", "), ", ")
	for _, want := range []string{"produce", "subscribe", "unsubscribe", "commit", "topics", "describe", "create_topic", "delete_topic", "alter_topic", "consumers", "delete_consumer", "offset_for_time"} {
		if !slices.Contains(ops, want) {
			t.Errorf("unknown op's message %q does not name %s", msg, want)
		}
	}
	for i, op := range ops {
		if r := c.call(10+i, map[string]any{"op": op}); errCode(r) == wire.CodeUnknownOp {
			t.Errorf("op %q, named by the unknown op's message, is unknown: %v", op, r)
		}
	}
	r = c.call(50, map[string]any{"op": "unsubscribe"})
	e, _ = r["error"].(map[string]any)
	if msg, _ := e["message"].(string); errCode(r) != wire.CodeInvalidRequest || !strings.Contains(msg, `"sub"`) {
		t.Errorf("unsubscribe without sub: %v, want invalid_request naming \"sub\"", r)
	}
}

// A subscribe that is refused creates nothing, also when its topic does
// not exist yet: not past the connection's subscription limit, not for a
// "from" offset that a new topic cannot hold (on /v1/ws and on the tail
// endpoint).
func TestRefusedSubscribeCreatesNoTopic(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i := range maxSubscriptions {
		if r := c.call(i+1, map[string]any{"op": "subscribe", "topic": "t" + strconv.Itoa(i)}); errCode(r) != "" {
			t.Fatalf("subscribe %d: %v", i, r)
		}
	}
	if r := c.call(100, map[string]any{"op": "subscribe", "topic": "over"}); errCode(r) != wire.CodeRateLimited {
		t.Fatalf("subscribe past the limit: %v", r)
	}
	c2 := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c2.call(1, map[string]any{"op": "subscribe", "topic": "fresh", "from": map[string]any{"offset": 5}}); errCode(r) != wire.CodeOffsetOutOfRange {
		t.Fatalf("subscribe a new topic from offset 5: %v", r)
	}
	if r := c2.call(2, map[string]any{"op": "subscribe", "topic": "fresh2", "from": "7"}); errCode(r) != wire.CodeOffsetOutOfRange {
		t.Fatalf("subscribe a new topic from \"7\": %v", r)
	}
	tail := dialRaw(t, ts.addr, "/v1/topics/fresh3/tail?from=9", nil)
	if r := tail.next(); errCode(r) != wire.CodeOffsetOutOfRange {
		t.Fatalf("tail of a new topic from 9: %v", r)
	}
	for _, name := range topicDirs(t, ts.dir) {
		if !strings.HasPrefix(name, "t") {
			t.Errorf("refused subscribes created topic %s", name)
		}
	}
	// From offset 0 of a new topic is where it starts: created, accepted.
	if r := c2.call(3, map[string]any{"op": "subscribe", "topic": "fresh4", "from": map[string]any{"offset": 0}}); errCode(r) != "" {
		t.Fatalf("subscribe a new topic from offset 0: %v", r)
	}
}

// A header name is given once per record (as in a binary produce frame): a
// name in both "headers" and "headers_b64" is refused, not stored twice
// (a push would show one JSON object with the name twice, which JSON
// parsers read as one).
func TestHeaderNameInHeadersAndHeadersB64IsRefused(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "h", "value": 1}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	before := logState(t, ts.eng)
	for i, req := range []map[string]any{
		{"op": "produce", "topic": "h", "value": 1, "headers": map[string]any{"a": "x"}, "headers_b64": map[string]any{"a": "eQ=="}},
		{"op": "produce", "topic": "h", "records": []any{map[string]any{"value": 2}, map[string]any{"value": 1, "headers": map[string]any{"trace": "x", "b": "1"}, "headers_b64": map[string]any{"trace": "eQ=="}}}},
	} {
		r := c.call(10+i, req)
		e, _ := r["error"].(map[string]any)
		if msg, _ := e["message"].(string); errCode(r) != wire.CodeInvalidRequest || !strings.Contains(msg, "headers_b64") {
			t.Errorf("%v: %v, want invalid_request naming headers_b64", req, r)
		}
	}
	if after := logState(t, ts.eng); after != before {
		t.Errorf("refused produces changed the log:\nbefore %s\nafter  %s", before, after)
	}
	// Different names in the two are fine.
	if r := c.call(20, map[string]any{"op": "produce", "topic": "h", "value": 1, "headers": map[string]any{"a": "x"}, "headers_b64": map[string]any{"b": "/w=="}}); errCode(r) != "" {
		t.Fatalf("headers and headers_b64 with different names: %v", r)
	}
}

// A record's headers are stored in the order of their names, whatever
// order Go's maps iterate them in, so a push shows them the same way
// every time.
func TestHeadersAreStoredSortedByName(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	const n = 10
	c.sendText(`{"op":"subscribe","id":1,"topic":"h","from":"earliest"}`)
	hdrs := `"headers":{"h":"8","g":"7","a":"1","b":"2","c":"3","d":"4"},"headers_b64":{"e":"/w==","f":"Ng=="}`
	recs := make([]string, n)
	for i := range recs {
		recs[i] = `{"value":1,` + hdrs + `}`
	}
	c.sendText(`{"op":"produce","id":2,"topic":"h","records":[` + strings.Join(recs, ",") + `]}`)
	seen := 0
	for seen < n {
		_, b := c.message()
		if !strings.Contains(string(b), `"records"`) {
			continue
		}
		for _, rec := range strings.Split(string(b), `{"partition"`)[1:] {
			want := `"headers":{"a":"1","b":"2","c":"3","d":"4","f":"6","g":"7","h":"8"},"headers_b64":{"e":"/w=="}`
			if !strings.Contains(rec, want) {
				t.Fatalf("record %d: %s, want headers in name order: %s", seen, rec, want)
			}
			seen++
		}
	}
}

// The fields that only one op reads (offset_for_time's timestamp,
// delete_consumer's dry_run, alter_topic's alter) name a wrong type the
// way every other field does.
func TestOpFieldsOfTheWrongTypeAreNamed(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "one", "value": 1}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	for i, tc := range []struct{ raw, want string }{
		{`"op":"offset_for_time","topic":"one","partition":0,"timestamp":"now"`, `field "timestamp": got string, want an integer`},
		{`"op":"delete_consumer","consumer":"c","dry_run":"yes"`, `field "dry_run": got string, want true or false`},
		{`"op":"alter_topic","topic":"one","alter":{"retention_ms":"1h"}`, `field "alter.retention_ms": got string, want an integer`},
	} {
		id := 10 + i
		c.sendText(fmt.Sprintf(`{"id":%d,%s}`, id, tc.raw))
		r := c.waitFor(func(m map[string]any) bool { return m["id"] == float64(id) })
		e, _ := r["error"].(map[string]any)
		if msg, _ := e["message"].(string); errCode(r) != wire.CodeInvalidRequest || msg != tc.want {
			t.Errorf("%s: %v, want invalid_request %q", tc.raw, r, tc.want)
		}
	}
}

// A frame that is not a JSON object says what it is in the protocol's
// words, not in Go's (no "Go value of type wsapi.request").
func TestFrameNotAnObjectSaysWhatItIs(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for raw, want := range map[string]string{
		`[1]`:  "request is not a JSON object (got an array)",
		`"x"`:  "request is not a JSON object (got a string)",
		`42`:   "request is not a JSON object (got a number)",
		`true`: "request is not a JSON object (got a bool)",
	} {
		c.sendText(raw)
		r := c.waitFor(func(m map[string]any) bool { return m["error"] != nil })
		e, _ := r["error"].(map[string]any)
		if msg, _ := e["message"].(string); errCode(r) != wire.CodeInvalidJSON || msg != want {
			t.Errorf("%s: %v, want invalid_json %q", raw, r, want)
		}
	}
}

// A value stored as bytes that read as the JSON null (a binary frame
// "null", as a Kafka client may write) arrives as the string "null": a
// push never says "value":null, which reads as a tombstone, and the
// record can be produced again as it is.
func TestNullBytesValueIsNotPushedAsJSONNull(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	p := dialRaw(t, ts.addr, "/v1/topics/n/produce", nil)
	for _, v := range []string{"null", " null\n", "nul"} {
		if err := p.ws.WriteMessage(websocket.BinaryMessage, []byte(v)); err != nil {
			t.Fatal(err)
		}
		if r := p.next(); errCode(r) != "" {
			t.Fatalf("produce %q: %v", v, r)
		}
	}
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	c.sendText(`{"op":"subscribe","id":1,"topic":"n","from":"earliest","value_lens":true}`)
	var push map[string]any
	var raw []byte
	for push == nil {
		_, b := c.message()
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["records"] != nil {
			push, raw = m, b
		}
	}
	recs := push["records"].([]any)
	if len(recs) != 3 || strings.Contains(string(raw), `"value":null`) {
		t.Fatalf("push: %s", raw)
	}
	for i, want := range []string{"null", " null\n", "nul"} {
		r := recs[i].(map[string]any)
		if v, ok := r["value"].(string); !ok || v != want || r["tombstone"] != nil {
			t.Errorf("record %d: %v, want the string %q", i, r, want)
		}
	}
	if lens := fmt.Sprint(push["value_lens"]); lens != "[6 9 5]" {
		t.Errorf("value_lens %s, want [6 9 5]", lens)
	}
	// Produced again as received, it is the same value, not a tombstone.
	again, _ := json.Marshal(map[string]any{"op": "produce", "id": 2, "topic": "n", "value": recs[0].(map[string]any)["value"]})
	c.sendText(string(again))
	if r := c.waitFor(func(m map[string]any) bool { return m["id"] == float64(2) }); errCode(r) != "" {
		t.Fatalf("produce again: %v", r)
	}
	r := c.waitFor(func(m map[string]any) bool { return m["records"] != nil })
	if rec := r["records"].([]any)[0].(map[string]any); rec["value"] != "null" {
		t.Errorf("produced again: %v, want the string \"null\"", rec)
	}
}

// A produce with "records" and a record field of its own besides
// "partition" (a key, headers) is refused: the field would apply to no
// record, and silently dropping it would store other records than asked.
func TestRecordsWithInlineRecordFieldsAreRefused(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "r", "value": 1}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	before := logState(t, ts.eng)
	recs := []any{map[string]any{"value": 1}}
	for i, extra := range []map[string]any{
		{"key": "k"}, {"key_b64": "aw=="}, {"headers": map[string]any{"h": "v"}}, {"headers_b64": map[string]any{"h": "dg=="}}, {"value": 5}, {"tombstone": true},
	} {
		req := map[string]any{"op": "produce", "topic": "r", "records": recs}
		for k, v := range extra {
			req[k] = v
		}
		if r := c.call(10+i, req); errCode(r) != wire.CodeInvalidRequest {
			t.Errorf("records with %v: %v, want invalid_request", extra, r)
		}
	}
	if after := logState(t, ts.eng); after != before {
		t.Errorf("refused produces changed the log:\nbefore %s\nafter  %s", before, after)
	}
	// A request-level partition is what applies to every record.
	if r := c.call(20, map[string]any{"op": "produce", "topic": "r", "partition": 0, "records": recs}); errCode(r) != "" {
		t.Fatalf("records with a request-level partition: %v", r)
	}
}

// A commit for a consumer name the cursor store refuses (a '/', a NUL,
// too long) is invalid_request naming the name, not an internal error,
// and stores nothing.
func TestCommitWithABadConsumerNameIsInvalidRequest(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "t", "value": 1}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	for i, name := range []string{"a/b", "nul\x00x", strings.Repeat("c", 300)} {
		r := c.call(10+i, map[string]any{"op": "commit", "consumer": name, "topic": "t", "partition": 0, "offset": 1})
		if errCode(r) != wire.CodeInvalidRequest {
			t.Errorf("commit as %q: %v, want invalid_request", name, r)
		}
	}
	r := c.call(20, map[string]any{"op": "consumers", "topic": "t"})
	if cs, _ := r["topic"].(map[string]any)["consumers"].([]any); len(cs) != 0 {
		t.Errorf("cursors after refused commits: %v", cs)
	}
}

// A consumer name is one rule wherever it is given: a name the cursor
// store takes (a Kafka group id such as "my group") commits, and a
// subscription and the tail endpoint as that consumer resume from its
// cursor; a name it refuses is refused by all three.
func TestConsumerNameOneRule(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i := range 5 {
		if r := c.call(1+i, map[string]any{"op": "produce", "topic": "t", "value": i}); errCode(r) != "" {
			t.Fatalf("produce: %v", r)
		}
	}
	const name = "my group"
	if r := c.call(10, map[string]any{"op": "commit", "consumer": name, "topic": "t", "partition": 0, "offset": 3}); errCode(r) != "" {
		t.Fatalf("commit as %q: %v", name, r)
	}
	if r := c.call(11, map[string]any{"op": "subscribe", "topic": "t", "from": "earliest", "consumer": name}); errCode(r) != "" {
		t.Fatalf("subscribe as %q: %v", name, r)
	}
	push := c.waitFor(func(m map[string]any) bool { return m["sub"] != nil && m["records"] != nil })
	if rec := push["records"].([]any)[0].(map[string]any); rec["offset"] != float64(3) {
		t.Errorf("subscription as %q starts at %v, want its cursor 3", name, rec["offset"])
	}
	tail := dialRaw(t, ts.addr, "/v1/topics/t/tail?from=earliest&consumer="+url.QueryEscape(name), nil)
	if m := tail.next(); m["offset"] != float64(3) {
		t.Errorf("tail as %q starts at %v, want its cursor 3", name, m["offset"])
	}
	for i, bad := range []string{"a/b", "nul\x00x"} {
		for j, op := range []map[string]any{
			{"op": "subscribe", "topic": "t", "consumer": bad},
			{"op": "commit", "topic": "t", "partition": 0, "offset": 1, "consumer": bad},
			{"op": "delete_consumer", "topic": "t", "consumer": bad},
		} {
			r := c.call(20+10*i+j, op)
			msg, _ := r["error"].(map[string]any)["message"].(string)
			if errCode(r) != wire.CodeInvalidRequest || !strings.HasPrefix(msg, "invalid consumer name: ") {
				t.Errorf("%s as %q: %v, want invalid_request saying \"invalid consumer name: ...\" once", op["op"], bad, r)
			}
		}
	}
	tail = dialRaw(t, ts.addr, "/v1/topics/t/tail?consumer=a%2Fb", nil)
	if m := tail.next(); errCode(m) != wire.CodeInvalidRequest || !strings.HasPrefix(m["error"].(map[string]any)["message"].(string), "invalid consumer name: ") {
		t.Errorf("tail as \"a/b\": %v, want invalid_request saying \"invalid consumer name: ...\" once", m)
	}
}
