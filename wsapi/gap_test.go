package wsapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/wsapi/wire"
)

// TestPushPassesAnUnreadableRangeAtTheEnd: when nothing is readable from a
// subscription's position up to the HWM (a gap recovery recorded: the hwm
// file promised offsets the data does not hold), the subscription gets a
// push of no records whose next is past the range, so that a consumer
// knows where it stands (pulse tail -e ends) instead of waiting for more
// records; in JSON and in binary pushes alike.
func TestPushPassesAnUnreadableRangeAtTheEnd(t *testing.T) {
	e, dir := openEngine(t)
	if err := e.CreateTopic("gap", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Produce(context.Background(), "gap", 0, []engine.Record{{Value: []byte(`1`)}, {Value: []byte(`2`)}, {Value: []byte(`3`)}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var hwm [8]byte
	binary.BigEndian.PutUint64(hwm[:], 10) // offsets 3..9 promised, never written
	if err := os.WriteFile(filepath.Join(layout.PartitionDir(dir, "gap", 0), "hwm"), hwm[:], 0o644); err != nil {
		t.Fatal(err)
	}
	e2, err := reopenEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e2.Close() })
	ts := serveBackend(t, e2, dir, DefaultOptions())

	for _, format := range []string{"json", "binary"} {
		c := dialRaw(t, ts.addr, "/v1/ws", nil)
		c.send(map[string]any{"op": "subscribe", "id": 1, "topic": "gap", "from": "earliest", "format": format, "value_lens": format == "json"})
		if m := c.next(); m["error"] != nil {
			t.Fatalf("%s subscribe: %v", format, m)
		}
		var nexts []int64
		var counts []int
		for len(nexts) < 2 {
			typ, b := c.message()
			switch typ {
			case websocket.TextMessage:
				var env struct {
					Next    int64             `json:"next"`
					Records []json.RawMessage `json:"records"`
				}
				if err := json.Unmarshal(b, &env); err != nil {
					t.Fatalf("%s push %s: %v", format, b, err)
				}
				if bytes.Contains(b, []byte(`"records":[]`)) && !bytes.Contains(b, []byte(`"value_lens":[]`)) {
					t.Errorf("a JSON push of no records lacks its empty value_lens: %s", b)
				}
				nexts, counts = append(nexts, env.Next), append(counts, len(env.Records))
			case websocket.BinaryMessage:
				h, err := wire.ParseBinaryPush(b)
				if err != nil {
					t.Fatalf("binary push %q: %v", b, err)
				}
				nexts, counts = append(nexts, h.Next), append(counts, h.Count)
			}
		}
		if nexts[0] != 3 || counts[0] != 3 || nexts[1] != 10 || counts[1] != 0 {
			t.Fatalf("%s pushes: next %v, records %v; want next 3 with 3 records, then next 10 with none", format, nexts, counts)
		}
	}
}
