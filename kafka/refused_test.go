package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestRefusedBatchesStoreNothing: the batches docs/kafka.md says Pulse
// refuses get their documented error and leave the partition as it was:
// offset deltas that do not run 0, 1, 2... are CORRUPT_MESSAGE;
// transactional and control batches and an unknown codec are
// UNSUPPORTED_FOR_MESSAGE_FORMAT; an idempotent batch of a producer id Pulse
// cannot have handed out (0, above 2³²−1) is UNKNOWN_PRODUCER_ID.
func TestRefusedBatchesStoreNothing(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	if err := p.eng.CreateTopic("refused", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	withAttrs := func(attrs uint16, pid int64) []byte {
		b := producerBatch([]engine.Record{{Key: []byte("k"), Value: []byte("v")}}, pid, 0, 0)
		binary.BigEndian.PutUint16(b[offAttributes:], attrs)
		binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
		return b
	}
	// Offset deltas 0, 2: a record set with a hole is malformed.
	gapped := appendBatch(nil, []engine.Record{{Offset: 0, Value: []byte("a")}, {Offset: 2, Value: []byte("b")}})
	binary.BigEndian.PutUint16(gapped[offAttributes:], 0)
	binary.BigEndian.PutUint32(gapped[offCRC:], crc32.Checksum(gapped[offAttributes:], castagnoli))
	for _, c := range []struct {
		name  string
		batch []byte
		want  int16
	}{
		{"offset deltas 0, 2", gapped, errCorruptMessage},
		{"transactional", withAttrs(0x10, 7), errUnsupportedForMessageFormat},
		{"control", withAttrs(0x30, 7), errUnsupportedForMessageFormat},
		{"codec 5", withAttrs(5, -1), errUnsupportedForMessageFormat},
		{"codec 7", withAttrs(7, -1), errUnsupportedForMessageFormat},
		{"producer id 0", withAttrs(0, 0), errUnknownProducerID},
		{"producer id 2^32", withAttrs(0, math.MaxUint32+1), errUnknownProducerID},
	} {
		if got := produceRaw(t, cl, produceReq("refused", 0, c.batch)); got.ErrorCode != c.want {
			t.Errorf("%s: error %d, want %d", c.name, got.ErrorCode, c.want)
		}
	}
	info, err := p.eng.Describe("refused")
	if err != nil {
		t.Fatal(err)
	}
	if leo := info.Partitions[0].LEO; leo != 0 {
		t.Fatalf("log end %d after refused batches, want 0", leo)
	}
}

// TestCreateTopicsReplicaAssignment: CreateTopics with a replica
// assignment takes its partition count from it, and one that names a
// broker other than Pulse's (0) is INVALID_REPLICA_ASSIGNMENT and creates
// nothing, as CreatePartitions refuses it.
func TestCreateTopicsReplicaAssignment(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	create := func(name string, replicas ...[]int32) int16 {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		for i, r := range replicas {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), r
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode
	}
	if code := create("assigned", []int32{0}, []int32{0}); code != 0 {
		t.Fatalf("assignment on broker 0: error %d", code)
	}
	if info, err := p.eng.Describe("assigned"); err != nil || len(info.Partitions) != 2 {
		t.Fatalf("assigned topic: %v, %+v", err, info)
	}
	for name, replicas := range map[string][][]int32{
		"other-broker": {{1}},
		"second-one":   {{0}, {0, 2}},
		"no-replica":   {{}},
	} {
		if code := create(name, replicas...); code != errInvalidReplicaAssignment {
			t.Errorf("%s %v: error %d, want INVALID_REPLICA_ASSIGNMENT", name, replicas, code)
		}
		if _, err := p.eng.Describe(name); !errors.Is(err, engine.ErrTopicNotFound) {
			t.Errorf("%s: topic created (%v)", name, err)
		}
	}
}

// TestProducePartitionMinusOneRefusesOnlyItself: in a Produce request
// naming partition -1 and then partition 0 of a topic, -1 is
// UNKNOWN_TOPIC_OR_PARTITION and partition 0 is stored as if alone.
func TestProducePartitionMinusOneRefusesOnlyItself(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	if err := p.eng.CreateTopic("minus", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	req := produceReq("minus", -1, producerBatch([]engine.Record{{Value: []byte("to -1")}}, -1, -1, -1))
	p0 := kmsg.NewProduceRequestTopicPartition()
	p0.Partition, p0.Records = 0, producerBatch([]engine.Record{{Value: []byte("to 0")}}, -1, -1, -1)
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, p0)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Topics[0].Partitions
	if len(got) != 2 || got[0].ErrorCode != errUnknownTopicOrPartition || got[1].ErrorCode != 0 || got[1].BaseOffset != 0 {
		t.Fatalf("partitions -1 and 0: %+v", got)
	}
	res, err := p.eng.Read("minus", 0, 0, 10, 1<<20)
	recs := res.Records
	if err != nil || len(recs) != 1 || string(recs[0].Value) != "to 0" {
		t.Fatalf("partition 0 holds %v (%v), want the one record sent to it", recs, err)
	}
}

// TestInitProducerIDBumpsOnlyHandedOutIDs: InitProducerId bumps the epoch
// of a producer id Pulse handed out; one it has not handed out yet gets a
// new id instead, or the producer that is later handed that id (epoch 0)
// would be fenced by the epoch the first one was bumped to.
func TestInitProducerIDBumpsOnlyHandedOutIDs(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	if err := p.eng.CreateTopic("bump", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	initPID := func(id int64, epoch int16) (int64, int16) {
		t.Helper()
		req := kmsg.NewPtrInitProducerIDRequest()
		req.ProducerID, req.ProducerEpoch = id, epoch
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("InitProducerId(%d, %d): %v %v", id, epoch, resp, err)
		}
		return resp.ProducerID, resp.ProducerEpoch
	}
	produce := func(id int64, epoch int16) int16 {
		t.Helper()
		return produceRaw(t, cl, produceReq("bump", 0, producerBatch([]engine.Record{{Value: []byte("v")}}, id, epoch, 0))).ErrorCode
	}
	const claimed = 50 // an id this data dir has not handed out yet
	id, epoch := initPID(claimed, 0)
	if code := produce(id, epoch); code != 0 {
		t.Fatalf("produce as the answered %d/%d: error %d", id, epoch, code)
	}
	for {
		nid, nepoch := initPID(-1, -1)
		if nid >= claimed {
			if code := produce(nid, nepoch); code != 0 {
				t.Fatalf("producer %d/%d, handed out after %d/%d was answered: error %d", nid, nepoch, id, epoch, code)
			}
			break
		}
	}
	// A handed-out id is bumped.
	if bid, bepoch := initPID(id, epoch); bid != id || bepoch != epoch+1 {
		t.Fatalf("bump of %d/%d answered %d/%d", id, epoch, bid, bepoch)
	}
}
