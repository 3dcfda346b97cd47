package wsapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/damage"
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

// TestPushCountsACorruptRangeAfterItsRecordsOnce: when the read that makes
// a push returns records and then skips a corrupt range up to the HWM, the
// push carries the records, skipped the range's length, and next past the
// range (not right after its last record): a consumer that sums skipped and
// resumes at next counts the range once, and the engine counts one read of
// it; the next push is the next record produced, with nothing skipped.
func TestPushCountsACorruptRangeAfterItsRecordsOnce(t *testing.T) {
	e, dir := openEngine(t)
	if err := e.CreateTopic("hurt", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]engine.Record{
		{{Value: []byte(`0`)}, {Value: []byte(`1`)}, {Value: []byte(`2`)}},
		{{Value: []byte(`3`)}, {Value: []byte(`4`)}},
	} {
		if _, err := e.Produce(context.Background(), "hurt", 0, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(layout.PartitionDir(dir, "hurt", 0), layout.LogFile(0))
	fi, err := os.Stat(seg)
	if err != nil {
		t.Fatal(err)
	}
	damage.FlipByte(t, seg, fi.Size()-2) // in the last batch: offsets 3..4
	e2, err := reopenEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e2.Close() })
	ts := serveBackend(t, e2, dir, DefaultOptions())

	skipped := func() int64 {
		t.Helper()
		info, err := e2.Describe("hurt")
		if err != nil {
			t.Fatal(err)
		}
		return info.Partitions[0].SkippedRecords
	}
	conns := map[string]*rawConn{}
	for i, format := range []string{"json", "binary"} {
		c := dialRaw(t, ts.addr, "/v1/ws", nil)
		conns[format] = c
		c.send(map[string]any{"op": "subscribe", "id": 1, "topic": "hurt", "from": "earliest", "format": format})
		if m := c.next(); m["error"] != nil {
			t.Fatalf("%s subscribe: %v", format, m)
		}
		if p := readPush(t, c, format); p.next != 5 || p.skipped != 2 || fmt.Sprint(p.offsets) != "[0 1 2]" {
			t.Fatalf("%s push: next %d, skipped %d, offsets %v; want next 5, skipped 2, offsets [0 1 2]", format, p.next, p.skipped, p.offsets)
		}
		if n := skipped(); n != int64(2*(i+1)) {
			t.Fatalf("%s: the engine counted %d skipped, want %d", format, n, 2*(i+1))
		}
	}
	if _, err := e2.Produce(context.Background(), "hurt", 0, []engine.Record{{Value: []byte(`5`)}}); err != nil {
		t.Fatal(err)
	}
	for format, c := range conns {
		if p := readPush(t, c, format); p.next != 6 || p.skipped != 0 || fmt.Sprint(p.offsets) != "[5]" {
			t.Fatalf("%s push after a produce: next %d, skipped %d, offsets %v; want next 6, nothing skipped, offsets [5]", format, p.next, p.skipped, p.offsets)
		}
	}
	if n := skipped(); n != 4 {
		t.Fatalf("after the produce: the engine counted %d skipped, want still 4", n)
	}
}

// TestPushCutBySizeCountsARangePastItsNextOnce: a read returns more
// records than fit in one push (values of control characters, escaped to
// six bytes each in JSON) and then skips a corrupt range; the push cut
// short carries only the skipped offsets below its next, so that a
// subscriber that sums skipped counts the range once, in the push that
// passes it, instead of once in the cut push and again in the push of the
// read that starts at its next.
func TestPushCutBySizeCountsARangePastItsNextOnce(t *testing.T) {
	e, dir := openEngine(t)
	if err := e.CreateTopic("cut", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(layout.PartitionDir(dir, "cut", 0), layout.LogFile(0))
	ctrl := bytes.Repeat([]byte{0x01}, 1000) // 6,000 bytes of JSON: "\u0001" each
	var big []engine.Record
	for range 60 {
		big = append(big, engine.Record{Value: ctrl})
	}
	var damagedAt int64
	for i, batch := range [][]engine.Record{
		big, // offsets 0..59
		{{Value: []byte(`60`)}, {Value: []byte(`61`)}}, // damaged below
		{{Value: []byte(`62`)}},
	} {
		if _, err := e.Produce(context.Background(), "cut", 0, batch); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			fi, err := os.Stat(seg)
			if err != nil {
				t.Fatal(err)
			}
			damagedAt = fi.Size() - 2 // in the batch of offsets 60..61
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	damage.FlipByte(t, seg, damagedAt)
	e2, err := reopenEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e2.Close() })
	ts := serveBackend(t, e2, dir, DefaultOptions())

	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	c.send(map[string]any{"op": "subscribe", "id": 1, "topic": "cut", "from": "earliest"})
	if m := c.next(); m["error"] != nil {
		t.Fatalf("subscribe: %v", m)
	}
	var nexts, skips, offsets []int64
	for len(nexts) == 0 || nexts[len(nexts)-1] < 63 {
		p := readPush(t, c, "json")
		nexts, skips, offsets = append(nexts, p.next), append(skips, p.skipped), append(offsets, p.offsets...)
	}
	if nexts[0] >= 60 {
		t.Fatalf("the first push's next is %d: it was not cut short by its size, so this test tests nothing", nexts[0])
	}
	var want []int64
	for o := range int64(60) {
		want = append(want, o)
	}
	want = append(want, 62)
	if fmt.Sprint(offsets) != fmt.Sprint(want) {
		t.Fatalf("offsets pushed %v, want 0..59 and 62 once each", offsets)
	}
	var sum int64
	for _, n := range skips {
		sum += n
	}
	if sum != 2 {
		t.Fatalf("pushes with next %v carry skipped %v: %d in all, want the range 60..61 counted once (2)", nexts, skips, sum)
	}
}

// push is what one push of a subscription says: its next, its skipped and
// the offsets of its records.
type push struct {
	next, skipped int64
	offsets       []int64
}

// readPush reads c's next message, a push in format (json or binary).
func readPush(t *testing.T, c *rawConn, format string) push {
	t.Helper()
	typ, b := c.message()
	if typ == websocket.BinaryMessage {
		h, err := wire.ParseBinaryPush(b)
		if err != nil {
			t.Fatalf("binary push %q: %v", b, err)
		}
		p := push{next: h.Next, skipped: h.Skipped}
		for i := range h.Count {
			p.offsets = append(p.offsets, h.Offset+int64(i)) // these records are consecutive
		}
		return p
	}
	var env struct {
		Next    int64 `json:"next"`
		Skipped int64 `json:"skipped"`
		Records []struct {
			Offset int64 `json:"offset"`
		} `json:"records"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s push %s: %v", format, b, err)
	}
	p := push{next: env.Next, skipped: env.Skipped}
	for _, r := range env.Records {
		p.offsets = append(p.offsets, r.Offset)
	}
	return p
}
