package kafka

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// TestRefusedBatchesStoreNothing: the batches docs/kafka.md says Pulse
// refuses get their documented error and leave the partition as it was:
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
	for _, c := range []struct {
		name  string
		batch []byte
		want  int16
	}{
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
