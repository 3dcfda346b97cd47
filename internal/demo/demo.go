// Package demo is the data of `pulse --demo`: three topics (orders,
// pageviews, sensors) with configurations that show retention and
// compaction within minutes, and a producer that keeps filling them.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pulselog/pulse/engine"
)

// DefaultRate is how many records per second `pulse --demo` produces,
// spread over its topics.
const DefaultRate = 600

// demoTick is how often the demo producer sends a batch to each topic.
const demoTick = 100 * time.Millisecond

// demoTopic is one topic of the demo and the share of the rate it gets.
type demoTopic struct {
	name  string
	cfg   engine.TopicConfig
	share float64
	event func(r *rand.Rand, n int64) (key string, value any, headers []engine.Header)
}

func demoTopics() []demoTopic {
	orders := engine.DefaultTopicConfig()
	orders.Partitions = 3

	pageviews := engine.DefaultTopicConfig()
	pageviews.Partitions = 2
	// Small uncompressed segments: at DefaultRate each partition seals one
	// about every 35 s (some 190-byte records, 165 a second), and each
	// expires a couple of minutes later, while you watch.
	pageviews.Codec = "none"
	pageviews.SegmentMaxBytes = 1 << 20
	pageviews.RetentionMaxAge = 2 * time.Minute
	pageviews.SyncMode = engine.SyncInterval

	sensors := engine.DefaultTopicConfig()
	sensors.Cleanup = engine.CleanupCompact // the newest reading of each sensor survives
	sensors.Codec = "none"                  // so segments seal, and get compacted, within a minute
	sensors.SegmentMaxBytes = 1 << 20

	return []demoTopic{
		{name: "orders", cfg: orders, share: 0.1, event: orderEvent},
		{name: "pageviews", cfg: pageviews, share: 0.55, event: pageviewEvent},
		{name: "sensors", cfg: sensors, share: 0.35, event: sensorEvent},
	}
}

// Word lists of the demo events.
const (
	demoProducts = "espresso,flat white,croissant,bagel,matcha latte,granola,cold brew,muffin"
	demoPages    = "/,/pricing,/docs,/docs/quickstart,/blog/event-logs,/login,/signup,/dashboard"
	demoAgents   = "firefox,chrome,safari,curl"
	demoStatuses = "created,paid,paid,paid,shipped,cancelled"
)

// pick returns one of the comma-separated words of list.
func pick(r *rand.Rand, list string) string {
	words := strings.Split(list, ",")
	return words[r.IntN(len(words))]
}

func orderEvent(r *rand.Rand, n int64) (string, any, []engine.Header) {
	customer := fmt.Sprintf("cust-%04d", r.IntN(500))
	items := make([]map[string]any, 1+r.IntN(3))
	total := 0.0
	for i := range items {
		price := float64(200+r.IntN(900)) / 100
		qty := 1 + r.IntN(3)
		total += price * float64(qty)
		items[i] = map[string]any{"sku": pick(r, demoProducts), "qty": qty, "price": price}
	}
	return customer, map[string]any{
		"order_id": fmt.Sprintf("ord-%08d", n),
		"customer": customer,
		"status":   pick(r, demoStatuses),
		"items":    items,
		"total":    float64(int(total*100)) / 100,
		"currency": "EUR",
	}, []engine.Header{{Key: "content-type", Value: []byte("application/json")}, {Key: "source", Value: []byte("checkout")}}
}

func pageviewEvent(r *rand.Rand, n int64) (string, any, []engine.Header) {
	session := fmt.Sprintf("sess-%05x", r.IntN(1<<16))
	return session, map[string]any{
		"session":  session,
		"path":     pick(r, demoPages),
		"agent":    pick(r, demoAgents),
		"duration": r.IntN(30000),
		"referrer": []any{nil, "https://news.ycombinator.com", "https://duckduckgo.com"}[r.IntN(3)],
		"seq":      n,
	}, []engine.Header{{Key: "content-type", Value: []byte("application/json")}}
}

// sensorEvent reads one of 40 busy sensors most of the time and one of 5000
// quiet ones otherwise, so compaction leaves sparse segments holding the
// quiet sensors' last readings; now and then a quiet sensor is
// decommissioned (a tombstone).
func sensorEvent(r *rand.Rand, n int64) (string, any, []engine.Header) {
	id := fmt.Sprintf("sensor-%02d", r.IntN(40))
	if r.IntN(10) == 0 {
		id = fmt.Sprintf("probe-%04d", r.IntN(5000))
		if r.IntN(20) == 0 {
			return id, nil, []engine.Header{{Key: "reason", Value: []byte("decommissioned")}}
		}
	}
	return id, map[string]any{
		"sensor":      id,
		"temperature": float64(180+r.IntN(80)) / 10,
		"humidity":    float64(300+r.IntN(400)) / 10,
		"battery":     r.IntN(101),
		"reading":     n,
	}, nil
}

// Seed creates the demo topics (keeping those that exist).
func Seed(ctx context.Context, e *engine.Engine) error {
	for _, t := range demoTopics() {
		if err := e.CreateTopic(t.name, t.cfg); err != nil && !errors.Is(err, engine.ErrTopicExists) {
			return fmt.Errorf("create %s: %w", t.name, err)
		}
	}
	return nil
}

// Run produces rate records per second over the demo topics until ctx
// ends, and moves a consumer cursor along so lag shows up.
func Run(ctx context.Context, e *engine.Engine, rate int) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
	topics := demoTopics()
	carry := make([]float64, len(topics))
	var n int64
	tick := time.NewTicker(demoTick)
	defer tick.Stop()
	for ticks := 0; ; ticks++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for i, t := range topics {
			carry[i] += float64(rate) * t.share * demoTick.Seconds()
			count := int(carry[i])
			carry[i] -= float64(count)
			if count == 0 {
				continue
			}
			recs := make([]engine.Record, count)
			for j := range recs {
				n++
				key, v, hs := t.event(r, n)
				var val []byte // nil: a tombstone
				if v != nil {
					val, _ = json.Marshal(v)
				}
				recs[j] = engine.Record{Key: []byte(key), Value: val, Headers: hs}
			}
			// A produce that fails (closing, disk full) is retried on the next
			// tick; the demo never stops the UI.
			_, _ = e.Produce(ctx, t.name, -1, recs)
		}
		if ticks%20 == 0 {
			demoCursors(e)
		}
	}
}

// demoCursors commits a "billing" consumer on orders that trails the HWM,
// so the partitions screen has a consumer with lag to show.
func demoCursors(e *engine.Engine) {
	info, err := e.Describe("orders")
	if err != nil {
		return
	}
	for _, p := range info.Partitions {
		_ = e.CommitCursor("billing", "orders", p.Partition, max(p.LogStart, p.HWM-int64(rand.IntN(40))))
		_ = e.CommitCursor("analytics", "orders", p.Partition, max(p.LogStart, p.HWM/2))
	}
}
