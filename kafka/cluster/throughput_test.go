package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestThroughputFigure measures, in one run on one kfake cluster, records
// per second produced over Pulse's websocket API to the cluster, and
// produced by franz-go directly, with the same batches and the same number
// of batches in flight, and prints the ratio. A figure for docs/cluster.md,
// not an assertion: it runs only with PULSE_LONG=1.
func TestThroughputFigure(t *testing.T) {
	if os.Getenv("PULSE_LONG") == "" {
		t.Skip("a throughput figure: set PULSE_LONG=1")
	}
	const (
		total    = 200_000
		batch    = 500
		inflight = 8
		valueLen = 100
	)
	addr := bootstrap(t)
	kc, adm := kclient(t, addr, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)), kgo.ProducerLinger(0))
	createTopic(t, adm, "direct", 4)
	createTopic(t, adm, "via-pulse", 4)
	c := clusterWS(t, addr)
	value := make([]byte, valueLen)
	for i := range value {
		value[i] = byte('a' + i%26)
	}

	// Through Pulse: binary produce frames of batch records, inflight of
	// them outstanding, each acked only after the cluster acked (acks=all).
	recs := make([]engine.Record, batch)
	for i := range recs {
		recs[i] = engine.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: value}
	}
	ctx := testCtx(t)
	began := time.Now()
	var pend []*wsclient.Pending
	for sent := 0; sent < total; sent += batch {
		p, err := c.ProduceBytesAsync("via-pulse", -1, recs)
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, p)
		if len(pend) == inflight {
			if _, err := pend[0].Wait(ctx); err != nil {
				t.Fatal(err)
			}
			pend = pend[1:]
		}
	}
	for _, p := range pend {
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	viaPulse := float64(total) / time.Since(began).Seconds()

	// Directly: franz-go, the same batches, inflight of them outstanding.
	krecs := func() []*kgo.Record {
		out := make([]*kgo.Record, batch)
		for i := range out {
			out[i] = &kgo.Record{Topic: "direct", Key: []byte(fmt.Sprintf("k%d", i)), Value: value}
		}
		return out
	}
	began = time.Now()
	done := make(chan error, inflight)
	outstanding := 0
	for sent := 0; sent < total; sent += batch {
		if outstanding == inflight {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			outstanding--
		}
		rs := krecs()
		outstanding++
		go func() { done <- kc.ProduceSync(ctx, rs...).FirstErr() }()
	}
	for ; outstanding > 0; outstanding-- {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	direct := float64(total) / time.Since(began).Seconds()

	ends, err := adm.ListEndOffsets(context.Background(), "direct", "via-pulse")
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"direct", "via-pulse"} {
		var n int64
		for _, o := range ends[topic] {
			n += o.Offset
		}
		if n != total {
			t.Fatalf("%s holds %d records, want %d", topic, n, total)
		}
	}
	t.Logf("%d records of %d B, batches of %d, %d in flight: via Pulse %.0f rec/s, franz-go direct %.0f rec/s, ratio %.2f",
		total, valueLen, batch, inflight, viaPulse, direct, viaPulse/direct)
	fmt.Printf("FIGURE websocket-to-cluster/direct: %.2f (via pulse %.0f rec/s, direct %.0f rec/s)\n", viaPulse/direct, viaPulse, direct)
}
