package wsapi

import (
	"context"
	"fmt"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
	"strings"
	"sync"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// benchRecords makes n records of ~1 KiB JSON-like values.
func benchRecords(n int) []wire.RecordIn {
	recs := make([]wire.RecordIn, n)
	for i := range recs {
		k := fmt.Sprintf("k%d", i%1000)
		recs[i] = wire.RecordIn{Key: &k, Value: fmt.Appendf(nil, `{"id":%d,"type":"order.created","pad":"%s"}`, i, strings.Repeat("x", 950))}
	}
	return recs
}

// BenchmarkProduceBatch100 produces batches of 100 ~1 KiB records over 4
// websocket connections to a topic in sync mode interval, codec none.
func BenchmarkProduceBatch100(b *testing.B) { benchProduce(b, false) }

// BenchmarkProduceBinary100 is BenchmarkProduceBatch100 with binary produce
// frames.
func BenchmarkProduceBinary100(b *testing.B) { benchProduce(b, true) }

func benchProduce(b *testing.B, binary bool) {
	ts := startServer(b, DefaultOptions())
	ctx := context.Background()
	admin := dialClient(b, ts.addr)
	if _, err := admin.CreateTopic(ctx, "bench", wire.TopicConfig{Codec: "none", SyncMode: "interval"}); err != nil {
		b.Fatal(err)
	}
	recs := benchRecords(100)
	bin := make([]engine.Record, len(recs))
	for i, r := range recs {
		bin[i] = engine.Record{Key: []byte(*r.Key), Value: r.Value}
	}
	const conns, window = 4, 16
	clients := make([]*wsclient.Client, conns)
	for i := range clients {
		clients[i] = dialClient(b, ts.addr)
	}
	b.SetBytes(int64(100 * len(recs[0].Value)))
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + conns - 1) / conns
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inflight []*wsclient.Pending
			for sent := 0; sent < per || len(inflight) > 0; {
				if sent < per && len(inflight) < window {
					var p *wsclient.Pending
					var err error
					if binary {
						p, err = c.ProduceBytesAsync("bench", 0, bin)
					} else {
						p, err = c.ProduceAsync("bench", 0, recs)
					}
					if err != nil {
						b.Error(err)
						return
					}
					inflight = append(inflight, p)
					sent++
					continue
				}
				if _, err := inflight[0].Wait(ctx); err != nil {
					b.Error(err)
					return
				}
				inflight = inflight[1:]
			}
		}()
	}
	wg.Wait()
}

// BenchmarkEngineProduce100 is the same load straight on the engine, for
// comparison.
func BenchmarkEngineProduce100(b *testing.B) {
	e, _ := openEngine(b)
	if err := e.CreateTopic("bench", engine.TopicConfig{Codec: "none", SyncMode: engine.SyncInterval}); err != nil {
		b.Fatal(err)
	}
	in := benchRecords(100)
	recs := make([]engine.Record, len(in))
	for i, r := range in {
		recs[i] = engine.Record{Key: []byte(*r.Key), Value: r.Value}
	}
	b.SetBytes(int64(100 * len(recs[0].Value)))
	b.ResetTimer()
	var wg sync.WaitGroup
	const conns = 4
	per := (b.N + conns - 1) / conns
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if _, err := e.Produce(context.Background(), "bench", 0, recs); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkProduceSingle produces single-record requests of ~1 KiB from one
// connection with 256 in flight (pulse bench's single step), to a topic in
// sync mode interval, codec none.
func BenchmarkProduceSingle(b *testing.B) {
	ts := startServer(b, DefaultOptions())
	ctx := context.Background()
	c := dialClient(b, ts.addr)
	if _, err := c.CreateTopic(ctx, "bench", wire.TopicConfig{Codec: "none", SyncMode: "interval"}); err != nil {
		b.Fatal(err)
	}
	recs := benchRecords(1000)
	b.SetBytes(int64(len(recs[0].Value)))
	b.ResetTimer()
	var inflight []*wsclient.Pending
	for i := 0; i < b.N || len(inflight) > 0; {
		if i < b.N && len(inflight) < 256 {
			p, err := c.ProduceRecordAsync("bench", 0, recs[i%len(recs)])
			if err != nil {
				b.Fatal(err)
			}
			inflight = append(inflight, p)
			i++
			continue
		}
		if _, err := inflight[0].Wait(ctx); err != nil {
			b.Fatal(err)
		}
		inflight = inflight[1:]
	}
}
