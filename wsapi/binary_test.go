package wsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/engine"
)

// TestBinaryProduceRoundTrip produces every record shape in binary frames,
// interleaved with JSON produces on the same connection, and reads back the
// exact bytes in the order sent.
func TestBinaryProduceRoundTrip(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialClient(t, ts.addr)
	ctx := testCtx(t)
	recs := []engine.Record{
		{Key: []byte("user-1"), Value: []byte(`{"total":12.5}`)},
		{Value: []byte("not json \xff\x00")},
		{Key: []byte{0xff, 0}, Value: []byte{}},
		{Key: []byte("user-1")}, // tombstone
		{Value: []byte("h"), Headers: []engine.Header{{Key: "trace", Value: []byte("a1")}, {Key: "bin", Value: []byte{0, 0xfe}}, {Key: "empty", Value: []byte{}}}},
	}
	p1, err := c.ProduceBytesAsync("bin", 0, recs)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.ProduceAsync("bin", 0, []wire.RecordIn{{Value: []byte(`"json"`)}})
	if err != nil {
		t.Fatal(err)
	}
	acks3, err := c.ProduceBytes(ctx, "bin", 0, recs[:1])
	if err != nil {
		t.Fatal(err)
	}
	acks1, err := p1.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acks2, err := p2.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(acks1) != len(recs) || len(acks2) != 1 || len(acks3) != 1 {
		t.Fatalf("acks %v %v %v", acks1, acks2, acks3)
	}
	for i, a := range acks1 {
		if a.Offset != int64(i) || a.Partition != 0 {
			t.Fatalf("ack %d = %+v", i, a)
		}
	}
	if acks2[0].Offset != int64(len(recs)) || acks3[0].Offset != int64(len(recs)+1) {
		t.Fatalf("later acks %+v %+v: want offsets in send order", acks2, acks3)
	}
	res, err := ts.eng.Read("bin", 0, 0, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]engine.Record{}, recs...), engine.Record{Value: []byte("json")}), recs[0])
	if len(res.Records) != len(want) {
		t.Fatalf("read %d records, want %d", len(res.Records), len(want))
	}
	for i, r := range res.Records {
		w := want[i]
		if !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
			!bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) {
			t.Errorf("record %d = key %q value %q, want key %q value %q", i, r.Key, r.Value, w.Key, w.Value)
		}
		if len(r.Headers) != len(w.Headers) {
			t.Errorf("record %d headers %v, want %v", i, r.Headers, w.Headers)
			continue
		}
		for j, h := range r.Headers {
			if h.Key != w.Headers[j].Key || !bytes.Equal(h.Value, w.Headers[j].Value) {
				t.Errorf("record %d header %d = %q:%q, want %q:%q", i, j, h.Key, h.Value, w.Headers[j].Key, w.Headers[j].Value)
			}
		}
	}
}

// binFrame builds a binary produce frame from a header line and records.
func binFrame(head string, recs ...engine.Record) []byte {
	return wire.AppendBinaryRecords([]byte(head+"\n"), recs)
}

// TestBinaryProduceErrors sends malformed binary frames: each gets its
// error code, nothing is stored, and the connection stays usable.
func TestBinaryProduceErrors(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxRecordBytes = 100
	ts := startServer(t, opts)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	one := engine.Record{Value: []byte("v")}
	good := binFrame(`{"op":"produce","id":1,"topic":"t"}`, one)
	cases := []struct {
		name  string
		frame []byte
		code  string
	}{
		{"no newline", []byte(`{"op":"produce","id":1,"topic":"t"}`), wire.CodeInvalidRequest},
		{"header not JSON", binFrame(`{"op":`, one), wire.CodeInvalidJSON},
		{"not a produce", binFrame(`{"op":"subscribe","id":1,"topic":"t"}`, one), wire.CodeInvalidRequest},
		{"inline value in header", binFrame(`{"op":"produce","id":1,"topic":"t","value":1}`, one), wire.CodeInvalidRequest},
		{"records in header", binFrame(`{"op":"produce","id":1,"topic":"t","records":[]}`, one), wire.CodeInvalidRequest},
		{"no records", binFrame(`{"op":"produce","id":1,"topic":"t"}`), wire.CodeInvalidRequest},
		{"truncated value", good[:len(good)-2], wire.CodeInvalidRequest},
		{"length past the end", append(binFrame(`{"op":"produce","id":1,"topic":"t"}`), 0, 0x90, 0x4e), wire.CodeInvalidRequest},
		{"bad varint", append(binFrame(`{"op":"produce","id":1,"topic":"t"}`), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), wire.CodeInvalidRequest},
		{"missing header count", append(binFrame(`{"op":"produce","id":1,"topic":"t"}`), 0, 0), wire.CodeInvalidRequest},
		{"header name not UTF-8", binFrame(`{"op":"produce","id":1,"topic":"t"}`, engine.Record{Value: []byte("v"), Headers: []engine.Header{{Key: "\xff", Value: nil}}}), wire.CodeInvalidRequest},
		{"header twice", binFrame(`{"op":"produce","id":1,"topic":"t"}`, engine.Record{Value: []byte("v"), Headers: []engine.Header{{Key: "a"}, {Key: "a"}}}), wire.CodeInvalidRequest},
		{"too many headers", append(binFrame(`{"op":"produce","id":1,"topic":"t"}`), 0, 0, 65), wire.CodeInvalidRequest},
		{"record too large", binFrame(`{"op":"produce","id":1,"topic":"t"}`, one, engine.Record{Value: bytes.Repeat([]byte("x"), 101)}), wire.CodeRecordTooLarge},
		{"bad topic", binFrame(`{"op":"produce","id":1,"topic":"a/b"}`, one), wire.CodeInvalidTopic},
		{"dot dot topic", binFrame(`{"op":"produce","id":1,"topic":".."}`, one), wire.CodeInvalidTopic},
		{"negative partition", binFrame(`{"op":"produce","id":1,"topic":"t","partition":-1}`, one), wire.CodePartitionOutOfRange},
		{"partition out of range", binFrame(`{"op":"produce","id":1,"topic":"t","partition":7}`, one), wire.CodePartitionOutOfRange},
	}
	for _, tc := range cases {
		if err := c.ws.WriteMessage(websocket.BinaryMessage, tc.frame); err != nil {
			t.Fatal(err)
		}
		m := c.next()
		if got := errCode(m); got != tc.code {
			t.Errorf("%s: reply %v, want error %s", tc.name, m, tc.code)
		}
		if msg, _ := m["error"].(map[string]any)["message"].(string); msg == "" {
			t.Errorf("%s: error without a message: %v", tc.name, m)
		}
		if d := topicDirs(t, ts.dir); len(d) != 0 {
			t.Fatalf("%s: stored something: %v", tc.name, d)
		}
	}
	// Too many records for one request.
	many := binFrame(`{"op":"produce","id":2,"topic":"t"}`)
	for range maxRequestRecords + 1 {
		many = append(many, 0, 1, 0)
	}
	if err := c.ws.WriteMessage(websocket.BinaryMessage, many); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); errCode(m) != wire.CodeInvalidRequest || num(t, m, "id") != 2 {
		t.Errorf("%d records: %v, want invalid_request", maxRequestRecords+1, m)
	}
	if d := topicDirs(t, ts.dir); len(d) != 0 {
		t.Fatalf("stored something: %v", d)
	}
	// The connection still works.
	if err := c.ws.WriteMessage(websocket.BinaryMessage, good); err != nil {
		t.Fatal(err)
	}
	m := c.next()
	acks, ok := m["acks"].([]any)
	if errCode(m) != "" || !ok || len(acks) != 1 || num(t, m, "id") != 1 {
		t.Fatalf("good frame after errors: %v", m)
	}
}

// addBinarySeeds adds the binary produce frames of testdata/binary.
func addBinarySeeds(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "binary", "*.bin"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/binary: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzBinaryProduce feeds arbitrary binary frames to the server's decoder:
// nothing may panic, errors are protocol errors with a message, and every
// frame accepted encodes back to records that decode the same.
func FuzzBinaryProduce(f *testing.F) {
	addBinarySeeds(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		req, recs, size, e := decodeBinaryProduce(msg, 1<<20)
		if e != nil {
			if e.Code == "" || e.Message == "" {
				t.Fatalf("error without code or message: %+v", e)
			}
			return
		}
		if len(recs) == 0 || len(recs) > maxRequestRecords || req.Op != "produce" {
			t.Fatalf("accepted %d records of op %q", len(recs), req.Op)
		}
		n := 0
		for _, r := range recs {
			n += len(r.Key) + len(r.Value)
		}
		if n != size {
			t.Fatalf("size %d, records hold %d", size, n)
		}
		p := -1
		if req.Partition != nil && *req.Partition >= 0 {
			p = *req.Partition
		}
		head := `{"op":"produce","id":1,"topic":"t"}`
		if p >= 0 {
			head = fmt.Sprintf(`{"op":"produce","id":1,"topic":"t","partition":%d}`, p)
		}
		again := binFrame(head, recs...)
		_, recs2, _, e := decodeBinaryProduce(again, 1<<20)
		if e != nil {
			t.Fatalf("re-encoded frame refused: %v", e)
		}
		if !reflect.DeepEqual(recs, recs2) {
			t.Fatalf("records changed on the round trip:\n%+v\n%+v", recs, recs2)
		}
	})
}

// TestBinarySeedsDecode checks the seed frames are what their names say.
func TestBinarySeedsDecode(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "binary", "*.bin"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, e := decodeBinaryProduce(b, 1<<20)
		if bad := strings.HasPrefix(filepath.Base(name), "bad_"); bad != (e != nil) {
			t.Errorf("%s: error %v", name, e)
		}
	}
}

// TestProduceBuffersReused sends JSON and binary produces of varying sizes
// from several goroutines on one client without waiting between them (the
// client recycles its encode buffers), then checks every stored record
// against what its request carried.
func TestProduceBuffersReused(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	c := dialClient(t, ts.addr)
	ctx := testCtx(t)
	const workers, requests = 4, 40
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var pend []*wsclient.Pending
			for r := range requests {
				var recs []engine.Record
				for k := range 1 + (r*7+w)%13 {
					v := fmt.Appendf(nil, `{"w":%d,"r":%d,"k":%d,"pad":"%s"}`, w, r, k, strings.Repeat("x", (r*131+k*17)%2000))
					recs = append(recs, engine.Record{Key: fmt.Appendf(nil, "w%d", w), Value: v})
				}
				var p *wsclient.Pending
				var err error
				if r%2 == 0 {
					p, err = c.ProduceBytesAsync("reuse", 0, recs)
				} else {
					ins := make([]wire.RecordIn, len(recs))
					for i, rec := range recs {
						k := string(rec.Key)
						ins[i] = wire.RecordIn{Key: &k, Value: rec.Value}
					}
					p, err = c.ProduceAsync("reuse", 0, ins)
				}
				if err != nil {
					errs <- err
					return
				}
				pend = append(pend, p)
			}
			for _, p := range pend {
				if _, err := p.Wait(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	res, err := ts.eng.Read("reuse", 0, 0, 100000, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	next := map[int][2]int{} // worker → (request, record) expected next
	for _, rec := range res.Records {
		var v struct {
			W, R, K int
			Pad     string
		}
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			t.Fatalf("offset %d: stored value %q: %v", rec.Offset, rec.Value, err)
		}
		want := next[v.W]
		if v.R != want[0] || v.K != want[1] || len(v.Pad) != (v.R*131+v.K*17)%2000 || string(rec.Key) != fmt.Sprintf("w%d", v.W) {
			t.Fatalf("offset %d: worker %d request %d record %d (pad %d, key %q), want request %d record %d", rec.Offset, v.W, v.R, v.K, len(v.Pad), rec.Key, want[0], want[1])
		}
		if v.K+1 == 1+(v.R*7+v.W)%13 {
			next[v.W] = [2]int{v.R + 1, 0}
		} else {
			next[v.W] = [2]int{v.R, v.K + 1}
		}
	}
	for w := range workers {
		if next[w] != [2]int{requests, 0} {
			t.Errorf("worker %d: stored up to %v, want all %d requests", w, next[w], requests)
		}
	}
}
