package wsapi

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// logState is what a rejected request must leave unchanged.
func logState(t *testing.T, e testEngine) string {
	t.Helper()
	ts, err := e.Topics()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ti := range ts {
		fmt.Fprintf(&b, "%s:", ti.Name)
		for _, p := range ti.Partitions {
			fmt.Fprintf(&b, " p%d hwm=%d leo=%d", p.Partition, p.HWM, p.LEO)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestEveryErrorCode(t *testing.T) {
	opts := DefaultOptions()
	opts.ReadLimit = 4 << 20 // a record over MaxRecordBytes fits in a message
	ts := startServer(t, opts)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "create_topic", "topic": "one", "config": map[string]any{"partitions": 1}}); errCode(r) != "" {
		t.Fatalf("create_topic: %v", r)
	}
	if r := c.call(2, map[string]any{"op": "produce", "topic": "one", "records": []any{map[string]any{"value": 1}, map[string]any{"value": 2}}}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	before := logState(t, ts.eng)

	cases := []struct {
		name string
		req  map[string]any // nil: raw text below
		raw  string
		code string
	}{
		{name: "not JSON", raw: "hello", code: wire.CodeInvalidJSON},
		{name: "JSON array", raw: "[1,2]", code: wire.CodeInvalidJSON},
		{name: "no op", req: map[string]any{"topic": "one"}, code: wire.CodeInvalidRequest},
		{name: "produce without value", req: map[string]any{"op": "produce", "topic": "one"}, code: wire.CodeInvalidRequest},
		{name: "bad base64", req: map[string]any{"op": "produce", "topic": "one", "value_b64": "!!"}, code: wire.CodeInvalidRequest},
		{name: "one bad record in a batch", req: map[string]any{"op": "produce", "topic": "one", "records": []any{map[string]any{"value": 1}, map[string]any{"key": "k"}}}, code: wire.CodeInvalidRequest},
		{name: "too many records", req: map[string]any{"op": "produce", "topic": "one", "records": manyRecords(maxRequestRecords + 1)}, code: wire.CodeInvalidRequest},
		{name: "bad from", req: map[string]any{"op": "subscribe", "topic": "one", "from": "yesterday"}, code: wire.CodeInvalidRequest},
		{name: "commit without consumer", req: map[string]any{"op": "commit", "topic": "one", "partition": 0, "offset": 1}, code: wire.CodeInvalidRequest},
		{name: "unknown op", req: map[string]any{"op": "explode"}, code: wire.CodeUnknownOp},
		{name: "invalid topic produce", req: map[string]any{"op": "produce", "topic": "a/b", "value": 1}, code: wire.CodeInvalidTopic},
		{name: "invalid topic create", req: map[string]any{"op": "create_topic", "topic": ".."}, code: wire.CodeInvalidTopic},
		{name: "subscribe negative partition", req: map[string]any{"op": "subscribe", "topic": "nope", "partition": -1}, code: wire.CodePartitionOutOfRange},
		{name: "subscribe to a new topic's partition 3", req: map[string]any{"op": "subscribe", "topic": "nope", "partition": 3}, code: wire.CodePartitionOutOfRange},
		{name: "describe unknown topic", req: map[string]any{"op": "describe", "topic": "nope"}, code: wire.CodeTopicNotFound},
		{name: "delete unknown topic", req: map[string]any{"op": "delete_topic", "topic": "nope"}, code: wire.CodeTopicNotFound},
		{name: "create existing", req: map[string]any{"op": "create_topic", "topic": "one"}, code: wire.CodeTopicExists},
		{name: "bad codec", req: map[string]any{"op": "create_topic", "topic": "two", "config": map[string]any{"codec": "lz4"}}, code: wire.CodeInvalidConfig},
		{name: "bad cleanup", req: map[string]any{"op": "create_topic", "topic": "two", "config": map[string]any{"cleanup": "shred"}}, code: wire.CodeInvalidConfig},
		{name: "produce partition 5", req: map[string]any{"op": "produce", "topic": "one", "partition": 5, "value": 1}, code: wire.CodePartitionOutOfRange},
		{name: "produce partition -3", req: map[string]any{"op": "produce", "topic": "one", "partition": -3, "value": 1}, code: wire.CodePartitionOutOfRange},
		{name: "mixed partitions, one bad", req: map[string]any{"op": "produce", "topic": "one", "records": []any{map[string]any{"value": 1, "partition": 0}, map[string]any{"value": 2, "partition": 1}}}, code: wire.CodePartitionOutOfRange},
		{name: "new topic partition 3", req: map[string]any{"op": "produce", "topic": "fresh", "partition": 3, "value": 1}, code: wire.CodePartitionOutOfRange},
		{name: "subscribe partition 9", req: map[string]any{"op": "subscribe", "topic": "one", "partition": 9}, code: wire.CodePartitionOutOfRange},
		{name: "subscribe past the end", req: map[string]any{"op": "subscribe", "topic": "one", "from": map[string]any{"offset": 999}}, code: wire.CodeOffsetOutOfRange},
		{name: "subscribe negative offset", req: map[string]any{"op": "subscribe", "topic": "one", "from": map[string]any{"offset": -1}}, code: wire.CodeOffsetOutOfRange},
		{name: "commit past the end", req: map[string]any{"op": "commit", "consumer": "c", "topic": "one", "partition": 0, "offset": 999}, code: wire.CodeOffsetOutOfRange},
		{name: "record too large", req: map[string]any{"op": "produce", "topic": "one", "value": strings.Repeat("x", 2<<20)}, code: wire.CodeRecordTooLarge},
		{name: "record too large in a batch", req: map[string]any{"op": "produce", "topic": "one", "records": []any{map[string]any{"value": 1}, map[string]any{"value": strings.Repeat("x", 2<<20)}}}, code: wire.CodeRecordTooLarge},
		{name: "unsubscribe unknown", req: map[string]any{"op": "unsubscribe", "sub": 77}, code: wire.CodeUnknownSubscription},
		{name: "commit unknown sub", req: map[string]any{"op": "commit", "sub": 77, "partition": 0, "offset": 0}, code: wire.CodeUnknownSubscription},
	}
	for i, tc := range cases {
		var r map[string]any
		if tc.req == nil {
			c.sendText(tc.raw)
			r = c.waitFor(func(m map[string]any) bool { return m["id"] == nil && m["error"] != nil })
		} else {
			r = c.call(100+i, tc.req)
		}
		if got := errCode(r); got != tc.code {
			t.Errorf("%s: code %q, want %q (%v)", tc.name, got, tc.code, r)
		}
		if msg, _ := r["error"].(map[string]any)["message"].(string); msg == "" {
			t.Errorf("%s: error without a message: %v", tc.name, r)
		}
	}
	if after := logState(t, ts.eng); after != before {
		t.Errorf("rejected requests changed the log:\nbefore %s\nafter  %s", before, after)
	}
	if dirs := topicDirs(t, ts.dir); strings.Join(dirs, ",") != "one" {
		t.Errorf("topic directories after rejected requests: %v", dirs)
	}

	// The connection is still usable after all of that.
	if r := c.call(999, map[string]any{"op": "produce", "topic": "one", "value": 3}); errCode(r) != "" || num(t, r, "offset") != 2 {
		t.Fatalf("produce after errors: %v", r)
	}
}

func TestTopicNotFoundWithoutAutoCreate(t *testing.T) {
	opts := DefaultOptions()
	opts.AutoCreate = false
	ts := startServer(t, opts)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "ghost", "value": 1}); errCode(r) != wire.CodeTopicNotFound {
		t.Fatalf("produce to a missing topic with auto-create off: %v", r)
	}
	if r := c.call(2, map[string]any{"op": "subscribe", "topic": "ghost", "from": "earliest"}); errCode(r) != wire.CodeTopicNotFound {
		t.Fatalf("subscribe to a missing topic with auto-create off: %v", r)
	}
	tail := dialRaw(t, ts.addr, "/v1/topics/ghost/tail", nil)
	if m := tail.next(); errCode(m) != wire.CodeTopicNotFound {
		t.Fatalf("tail of a missing topic with auto-create off: %v", m)
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Fatalf("topic directories: %v", dirs)
	}
	// With auto-create on (the default), the same produce creates it.
	ts2 := startServer(t, DefaultOptions())
	c2 := dialRaw(t, ts2.addr, "/v1/ws", nil)
	if r := c2.call(1, map[string]any{"op": "produce", "topic": "ghost", "value": 1}); errCode(r) != "" {
		t.Fatalf("produce with auto-create: %v", r)
	}
	ti, err := ts2.eng.Describe("ghost")
	if err != nil || len(ti.Partitions) != 1 || ti.Config.SyncMode != engine.SyncEveryWrite {
		t.Fatalf("auto-created topic: %+v %v", ti, err)
	}
}

func TestRateLimited(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxInflight = 1
	ts := startServer(t, opts)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	const n = 200
	for i := range n {
		c.send(map[string]any{"op": "produce", "id": i, "topic": "rl", "value": i})
	}
	acked, limited := 0, 0
	for range n {
		m := c.next()
		switch errCode(m) {
		case "":
			acked++
		case wire.CodeRateLimited:
			limited++
		default:
			t.Fatalf("unexpected reply %v", m)
		}
	}
	if limited == 0 {
		t.Fatalf("%d pipelined produces with MaxInflight 1: none was rate_limited", n)
	}
	ti, err := ts.eng.Describe("rl")
	if err != nil {
		t.Fatal(err)
	}
	if got := ti.Partitions[0].LEO; got != int64(acked) {
		t.Fatalf("log holds %d records, %d were acked (%d rate_limited)", got, acked, limited)
	}
}

func TestInternalErrorWhenEngineClosed(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "produce", "topic": "x", "value": 1}); errCode(r) != "" {
		t.Fatal(r)
	}
	if err := ts.eng.Close(); err != nil {
		t.Fatal(err)
	}
	r := c.call(2, map[string]any{"op": "produce", "topic": "x", "value": 2})
	if errCode(r) != wire.CodeInternal {
		t.Fatalf("produce on a closed engine: %v", r)
	}
	r = c.call(3, map[string]any{"op": "topics"})
	if errCode(r) != wire.CodeInternal {
		t.Fatalf("topics on a closed engine: %v", r)
	}
}

func TestToErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("p3: %w", engine.ErrPartitionOutOfRange), wire.CodePartitionOutOfRange},
		{fmt.Errorf("x: %w", engine.ErrRecordTooLarge), wire.CodeRecordTooLarge},
		{fmt.Errorf("c: %w", engine.ErrConsumerNotFound), wire.CodeConsumerNotFound},
		{fmt.Errorf("c: %w", engine.ErrConsumerActive), wire.CodeConsumerActive},
		{engine.ErrClosed, wire.CodeInternal},
		{errors.New("disk on fire"), wire.CodeInternal},
		{wire.Errorf(wire.CodeRateLimited, "slow down"), wire.CodeRateLimited},
	} {
		if got := toError(tc.err); got.Code != tc.code || got.Message == "" {
			t.Errorf("toError(%v) = %+v, want code %s", tc.err, got, tc.code)
		}
	}
}

func TestOversizedFrameClosesWith1009(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	for _, path := range []string{"/v1/ws", "/v1/topics/big/produce"} {
		c := dialRaw(t, ts.addr, path, nil)
		// The write may fail half-way: the server stops reading at the
		// frame header. The close frame must arrive anyway.
		c.ws.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 2<<20)))
		_, err := c.read()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
			t.Fatalf("%s: after a 2 MiB frame got %v, want close 1009", path, err)
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Fatalf("oversized frames created %v", dirs)
	}
}

func TestHostileTopicNamesCreateNothing(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	names := []string{"..", ".", "a/b", "%2e%2e", "../../etc", "a\x00b", strings.Repeat("x", 250), "", "a b", `a\b`, "tópico"}
	id := 0
	for _, name := range names {
		for _, req := range []map[string]any{
			{"op": "produce", "topic": name, "value": 1},
			{"op": "create_topic", "topic": name},
			{"op": "subscribe", "topic": name, "from": "earliest"},
			{"op": "describe", "topic": name},
			{"op": "delete_topic", "topic": name},
			{"op": "commit", "consumer": "c", "topic": name, "partition": 0, "offset": 0},
		} {
			id++
			r := c.call(id, req)
			if got := errCode(r); got != wire.CodeInvalidTopic {
				t.Errorf("%s %q: code %q, want invalid_topic (%v)", req["op"], name, got, r)
			}
		}
		// The zero-ceremony endpoints, with the name escaped into the path
		// and raw where the URL allows it.
		for _, p := range []string{url.PathEscape(name), name} {
			for _, ep := range []string{"produce", "tail"} {
				probeHostilePath(t, ts.addr, "/v1/topics/"+p+"/"+ep)
			}
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Fatalf("hostile names created topic directories %v", dirs)
	}
	if tl, err := ts.eng.Topics(); err != nil || len(tl) != 0 {
		t.Fatalf("hostile names created topics %v (%v)", tl, err)
	}
	// Nothing appeared outside the data directory's known entries either.
	ents, _ := os.ReadDir(ts.dir)
	for _, e := range ents {
		switch e.Name() {
		case "meta.db", "LOCK", "topics":
		default:
			t.Errorf("unexpected entry %s in the data directory", filepath.Join(ts.dir, e.Name()))
		}
	}
	parent, _ := os.ReadDir(filepath.Dir(ts.dir))
	if len(parent) != 1 {
		t.Errorf("entries next to the data directory: %v", parent)
	}
}

// probeHostilePath dials a zero-ceremony endpoint with a hostile topic in
// its path. The handshake may be refused (the URL is not even routable) or
// the connection closed with an invalid_topic error; a record frame sent in
// between must not be stored.
func probeHostilePath(t *testing.T, addr, path string) {
	t.Helper()
	if strings.ContainsAny(path, "\x00 ") {
		path = strings.NewReplacer("\x00", "%00", " ", "%20").Replace(path)
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+addr+path, nil)
	if err != nil {
		return // refused at the HTTP level
	}
	defer ws.Close()
	ws.WriteMessage(websocket.TextMessage, []byte("payload"))
	sawError := false
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || !sawError {
				t.Errorf("%s: ended with %v (error message seen: %v), want an invalid_topic message and close 1008", path, err, sawError)
			}
			return
		}
		if strings.Contains(string(b), `"invalid_topic"`) {
			sawError = true
		} else {
			t.Errorf("%s: unexpected message %s", path, b)
		}
	}
}

func manyRecords(n int) []any {
	recs := make([]any, n)
	for i := range recs {
		recs[i] = map[string]any{"value": 1}
	}
	return recs
}

// A produce whose "records" is an empty array is told so, not asked for
// a "records" array it sent; it stores nothing and creates no topic.
func TestProduceOfEmptyRecordsSaysSo(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "produce", "topic": "empty", "records": []any{}})
	msg, _ := r["error"].(map[string]any)["message"].(string)
	if errCode(r) != wire.CodeInvalidRequest || msg != `"records" is empty: a produce takes 1 to 10000 records` {
		t.Fatalf("produce of records []: %v", r)
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Fatalf("an empty produce made %v", dirs)
	}
}

// Base64 that is not the standard padded form says what it is instead of
// "illegal base64 data at input byte 0" (the padding or the alphabet is
// what is wrong, not byte 0), naming the field; nothing is stored.
func TestBase64RefusalsSayWhatIsWrong(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i, tc := range []struct {
		rec  map[string]any
		want string
	}{
		{map[string]any{"value_b64": "aGk"}, `value_b64: base64 without its "=" padding: send "aGk="`},
		{map[string]any{"key_b64": "_w==", "value": 1}, `key_b64: URL-safe base64 ("-" and "_"): send standard base64 ("+" and "/"), padded`},
		{map[string]any{"value": 1, "headers_b64": map[string]any{"h": "a-b"}}, `headers_b64["h"]: URL-safe base64 ("-" and "_"): send standard base64 ("+" and "/"), padded`},
		{map[string]any{"value_b64": "aGk=x"}, `value_b64: illegal base64 data at input byte 4 (want standard base64, padded)`},
	} {
		req := map[string]any{"op": "produce", "topic": "b64"}
		for k, v := range tc.rec {
			req[k] = v
		}
		r := c.call(i+1, req)
		msg, _ := r["error"].(map[string]any)["message"].(string)
		if errCode(r) != wire.CodeInvalidRequest || msg != tc.want {
			t.Errorf("%v: %v, want invalid_request %q", tc.rec, r, tc.want)
		}
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Errorf("refused produces made %v", dirs)
	}
}
