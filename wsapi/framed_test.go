package wsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/wsapi/internal/wiretest"
	"github.com/pulselog/pulse/wsapi/wire"
)

// TestTextFramesReadByTheLibrary writes frames built by appendTextFrame,
// several in one write, at every length class of the frame header, and
// reads them with gorilla/websocket's client: each must arrive as one text
// message, unchanged.
func TestTextFramesReadByTheLibrary(t *testing.T) {
	sizes := []int{0, 1, 125, 126, 127, 65535, 65536, 100000}
	payload := func(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }
	url := wiretest.ServeWS(t, func(ws *websocket.Conn) {
		var frames []byte
		for _, n := range sizes {
			frames = append(appendTextFrame(frames, n), payload(n)...)
		}
		if _, err := ws.NetConn().Write(frames); err != nil {
			t.Error(err)
		}
		ws.ReadMessage() // until the client goes
	})
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(hangGuard))
	for _, n := range sizes {
		typ, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("frame of %d bytes: %v", n, err)
		}
		if typ != websocket.TextMessage || !bytes.Equal(msg, payload(n)) {
			t.Fatalf("frame of %d bytes: read type %d, %d bytes", n, typ, len(msg))
		}
	}
}

// TestMergedRepliesOnePerRequest sends, in one write, many produce
// requests that the worker can merge (single records, batches, one batch
// large enough for a reply of over 64 KiB, ids of every JSON kind) to the
// same partition, then a describe, and reads the replies with
// gorilla/websocket: one message per request, in request order, each
// echoing its id and acking its own records with consecutive offsets.
func TestMergedRepliesOnePerRequest(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	type req struct {
		id      string // the id's JSON
		records int
	}
	var reqs []req
	var all []byte
	add := func(id string, records int) {
		var b []byte
		if records == 0 {
			b = fmt.Appendf(nil, `{"op":"produce","id":%s,"topic":"merged","partition":0,"value":{"n":%d}}`, id, len(reqs))
		} else {
			b = fmt.Appendf(nil, `{"op":"produce","id":%s,"topic":"merged","partition":0,"records":[`, id)
			for i := range records {
				if i > 0 {
					b = append(b, ',')
				}
				b = fmt.Appendf(b, `{"value":%d}`, i)
			}
			b = append(b, "]}"...)
		}
		reqs = append(reqs, req{id: id, records: records})
		all = append(all, b...)
		all = append(all, 0) // separator for the loop below
	}
	// The topic exists before the merged requests arrive.
	c.send(map[string]any{"op": "create_topic", "id": 0, "topic": "merged", "config": map[string]any{"sync_mode": "interval"}})
	if m := c.next(); errCode(m) != "" {
		t.Fatal(m)
	}
	for i := range 300 {
		switch {
		case i == 150:
			add(`"big"`, 1500) // acks of 1500 records: a reply over 64 KiB
		case i%7 == 0:
			add(fmt.Sprintf(`{"k":[%d,"a\"b"]}`, i), 3)
		case i%5 == 0:
			add(fmt.Sprintf(`"s%d"`, i), 0)
		default:
			add(fmt.Sprint(i+1), 0)
		}
	}
	// One write for all of them, so that the server finds them queued.
	ws := c.ws
	nc := ws.NetConn()
	var buf []byte
	for _, b := range bytes.Split(all[:len(all)-1], []byte{0}) {
		buf = appendClientFrame(buf, b)
	}
	if _, err := nc.Write(buf); err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	for i, r := range reqs {
		ws.SetReadDeadline(time.Now().Add(hangGuard))
		typ, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if typ != websocket.TextMessage {
			t.Fatalf("reply %d: message type %d", i, typ)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Offset *int64          `json:"offset"`
			Acks   []struct {
				Offset int64 `json:"offset"`
			} `json:"acks"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("reply %d: %q: %v", i, msg, err)
		}
		if string(m.ID) != r.id || m.Error != nil {
			t.Fatalf("reply %d: %s, want id %s", i, msg, r.id)
		}
		var offs []int64
		if r.records == 0 {
			if m.Offset == nil {
				t.Fatalf("reply %d: %s: no offset", i, msg)
			}
			offs = []int64{*m.Offset}
		} else {
			for _, a := range m.Acks {
				offs = append(offs, a.Offset)
			}
			if len(offs) != r.records {
				t.Fatalf("reply %d: %d acks for %d records", i, len(offs), r.records)
			}
		}
		for _, o := range offs {
			if o != next {
				t.Fatalf("reply %d: offset %d, want %d", i, o, next)
			}
			next++
		}
	}
}

// appendClientFrame appends a masked client text frame carrying p (RFC 6455
// section 5.2), with a fixed mask key: the test writes many frames in one
// write, which gorilla's client cannot.
func appendClientFrame(b, p []byte) []byte {
	b = wire.AppendFrameHeader(b, wire.OpText, len(p), true)
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	b = append(b, key[:]...)
	for i, c := range p {
		b = append(b, c^key[i%4])
	}
	return b
}
