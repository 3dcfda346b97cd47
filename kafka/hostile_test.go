package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// producerBatch encodes recs as a batch v2 as an idempotent producer would
// send it (CreateTime, producer id, epoch and base sequence set).
func producerBatch(recs []engine.Record, pid int64, epoch int16, seq int32) []byte {
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	b := appendBatch(nil, recs)
	binary.BigEndian.PutUint16(b[offAttributes:], 0)
	binary.BigEndian.PutUint64(b[offProducerID:], uint64(pid))
	binary.BigEndian.PutUint16(b[offEpoch:], uint16(epoch))
	binary.BigEndian.PutUint32(b[offBaseSequence:], uint32(seq))
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return b
}

func produceReq(topic string, partition int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func produceRaw(t *testing.T, cl *kgo.Client, req *kmsg.ProduceRequest) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}

// TestIdempotentRetry: a batch sent again with the same producer id, epoch
// and sequence is acknowledged with its first offsets and stored once; a
// gap in sequences is refused; an old epoch is fenced.
func TestIdempotentRetry(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	if err := p.eng.CreateTopic("idem", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	init, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(context.Background(), cl)
	if err != nil || init.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %v", init, err)
	}
	pid := init.ProducerID
	recs := func(n int) []engine.Record {
		out := make([]engine.Record, n)
		for i := range out {
			out[i] = engine.Record{Key: []byte("k"), Value: []byte{byte(i)}}
		}
		return out
	}
	first := produceRaw(t, cl, produceReq("idem", 0, producerBatch(recs(3), pid, 0, 0)))
	second := produceRaw(t, cl, produceReq("idem", 0, producerBatch(recs(2), pid, 0, 3)))
	retry := produceRaw(t, cl, produceReq("idem", 0, producerBatch(recs(3), pid, 0, 0)))
	if first.ErrorCode != 0 || second.ErrorCode != 0 || retry.ErrorCode != 0 {
		t.Fatalf("errors: %d %d %d", first.ErrorCode, second.ErrorCode, retry.ErrorCode)
	}
	if first.BaseOffset != 0 || second.BaseOffset != 3 || retry.BaseOffset != 0 || retry.LogAppendTime != first.LogAppendTime {
		t.Fatalf("offsets: first %d, second %d, retry %d (times %d, %d)", first.BaseOffset, second.BaseOffset, retry.BaseOffset, first.LogAppendTime, retry.LogAppendTime)
	}
	gap := produceRaw(t, cl, produceReq("idem", 0, producerBatch(recs(1), pid, 0, 9)))
	if gap.ErrorCode != errOutOfOrderSequence {
		t.Fatalf("sequence gap: error %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", gap.ErrorCode)
	}
	bumped := produceRaw(t, cl, produceReq("idem", 0, producerBatch(recs(1), pid, 1, 0)))
	fenced := produceRaw(t, cl, produceReq("idem", 0, producerBatch(recs(1), pid, 0, 5)))
	if bumped.ErrorCode != 0 || bumped.BaseOffset != 5 || fenced.ErrorCode != errInvalidProducerEpoch {
		t.Fatalf("epoch bump: %+v; old epoch: error %d", bumped, fenced.ErrorCode)
	}
	info, _ := p.eng.Describe("idem")
	if hwm := info.Partitions[0].HWM; hwm != 6 {
		t.Fatalf("HWM %d, want 6: the retry was stored again", hwm)
	}
}

// TestBadCRCStoresNothing: a batch whose CRC does not match is refused with
// CORRUPT_MESSAGE and the partition does not move.
func TestBadCRCStoresNothing(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	if err := p.eng.CreateTopic("crc", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	b := producerBatch([]engine.Record{{Value: []byte("hello")}}, -1, -1, -1)
	b[len(b)-3] ^= 0x40 // inside the value
	got := produceRaw(t, cl, produceReq("crc", 0, b))
	if got.ErrorCode != errCorruptMessage {
		t.Fatalf("bad CRC: error %d, want CORRUPT_MESSAGE", got.ErrorCode)
	}
	// Truncated and garbage record sets too.
	for _, bad := range [][]byte{b[:len(b)-1], {2, 0, 0}, make([]byte, 100)} {
		if got := produceRaw(t, cl, produceReq("crc", 0, bad)); got.ErrorCode == 0 {
			t.Fatalf("records %x accepted", bad)
		}
	}
	// Partition -1 is not "any partition" over Kafka.
	if got := produceRaw(t, cl, produceReq("crc", -1, producerBatch([]engine.Record{{Value: []byte("x")}}, -1, -1, -1))); got.ErrorCode != errUnknownTopicOrPartition {
		t.Fatalf("partition -1: error %d", got.ErrorCode)
	}
	info, _ := p.eng.Describe("crc")
	if info.Partitions[0].LEO != 0 {
		t.Fatalf("log end %d after refused batches", info.Partitions[0].LEO)
	}
}

// rawConn sends bytes on a fresh connection and reports whether Pulse
// closed it (read EOF or reset) rather than answering.
func closedAfter(t *testing.T, addr string, data []byte) bool {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(data)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// TestHostileFrames: frames over the limit, with bad lengths, unknown keys
// or garbage get the connection closed, the server keeps serving others,
// and an ApiVersions of a version Pulse does not serve gets the KIP-511
// fallback answer.
func TestHostileFrames(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxRequestBytes = 1 << 20
	p := startPulse(t, "", opts)
	hdr := func(key, version int16) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		b = binary.BigEndian.AppendUint32(b, 7)
		return binary.BigEndian.AppendUint16(b, 0xffff) // null client id
	}
	cases := map[string][]byte{
		"over the limit":         binary.BigEndian.AppendUint32(nil, 64<<20), // and no body: nothing is allocated
		"negative size":          binary.BigEndian.AppendUint32(nil, 0xfffffff0),
		"tiny size":              frame([]byte{0, 1}),
		"unknown key":            frame(hdr(999, 0)),
		"unserved key":           frame(hdr(int16(kmsg.AlterPartitionAssignments), 0)),
		"fetch v0":               frame(hdr(int16(kmsg.Fetch), 0)),
		"garbage body":           frame(append(hdr(int16(kmsg.Metadata), 1), 0, 0, 0, 5, 0, 200, 1)),
		"client id past the end": frame([]byte{0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0xff, 'x'}),
	}
	for name, data := range cases {
		if !closedAfter(t, p.addr, data) {
			t.Errorf("%s: connection not closed", name)
		}
	}

	// KIP-511: ApiVersions v99 gets a v0 response with UNSUPPORTED_VERSION
	// and the served ranges.
	c := dialRaw(t, p.addr)
	c.Write(frame(hdr(int16(kmsg.ApiVersions), 99)))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(body) != 7 || resp.ErrorCode != errUnsupportedVersionCode || len(resp.ApiKeys) != len(servedVersions) {
		t.Fatalf("fallback: correlation %d, error %d, %d keys", binary.BigEndian.Uint32(body), resp.ErrorCode, len(resp.ApiKeys))
	}

	// Still serving.
	cl := kgoClient(t, p.addr)
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(context.Background(), cl); err != nil {
		t.Fatalf("after hostile frames: %v", err)
	}
}

// TestNoAutoCreate: with auto-creation off, Metadata and Produce for a
// missing topic answer UNKNOWN_TOPIC_OR_PARTITION and create nothing; a bad
// topic name is INVALID_TOPIC_EXCEPTION.
func TestNoAutoCreate(t *testing.T) {
	opts := DefaultOptions()
	opts.AutoCreate = false
	p := startPulse(t, "", opts)
	cl := kgoClient(t, p.addr)
	md := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"missing", "bad/name"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		md.Topics = append(md.Topics, mt)
	}
	md.AllowAutoTopicCreation = true
	resp, err := md.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Topics[0].ErrorCode != errUnknownTopicOrPartition || resp.Topics[1].ErrorCode != errInvalidTopic {
		t.Fatalf("metadata errors %d, %d", resp.Topics[0].ErrorCode, resp.Topics[1].ErrorCode)
	}
	got := produceRaw(t, cl, produceReq("missing", 0, producerBatch([]engine.Record{{Value: []byte("x")}}, -1, -1, -1)))
	if got.ErrorCode != errUnknownTopicOrPartition {
		t.Fatalf("produce to a missing topic: error %d", got.ErrorCode)
	}
	if ts, _ := p.eng.Topics(); len(ts) != 0 {
		t.Fatalf("topics created: %v", ts)
	}
}

// TestProduceCreatesNoTopic: with auto-creation on, as in Kafka, only a
// Metadata request that allows it creates a missing topic; a Produce to one
// (a client whose metadata is stale after the topic was deleted) answers
// UNKNOWN_TOPIC_OR_PARTITION and creates nothing, so a partition number the
// client kept from the old topic is not written into a new topic of one
// partition.
func TestProduceCreatesNoTopic(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	got := produceRaw(t, cl, produceReq("gone", 0, producerBatch([]engine.Record{{Value: []byte("x")}}, -1, -1, -1)))
	if got.ErrorCode != errUnknownTopicOrPartition {
		t.Fatalf("produce to a missing topic: error %d, want UNKNOWN_TOPIC_OR_PARTITION", got.ErrorCode)
	}
	if ts, _ := p.eng.Topics(); len(ts) != 0 {
		t.Fatalf("topics created by a produce: %v", ts)
	}
	// Metadata allowing it still creates the topic, and a produce then lands.
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("gone")
	md.Topics = append(md.Topics, mt)
	md.AllowAutoTopicCreation = true
	resp, err := md.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata with allow_auto_topic_creation: error %d", resp.Topics[0].ErrorCode)
	}
	got = produceRaw(t, cl, produceReq("gone", 0, producerBatch([]engine.Record{{Value: []byte("x")}}, -1, -1, -1)))
	if got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("produce after metadata created the topic: error %d, base offset %d", got.ErrorCode, got.BaseOffset)
	}
}

// TestSlowClient: a client that announces a frame and never finishes it is
// closed after FrameTimeout; one that stops reading responses is closed
// after FrameTimeout on the write. Neither holds up other clients.
func TestSlowClient(t *testing.T) {
	opts := DefaultOptions()
	opts.FrameTimeout = 200 * time.Millisecond
	p := startPulse(t, "", opts)
	// Half a frame, then silence.
	half := frame(append(binary.BigEndian.AppendUint16(nil, uint16(kmsg.Metadata)), make([]byte, 100)...))
	if !closedAfter(t, p.addr, half[:20]) {
		t.Fatal("a half-sent frame kept its connection open")
	}
	// Requests whose responses are never read.
	c := dialRaw(t, p.addr)
	req := frame(encodeRequest(kmsg.NewPtrApiVersionsRequest(), 3))
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		for {
			c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write(req); err != nil {
				return // Pulse gave up on this connection
			}
		}
	}()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("a client that never reads was never cut off")
	}
	cl := kgoClient(t, p.addr)
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(context.Background(), cl); err != nil {
		t.Fatalf("others are served: %v", err)
	}
}
