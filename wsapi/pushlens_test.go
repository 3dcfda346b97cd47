package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// TestJSONPushValueLens subscribes with a plain websocket client, asking
// for value_lens, to a topic holding values of every kind (checked JSON,
// text, bytes that are JSON, bytes that are not, UTF-8 text with escapes, a
// tombstone, headers) and parses the pushes with encoding/json: value_lens
// has one entry per record, the length of the record's "value" JSON as
// sent, 0 without one; a subscription that did not ask gets the same
// records in pushes without the field; and the Go client reads exactly the
// records encoding/json reads (wsclient.DecodeRecord of each record's
// JSON).
func TestJSONPushValueLens(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	ctx := testCtx(t)
	c := dialClient(t, ts.addr)
	if _, err := c.CreateTopic(ctx, "lens", wire.TopicConfig{Codec: "none", SyncMode: "interval"}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	if _, err := c.Produce(ctx, "lens", 0, []wire.RecordIn{
		{Key: str("user-1"), Value: json.RawMessage(`{"total":12.5,"s":"é \" \\ }"}`)},
		{Value: json.RawMessage(`"plain text"`), Headers: map[string]string{"a": "1"}},
		{Value: json.RawMessage(`"tab\tand \"quotes\""`)},
		{Key: str("gone"), Tombstone: true},
		{ValueB64: str("/wAB")},
		{Value: json.RawMessage(`[1,{"b":[]}]`), Headers: map[string]string{"h": "v"}},
		{Value: json.RawMessage(`42`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProduceBytes(ctx, "lens", 0, []engine.Record{
		{Value: []byte(`{"bytes":"that are JSON"}`)},
		{Value: []byte(`{"not":json`)},
		{Value: []byte{}},
		{Value: []byte(` [1] `)},
	}); err != nil {
		t.Fatal(err)
	}
	const n = 11

	raw := dialRaw(t, ts.addr, "/v1/ws", nil)
	raw.send(map[string]any{"op": "subscribe", "id": 1, "topic": "lens", "from": "earliest", "value_lens": true})
	var records []json.RawMessage
	for len(records) < n {
		typ, msg := raw.message()
		if typ != websocket.TextMessage {
			t.Fatalf("message %q of type %d", msg, typ)
		}
		records = append(records, checkValueLens(t, msg)...)
	}

	// Not asked for: the push is sub, partition, next and records only.
	plain := dialRaw(t, ts.addr, "/v1/ws", nil)
	plain.send(map[string]any{"op": "subscribe", "id": 1, "topic": "lens", "from": "earliest"})
	var plainRecords []json.RawMessage
	for len(plainRecords) < n {
		_, msg := plain.message()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("message %q: %v", msg, err)
		}
		if _, ok := m["records"]; !ok {
			continue // the reply
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"next", "partition", "records", "sub"}; !slices.Equal(keys, want) {
			t.Fatalf("push without value_lens asked for has fields %v, want %v", keys, want)
		}
		var rs []json.RawMessage
		if err := json.Unmarshal(m["records"], &rs); err != nil {
			t.Fatal(err)
		}
		plainRecords = append(plainRecords, rs...)
	}
	if len(plainRecords) != len(records) {
		t.Fatalf("%d records without value_lens, %d with", len(plainRecords), len(records))
	}
	for i := range records {
		if string(plainRecords[i]) != string(records[i]) {
			t.Errorf("record %d: %s without value_lens, %s with", i, plainRecords[i], records[i])
		}
	}

	sub, err := c.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "lens", Partition: -1, From: "earliest"})
	if err != nil {
		t.Fatal(err)
	}
	var got []wsclient.Record
	for len(got) < n {
		p := <-sub.C()
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		got = append(got, p.Records...)
	}
	if len(got) != n || len(records) != n {
		t.Fatalf("read %d records with the Go client and %d with encoding/json, want %d", len(got), len(records), n)
	}
	for i, r := range records {
		want, err := wsclient.DecodeRecord(r)
		if err != nil {
			t.Fatalf("record %s: %v", r, err)
		}
		if string(got[i].Raw) != string(r) {
			t.Errorf("record %d: the Go client's Raw is %s, the push sent %s", i, got[i].Raw, r)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("record %d: the Go client read %+v, DecodeRecord %+v", i, got[i], want)
		}
	}
}

// checkValueLens parses msg with encoding/json and, when it is a push,
// fails unless its value_lens has one entry per record, the length of the
// record's "value" JSON as sent (0 without one). It returns the push's
// records (none for another message).
func checkValueLens(t *testing.T, msg []byte) []json.RawMessage {
	t.Helper()
	var m struct {
		Sub       int64             `json:"sub"`
		Records   []json.RawMessage `json:"records"`
		ValueLens []int             `json:"value_lens"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatalf("message %q: %v", msg, err)
	}
	if m.Sub == 0 || m.Records == nil {
		return nil // a reply, or an error push
	}
	if len(m.ValueLens) != len(m.Records) {
		t.Fatalf("push with %d records and %d value_lens: %s", len(m.Records), len(m.ValueLens), msg)
	}
	for i, r := range m.Records {
		var f map[string]json.RawMessage
		if err := json.Unmarshal(r, &f); err != nil {
			t.Fatal(err)
		}
		if want := len(f["value"]); m.ValueLens[i] != want {
			t.Errorf("record %s: value_lens says %d, its value is %d bytes", r, m.ValueLens[i], want)
		}
	}
	return m.Records
}

// TestShutdownDuringSubscribes shuts the server down while subscribes
// (of whole topics, which also watch for new partitions) are on their
// way: Shutdown ends every subscription, including one whose goroutines a
// subscribe was starting as it did, and the push cache is left with no
// partition joined. (Run with -race: starting a subscription's goroutines
// must not race with stopping it.)
func TestShutdownDuringSubscribes(t *testing.T) {
	e, _ := openEngine(t)
	for round := range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := New(e, DefaultOptions())
		done := make(chan error, 1)
		go func() { done <- s.Serve(l) }()
		ws, _, err := websocket.DefaultDialer.Dial("ws://"+l.Addr().String()+"/v1/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 8 {
			req := fmt.Sprintf(`{"op":"subscribe","id":%d,"topic":"shut%d","from":"earliest"}`, i+1, i%2)
			if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
				t.Fatal(err)
			}
		}
		// Wait for the first reply, so that the others are being served.
		ws.SetReadDeadline(time.Now().Add(hangGuard))
		if _, _, err := ws.ReadMessage(); err != nil {
			t.Fatal(err)
		}
		go func() { // reads the rest, answering the server's close frame
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		s.Shutdown(ctx)
		cancel()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Fatalf("round %d: Serve returned %v", round, err)
		}
		ws.Close()
		s.pushes.mu.Lock()
		left := len(s.pushes.subs)
		s.pushes.mu.Unlock()
		if left != 0 {
			t.Fatalf("round %d: %d partitions still joined to the push cache after Shutdown", round, left)
		}
	}
}
