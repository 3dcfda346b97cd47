//go:build linux

package wsapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/loopfs"
)

// A full disk under produces that span partitions: every reply says
// exactly what was stored. Each record that can be read was acked (in a
// success reply, or in the acks of an error reply), and each ack names a
// record that can be read, with its value. Three requests in four are one
// small record for partition 0 then 29 large ones for partition 1 (so
// that the small one usually still fits when the large ones no longer
// do: an error reply naming a stored record); the others spread keyed
// records over the three partitions in one engine call.
func TestFullDiskProduceRepliesNameWhatWasStored(t *testing.T) {
	e, ts := fullDiskServer(t, 3)
	ts.eng = e
	c := dialRaw(t, ts.addr, "/v1/ws", nil)

	acked := map[[2]int64]string{}
	failures, partial := 0, 0
	for req := 0; failures < 5 && req < 1000; req++ {
		var recs []any
		var values []string
		for i := range 30 {
			v := fmt.Sprintf("r%d-%d-%s", req, i, strings.Repeat("x", 4000))
			rec := map[string]any{"key": fmt.Sprintf("k%d", i)}
			if req%4 != 0 {
				rec["partition"] = 1
				if i == 0 {
					v, rec["partition"] = fmt.Sprintf("small-%d", req), 0
				}
			}
			rec["value"] = v
			values = append(values, v)
			recs = append(recs, rec)
		}
		r := c.call(req, map[string]any{"op": "produce", "topic": "full", "records": recs})
		acks, _ := r["acks"].([]any)
		if errCode(r) != "" {
			failures++
			if acks != nil {
				partial++
			}
		}
		if acks != nil && len(acks) != len(recs) {
			t.Fatalf("request %d: %d acks for %d records: %v", req, len(acks), len(recs), r["error"])
		}
		for i, a := range acks {
			if a == nil {
				continue
			}
			m := a.(map[string]any)
			acked[[2]int64{num(t, m, "partition"), num(t, m, "offset")}] = values[i]
		}
	}
	if failures == 0 {
		t.Fatal("the disk never filled")
	}
	stored := storedRecords(t, e, "full", 3)
	for k, v := range stored {
		if acked[k] != v {
			t.Errorf("record %v is stored but was never acked", k)
		}
	}
	for k := range acked {
		if _, ok := stored[k]; !ok {
			t.Errorf("record %v was acked but cannot be read", k)
		}
	}
	t.Logf("%d records acked and stored; %d error replies, %d of them naming records that were stored", len(acked), failures, partial)
}

// A full disk under produces whose records name their partitions out of
// order (one small record for partition 1, one for partition 0, then large
// ones for partition 1): the records of one partition are stored together
// or not at all, wherever they stand in the request.
func TestFullDiskPartitionStoredWhole(t *testing.T) {
	_, ts := fullDiskServer(t, 2)
	c := dialRaw(t, ts.addr, "/v1/ws", nil)

	failures := 0
	for req := 0; failures < 5 && req < 1000; req++ {
		var recs []any
		parts := []int64{1, 0}
		recs = append(recs, map[string]any{"partition": 1, "value": fmt.Sprintf("small-%d-1", req)},
			map[string]any{"partition": 0, "value": fmt.Sprintf("small-%d-0", req)})
		for i := range 20 {
			recs = append(recs, map[string]any{"partition": 1, "value": fmt.Sprintf("r%d-%d-%s", req, i, strings.Repeat("x", 4000))})
			parts = append(parts, 1)
		}
		r := c.call(req, map[string]any{"op": "produce", "topic": "full", "records": recs})
		if errCode(r) == "" {
			continue
		}
		failures++
		acks, _ := r["acks"].([]any)
		if acks == nil {
			continue
		}
		stored := map[int64][2]int{} // partition: records stored, not stored
		for i, a := range acks {
			n := stored[parts[i]]
			if a == nil {
				n[1]++
			} else {
				n[0]++
			}
			stored[parts[i]] = n
		}
		for p, n := range stored {
			if n[0] > 0 && n[1] > 0 {
				t.Errorf("request %d: partition %d stored %d of its %d records: %v", req, p, n[0], n[0]+n[1], r["error"])
			}
		}
	}
	if failures == 0 {
		t.Fatal("the disk never filled")
	}
}

// fullDiskServer serves an engine on a 6 MiB loop-device filesystem with
// one topic "full" of partitions partitions (codec none, 1 MiB segments).
func fullDiskServer(t *testing.T, partitions int) (*engine.Engine, *testServer) {
	t.Helper()
	dir := loopfs.Mount(t, 6)
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions, cfg.Codec, cfg.SegmentMaxBytes = partitions, "none", 1<<20
	if err := e.CreateTopic("full", cfg); err != nil {
		t.Fatal(err)
	}
	return e, serveBackend(t, e, dir, DefaultOptions())
}
