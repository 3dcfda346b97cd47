package wsapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// received is what one subscription delivered up to a push whose next is
// end: its records, the records its pushes said were skipped, and the
// last next.
type received struct {
	recs    []wsclient.Record
	skipped int64
	next    int64
	pushes  int
}

// receive subscribes to topic from earliest on c, binary or JSON pushes,
// and reads until a push's next reaches end.
func receive(t *testing.T, c *wsclient.Client, topic string, binary bool, end int64) received {
	t.Helper()
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: topic, Partition: -1, From: "earliest", Binary: binary})
	if err != nil {
		t.Fatalf("subscribe (binary %v): %v", binary, err)
	}
	var got received
	for got.next < end {
		select {
		case p, ok := <-sub.C():
			if !ok {
				t.Fatalf("subscription (binary %v) ended: %v", binary, sub.Err())
			}
			if p.Err != nil {
				t.Fatalf("push (binary %v): %v", binary, p.Err)
			}
			got.recs = append(got.recs, p.Records...)
			got.skipped += p.Skipped
			got.next = p.Next
			got.pushes++
		case <-ctx.Done():
			t.Fatalf("subscription (binary %v): %d records after %d pushes, next %d, want %d", binary, len(got.recs), got.pushes, got.next, end)
		}
	}
	if err := sub.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	return got
}

// comparable drops what only JSON pushes carry (Raw) and puts headers in
// one order (JSON objects have none).
func comparable(recs []wsclient.Record) []wsclient.Record {
	out := make([]wsclient.Record, len(recs))
	for i, r := range recs {
		r.Raw = nil
		r.Headers = slices.Clone(r.Headers)
		slices.SortFunc(r.Headers, func(a, b engine.Header) int {
			return cmp.Or(strings.Compare(a.Key, b.Key), bytes.Compare(a.Value, b.Value))
		})
		out[i] = r
	}
	return out
}

// TestBinaryAndJSONPushesCarryTheSameRecords: records of every kind
// (produced as JSON text and JSON values, base64 bytes, binary frames;
// keys and none, tombstones, empty values, headers with text and byte
// values), some of them then made unreadable by a flipped byte in a
// batch on disk, reach a JSON and a binary subscription identically:
// offsets (with the gap of the corrupt batch), timestamps, keys, values,
// headers, and the skipped count of the degraded read.
func TestBinaryAndJSONPushesCarryTheSameRecords(t *testing.T) {
	srv := newRestartable(t)
	ctx := testCtx(t)
	c, err := wsclient.Dial(ctx, srv.addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, "mix", wire.TopicConfig{Codec: "none", SyncMode: "every-write"}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	if _, err := c.Produce(ctx, "mix", 0, []wire.RecordIn{
		{Key: str("user-1"), Value: json.RawMessage(`{"total":12.5,"s":"é \" \\"}`)},
		{Value: json.RawMessage(`"plain text"`), Headers: map[string]string{"a": "1", "b": ""}},
		{Key: str(""), Value: json.RawMessage(`""`)},
		{Key: str("gone"), Tombstone: true},
		{KeyB64: str("/wAB"), ValueB64: str("/wAB"), HeadersB64: map[string]string{"bin": "/w=="}},
		{Value: json.RawMessage(`"{\"a\":1}"`)}, // text that looks like JSON
		{Value: json.RawMessage(`42`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProduceBytes(ctx, "mix", 0, []engine.Record{
		{Key: []byte{0xff}, Value: []byte{0, 1, 2}},
		{Value: []byte{}},
		{Key: []byte("k"), Value: nil},
		{Value: []byte(`[1,2]`), Headers: []engine.Header{{Key: "h", Value: []byte{0xfe, 0xff}}, {Key: "t", Value: []byte("text")}}},
	}); err != nil {
		t.Fatal(err)
	}
	for b := range 3 { // three batches of ten; the middle one is damaged below
		recs := make([]wire.RecordIn, 10)
		for i := range recs {
			recs[i] = wire.RecordIn{Key: str(fmt.Sprintf("k%d", i%3)), Value: json.RawMessage(fmt.Sprintf(`{"b":%d,"i":%d}`, b, i))}
		}
		if _, err := c.Produce(ctx, "mix", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	srv.stop()

	part := crashlab.PartitionDir(srv.dir, "mix", 0)
	segs, err := crashlab.Layout(part)
	if err != nil || len(segs) != 1 || len(segs[0].Batches) != 5 {
		t.Fatalf("layout: %v, %+v", err, segs)
	}
	bad := segs[0].Batches[3]
	damage.FlipByte(t, filepath.Join(part, fmt.Sprintf("%020d.log", segs[0].Base)), bad.Pos+bad.Size-5)
	if err := os.Remove(filepath.Join(part, recovery.SnapshotFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}

	srv.start(nil)
	info, err := srv.eng.Describe("mix")
	if err != nil || !info.Partitions[0].Degraded {
		t.Fatalf("after the damage: %+v %v, want a degraded partition", info, err)
	}
	end := info.Partitions[0].HWM
	jc, bc := dialClient(t, srv.addr), dialClient(t, srv.addr)
	js := receive(t, jc, "mix", false, end)
	bs := receive(t, bc, "mix", true, end)
	if js.skipped != 10 || bs.skipped != js.skipped || bs.next != js.next {
		t.Fatalf("skipped %d (binary %d), want 10; next %d (binary %d)", js.skipped, bs.skipped, js.next, bs.next)
	}
	if len(js.recs) != 31 || js.recs[len(js.recs)-11].Offset != 20 || js.recs[len(js.recs)-10].Offset != 31 {
		t.Fatalf("JSON subscription: %d records, want 31 with a gap over [21, 31)", len(js.recs))
	}
	jr, br := comparable(js.recs), comparable(bs.recs)
	if !reflect.DeepEqual(jr, br) {
		for i := range min(len(jr), len(br)) {
			if !reflect.DeepEqual(jr[i], br[i]) {
				t.Fatalf("record %d:\n JSON   %+v\n binary %+v", i, jr[i], br[i])
			}
		}
		t.Fatalf("%d records by JSON, %d by binary", len(jr), len(br))
	}
	for i, r := range bs.recs {
		if r.Raw != nil {
			t.Fatalf("binary record %d has Raw %q", i, r.Raw)
		}
	}
	// What the records are, to be sure both did not lose the same thing.
	if string(br[0].Value) != `{"total":12.5,"s":"é \" \\"}` || string(br[1].Value) != "plain text" ||
		br[2].Key == nil || len(br[2].Key) != 0 || br[2].Value == nil || len(br[2].Value) != 0 || br[3].Value != nil ||
		!bytes.Equal(br[4].Key, []byte{0xff, 0, 1}) || string(br[5].Value) != `{"a":1}` ||
		!bytes.Equal(br[7].Value, []byte{0, 1, 2}) || br[8].Key != nil || br[9].Value != nil ||
		!reflect.DeepEqual(br[10].Headers, []engine.Header{{Key: "h", Value: []byte{0xfe, 0xff}}, {Key: "t", Value: []byte("text")}}) {
		t.Fatalf("records pushed: %+v", br[:11])
	}
	for i := 1; i < len(br); i++ {
		if br[i].Timestamp < br[i-1].Timestamp || br[i].Timestamp == 0 {
			t.Fatalf("record %d: timestamp %d after %d", i, br[i].Timestamp, br[i-1].Timestamp)
		}
	}
}

// TestBinaryPushesArriveAsBinaryMessages reads a binary subscription with
// a plain websocket client: the reply is JSON text, each push a binary
// message that the wire decoder reads back to the records produced.
func TestBinaryPushesArriveAsBinaryMessages(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	produceAll(t, c, 1, "raw", []map[string]any{{"key": "a", "value": 1}, {"value": "two"}})
	c.sendText(`{"op":"subscribe","id":2,"topic":"raw","from":"earliest","format":"binary"}`)
	typ, msg, err := c.ws.ReadMessage()
	if err != nil || typ != websocket.TextMessage || !strings.HasPrefix(string(msg), `{"id":2,"sub":1,`) {
		t.Fatalf("subscribe reply: %d %q %v", typ, msg, err)
	}
	typ, msg, err = c.ws.ReadMessage()
	if err != nil || typ != websocket.BinaryMessage {
		t.Fatalf("push: %d %q %v, want a binary message", typ, msg, err)
	}
	h, err := wire.ParseBinaryPush(msg)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := wire.DecodePushRecords(&h)
	if err != nil {
		t.Fatal(err)
	}
	if h.Sub != 1 || h.Partition != 0 || h.Offset != 0 || h.Next != 2 || len(recs) != 2 ||
		string(recs[0].Key) != "a" || string(recs[0].Value) != "1" || recs[1].Key != nil || string(recs[1].Value) != "two" || recs[1].Offset != 1 {
		t.Fatalf("push %+v: %+v", h, recs)
	}
	if !bytes.HasPrefix(msg, []byte(`{"sub":1,"partition":0,"offset":0,"timestamp":`)) || !bytes.Contains(msg, []byte(`,"next":2,"count":2}`+"\n")) {
		t.Fatalf("header line %q", msg[:bytes.IndexByte(msg, '\n')+1])
	}
}

// TestSubscribeRefusesUnknownFormat: a format other than json or binary is
// invalid_request naming it, so is value_lens with binary pushes or of
// another type than a boolean, and the topic the subscribe would have
// created is not created.
func TestSubscribeRefusesUnknownFormat(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	for i, f := range []any{"xml", "Binary", 1, true} {
		r := c.call(i+1, map[string]any{"op": "subscribe", "topic": "nope", "from": "earliest", "format": f})
		msg, _ := r["error"].(map[string]any)["message"].(string)
		if errCode(r) != wire.CodeInvalidRequest || !strings.Contains(msg, "format") {
			t.Fatalf("format %v: %v, want invalid_request naming the format", f, r)
		}
	}
	for i, req := range []map[string]any{
		{"format": "binary", "value_lens": true},
		{"value_lens": "yes"},
	} {
		req["op"], req["topic"], req["from"] = "subscribe", "nope", "earliest"
		r := c.call(5+i, req)
		msg, _ := r["error"].(map[string]any)["message"].(string)
		if errCode(r) != wire.CodeInvalidRequest || !strings.Contains(msg, "value_lens") {
			t.Fatalf("%v: %v, want invalid_request naming value_lens", req, r)
		}
	}
	if r := c.call(9, map[string]any{"op": "subscribe", "topic": "yes", "format": "json"}); errCode(r) != "" {
		t.Fatalf(`format "json": %v`, r)
	}
	if dirs := topicDirs(t, ts.dir); !reflect.DeepEqual(dirs, []string{"yes"}) {
		t.Fatalf("topics on disk: %v, want only yes", dirs)
	}
}

// TestBinaryPushesEncodeOnce: binary subscribers of the same records
// share one encoding of each record (the pushCache), as JSON ones do, and
// a JSON subscriber alongside them gets its own JSON encoding.
func TestBinaryPushesEncodeOnce(t *testing.T) {
	ts := startServer(t, Options{})
	p := dialRaw(t, ts.addr, "/v1/ws", nil)
	const n = 300
	if r := p.call(3, map[string]any{"op": "create_topic", "topic": "fan"}); errCode(r) != "" {
		t.Fatalf("create: %v", r)
	}
	produceAll(t, p, 1, "fan", fanRecords("bin", n))
	if r := p.call(2, map[string]any{"op": "subscribe", "topic": "fan", "from": "latest"}); errCode(r) != "" {
		t.Fatalf("subscribe: %v", r)
	}
	before := ts.pushes.encoded.Load()
	first := receive(t, dialClient(t, ts.addr), "fan", true, n)
	if enc := ts.pushes.encoded.Load() - before; enc != n || len(first.recs) != n {
		t.Fatalf("first subscriber: %d records, %d encoded, want %d", len(first.recs), enc, n)
	}
	for i := range 7 {
		got := receive(t, dialClient(t, ts.addr), "fan", true, n)
		if !reflect.DeepEqual(got.recs, first.recs) {
			t.Fatalf("subscriber %d got other records", i+2)
		}
	}
	if enc := ts.pushes.encoded.Load() - before; enc != n {
		t.Fatalf("8 binary subscribers: %d records encoded, want %d (once each)", enc, n)
	}
	js := receive(t, dialClient(t, ts.addr), "fan", false, n)
	if enc := ts.pushes.encoded.Load() - before; enc != 2*n {
		t.Fatalf("and a JSON subscriber: %d records encoded, want %d", enc, 2*n)
	}
	if !reflect.DeepEqual(comparable(js.recs), comparable(first.recs)) {
		t.Fatal("the JSON subscriber got other records than the binary ones")
	}
}

// TestBinaryAndJSONSubscriptionsShareAConnection: one client holds a JSON
// and a binary subscription of the same topic; both get the records, and
// when the topic is deleted both end with the error push (JSON text for
// both formats), through the same Subscription API.
func TestBinaryAndJSONSubscriptionsShareAConnection(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	ctx := testCtx(t)
	c := dialClient(t, ts.addr)
	if _, err := c.ProduceBytes(ctx, "both", 0, []engine.Record{{Key: []byte("a"), Value: []byte("1")}, {Value: []byte{0xff}}}); err != nil {
		t.Fatal(err)
	}
	var subs []*wsclient.Subscription
	for _, binary := range []bool{false, true} {
		s, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "both", Partition: -1, From: "earliest", Binary: binary})
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	var got [2][]wsclient.Record
	for i, s := range subs {
		for len(got[i]) < 2 {
			select {
			case p := <-s.C():
				if p.Err != nil {
					t.Fatalf("subscription %d: %v", i, p.Err)
				}
				got[i] = append(got[i], p.Records...)
			case <-ctx.Done():
				t.Fatalf("subscription %d: %d records", i, len(got[i]))
			}
		}
	}
	if !reflect.DeepEqual(comparable(got[0]), comparable(got[1])) || string(got[1][1].Value) != "\xff" {
		t.Fatalf("JSON %+v\nbinary %+v", got[0], got[1])
	}
	if err := c.DeleteTopic(ctx, "both"); err != nil {
		t.Fatal(err)
	}
	for i, s := range subs {
		select {
		case p := <-s.C():
			if p.Err == nil || p.Err.Code != wire.CodeTopicNotFound || len(p.Records) != 0 {
				t.Fatalf("subscription %d after delete_topic: %+v", i, p)
			}
		case <-ctx.Done():
			t.Fatalf("subscription %d: no error push after delete_topic", i)
		}
	}
}
