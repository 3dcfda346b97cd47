package kafka

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// encodeRequest is a request frame body (header and request, no size) as a
// client sends it.
func encodeRequest(req kmsg.Request, version int16) []byte {
	req.SetVersion(version)
	b := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 42)
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "fuzz"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

func seedRecords() []engine.Record {
	return []engine.Record{
		{Key: []byte("k"), Value: []byte("v"), Headers: []engine.Header{{Key: "h", Value: []byte("x")}, {Key: "n"}}},
		{Value: nil},
		{Key: []byte{}, Value: bytes.Repeat([]byte("ab"), 300)},
	}
}

// FuzzDecodeBatches feeds arbitrary record sets to the produce decoder: it
// never panics, and what it accepts re-encodes to records that decode the
// same.
func FuzzDecodeBatches(f *testing.F) {
	f.Add(producerBatch(seedRecords(), -1, -1, -1))
	f.Add(producerBatch(seedRecords(), 7, 1, 5))
	two := append(producerBatch(seedRecords()[:1], -1, -1, -1), producerBatch(seedRecords()[1:], -1, -1, -1)...)
	f.Add(two)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		batches, err := decodeBatches(data, 1<<20)
		if err != nil {
			return
		}
		for _, b := range batches {
			recs := b.Records
			for i := range recs {
				recs[i].Offset, recs[i].Timestamp = int64(i), 0
			}
			again, err := decodeBatches(producerBatch(append([]engine.Record(nil), recs...), -1, -1, -1), 1<<20)
			if err != nil {
				t.Fatalf("re-encoded batch refused: %v", err)
			}
			sameRecords(t, again[0].Records, recs)
		}
	})
}

// FuzzBatchRoundTrip encodes records as a fetch batch and decodes them back.
func FuzzBatchRoundTrip(f *testing.F) {
	f.Add([]byte("key"), []byte("value"), "h", []byte("hv"), false, false, uint8(3))
	f.Add([]byte{}, []byte{}, "", []byte{}, true, true, uint8(1))
	f.Fuzz(func(t *testing.T, key, value []byte, hk string, hv []byte, nullKey, nullValue bool, n uint8) {
		if nullKey {
			key = nil
		}
		if nullValue {
			value = nil
		}
		recs := make([]engine.Record, int(n)%20+1)
		for i := range recs {
			recs[i] = engine.Record{Offset: 100 + int64(i), Timestamp: 1e12, Key: key, Value: value, Headers: []engine.Header{{Key: hk, Value: hv}}}
		}
		b := appendBatch(nil, recs)
		// What Pulse sends passes its own checks (CRC included), but it
		// is flagged LogAppendTime; a produce decoder does not care.
		got, n2, err := decodeBatch(b, 1<<20)
		if err != nil || n2 != len(b) {
			t.Fatalf("decode: %v (%d of %d bytes)", err, n2, len(b))
		}
		sameRecords(t, got.Records, recs)
	})
}

func sameRecords(t *testing.T, got, want []engine.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) || len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d: got %+v, want %+v", i, g, w)
		}
		for j := range g.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) || (g.Headers[j].Value == nil) != (w.Headers[j].Value == nil) {
				t.Fatalf("record %d header %d: got %+v, want %+v", i, j, g.Headers[j], w.Headers[j])
			}
		}
	}
}

// FuzzRequest feeds arbitrary frames to the request path of a real server
// (engine in a temp dir): it never panics, and answers or refuses.
func FuzzRequest(f *testing.F) {
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	md.Topics = append(md.Topics, mt)
	f.Add(encodeRequest(md, 1))
	f.Add(encodeRequest(md, 9))
	f.Add(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 3))
	f.Add(encodeRequest(produceReq("t", 0, producerBatch(seedRecords(), -1, -1, -1)), 7))
	f.Add(encodeRequest(produceReq("t", 0, producerBatch(seedRecords(), -1, -1, -1)), 9))
	fr := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	fr.MaxWaitMillis = 1
	f.Add(encodeRequest(fr, 11))
	f.Add(encodeRequest(fr, 12))
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.ProtocolType, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = "g", "consumer", 6000, 1000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1}}}
	f.Add(encodeRequest(jg, 5))
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = "g", -1
	f.Add(encodeRequest(oc, 7))
	// Every served key at its lowest and highest version, with defaults.
	for k := range servedVersions {
		rng, _ := served(int16(k))
		for _, v := range []int16{rng.min, rng.max} {
			f.Add(encodeRequest(kmsg.RequestForKey(int16(k)), v))
		}
	}

	dir := f.TempDir()
	eng, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		f.Fatal(err)
	}
	opts := DefaultOptions()
	opts.MaxFetchWait = time.Millisecond
	srv := New(eng, opts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	go srv.Serve(l)
	f.Cleanup(func() { srv.Close(); eng.Close() })
	if err := eng.CreateTopic("t", engine.TopicConfig{Partitions: 2}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := srv.handle(nil, data, peer{host: "/127.0.0.1", advHost: "127.0.0.1", advPort: 9092})
		if err == nil && len(out) > 0 && int(binary.BigEndian.Uint32(out)) != len(out)-4 {
			t.Fatalf("response size %d for %d bytes", binary.BigEndian.Uint32(out), len(out)-4)
		}
	})
}
