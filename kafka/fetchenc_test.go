package kafka

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestFetchResponseEncoding: fetchResponse.AppendTo writes, for every
// served Fetch version, exactly the bytes kmsg writes for the same response
// with each partition's records encoded into its RecordBatches; kmsg reads
// them back; a response with something the direct encoder does not write
// goes through kmsg.
func TestFetchResponseEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	randRecords := func(base int64) []engine.Record {
		n := rng.IntN(40)
		if n == 0 {
			return nil
		}
		recs := make([]engine.Record, n)
		ts := int64(1_700_000_000_000)
		for i := range recs {
			if rng.IntN(5) == 0 {
				ts += int64(rng.IntN(3))
			}
			r := engine.Record{Offset: base + int64(i), Timestamp: ts}
			if rng.IntN(3) > 0 {
				r.Key = fmt.Appendf(nil, "key-%d", rng.IntN(1000))
			}
			if rng.IntN(8) > 0 {
				r.Value = bytes.Repeat([]byte{byte(i)}, rng.IntN(300))
			}
			for range rng.IntN(3) {
				h := engine.Header{Key: fmt.Sprintf("h%d", rng.IntN(9))}
				if rng.IntN(4) > 0 {
					h.Value = []byte("v")
				}
				r.Headers = append(r.Headers, h)
			}
			recs[i] = r
		}
		return recs
	}
	for version := int16(4); version <= 12; version++ {
		for round := range 20 {
			fr := &fetchResponse{FetchResponse: kmsg.NewPtrFetchResponse()}
			fr.Version = version
			fr.ThrottleMillis = int32(round)
			fr.ErrorCode = int16(round % 2)
			for ti := range rng.IntN(4) {
				rt := kmsg.NewFetchResponseTopic()
				rt.Topic = fmt.Sprintf("topic-%d-%s", ti, bytes.Repeat([]byte("x"), rng.IntN(20)))
				var recsOf [][]engine.Record
				for pi := range rng.IntN(5) {
					rp := kmsg.NewFetchResponseTopicPartition()
					rp.Partition = int32(pi)
					rp.ErrorCode = int16(rng.IntN(2))
					rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = rng.Int64N(1<<40), rng.Int64N(1<<40), rng.Int64N(1<<20)
					var recs []engine.Record
					switch rng.IntN(3) {
					case 0:
						rp.RecordBatches = []byte{}
					case 1:
						recs = randRecords(rng.Int64N(1 << 40))
						if recs == nil {
							rp.RecordBatches = []byte{}
						}
					}
					rt.Partitions = append(rt.Partitions, rp)
					recsOf = append(recsOf, recs)
				}
				fr.Topics = append(fr.Topics, rt)
				fr.records = append(fr.records, recsOf)
			}
			// kmsg's own encoding of the same response.
			ref := *fr.FetchResponse
			ref.Topics = nil
			for ti, t := range fr.Topics {
				rt := t
				rt.Partitions = append([]kmsg.FetchResponseTopicPartition(nil), t.Partitions...)
				for pi := range rt.Partitions {
					if recs := fr.records[ti][pi]; recs != nil {
						rt.Partitions[pi].RecordBatches = appendBatches(nil, recs)
					}
				}
				ref.Topics = append(ref.Topics, rt)
			}
			want := ref.AppendTo(nil)
			got := fr.AppendTo(nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d round %d: direct encoding differs from kmsg's (%d vs %d bytes)", version, round, len(got), len(want))
			}
			back := kmsg.NewPtrFetchResponse()
			back.Version = version
			if err := back.ReadFrom(got); err != nil {
				t.Fatalf("v%d round %d: kmsg cannot read it: %v", version, round, err)
			}
		}
	}

	// Not plain: aborted transactions, a tagged field. kmsg encodes them.
	for _, mod := range []func(p *kmsg.FetchResponseTopicPartition){
		func(p *kmsg.FetchResponseTopicPartition) {
			p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 1, FirstOffset: 2}}
		},
		func(p *kmsg.FetchResponseTopicPartition) { p.CurrentLeader.LeaderID = 0 },
	} {
		recs := randRecords(5)
		for recs == nil {
			recs = randRecords(5)
		}
		fr := &fetchResponse{FetchResponse: kmsg.NewPtrFetchResponse(), records: [][][]engine.Record{{recs}}}
		fr.Version = 12
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchResponseTopicPartition()
		mod(&rp)
		rt.Partitions = append(rt.Partitions, rp)
		fr.Topics = append(fr.Topics, rt)
		ref := kmsg.NewPtrFetchResponse()
		ref.Version = 12
		refT := rt
		refT.Partitions = []kmsg.FetchResponseTopicPartition{rp}
		refT.Partitions[0].RecordBatches = appendBatches(nil, recs)
		ref.Topics = []kmsg.FetchResponseTopic{refT}
		if got, want := fr.AppendTo(nil), ref.AppendTo(nil); !bytes.Equal(got, want) {
			t.Fatalf("a response kmsg must encode differs (%d vs %d bytes)", len(got), len(want))
		}
	}
}
