package tui

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// BenchmarkTailMerged20k follows a three-partition topic that receives about
// 20,000 records/s in total (four producers per partition, 17 records each
// every 10 ms), merged by commit time, and measures one render per
// delivered read: records/s the tail kept up with, renders/s, the heap and
// the process's peak RSS.
//
//	go test ./tui -run '^$' -bench TailMerged -benchtime 10s
func BenchmarkTailMerged20k(b *testing.B) {
	e := openEngine(b)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 3
	// Interval sync: the producers' offered 20,000 records/s must not be
	// held back by this shared disk's fsyncs (every-write is what
	// BenchmarkTailFollow20k runs); the tail's work is the same.
	cfg.SyncMode = engine.SyncInterval
	create(b, e, "firehose", cfg)

	ctx, cancel := context.WithCancel(context.Background())
	var produced atomic.Int64
	var wg sync.WaitGroup
	for p := 0; p < 3; p++ {
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(p, w int) {
				defer wg.Done()
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for n := 0; ; n++ {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
					recs := make([]engine.Record, 17)
					for i := range recs {
						id := n*17 + i
						recs[i] = engine.Record{
							Key:   []byte(fmt.Sprintf("sensor-%d-%d", w, id%64)),
							Value: []byte(fmt.Sprintf(`{"sensor":"s-%d","reading":%d,"temperature":%d.%d,"unit":"celsius","site":"lab-%d"}`, w, id, 15+id%20, id%10, p)),
						}
					}
					if _, err := e.Produce(ctx, "firehose", p, recs); err == nil {
						produced.Add(int64(len(recs)))
					}
				}
			}(p, w)
		}
	}
	defer func() { cancel(); wg.Wait() }()

	opts := testOptions(e)
	opts.Now = time.Now
	s := newTestTail(b, opts, "firehose", allPartitions)
	cmd := s.Update(run(b, s.Init()))
	b.ReportAllocs()
	b.ResetTimer()
	start, received := time.Now(), s.received
	startProduced := produced.Load()
	for i := 0; i < b.N; i++ {
		msg := cmd() // parks on the long-poll until an HWM moves
		cmd = s.Update(msg)
		if v := s.View(); len(v) == 0 {
			b.Fatal("empty view")
		}
		if cmd == nil {
			b.Fatalf("the follower stopped: %v", s.err)
		}
	}
	el := time.Since(start).Seconds()
	b.StopTimer()
	seen := map[int]bool{}
	for _, r := range s.recs {
		seen[r.P] = true
	}
	if b.N > 100 && len(seen) != 3 {
		b.Fatalf("the merged buffer holds records of %d partitions", len(seen))
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(produced.Load()-startProduced)/el, "produced/s")
	b.ReportMetric(float64(s.received-received)/el, "records/s")
	b.ReportMetric(float64(b.N)/el, "renders/s")
	b.ReportMetric(float64(len(s.recs)), "buffered")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
}

// BenchmarkFirstRender1000Topics opens a data dir with 1,000 topics × 4
// partitions (10 records each) and measures engine.Open + the first render
// of the topic list.
//
//	go test ./tui -run '^$' -bench FirstRender1000 -benchtime 3x
func BenchmarkFirstRender1000Topics(b *testing.B) {
	dir := b.TempDir()
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 4
	cfg.SyncMode = engine.SyncInterval // setup speed only; Open does the same work
	for t := 0; t < 1000; t++ {
		name := fmt.Sprintf("topic-%04d", t)
		create(b, e, name, cfg)
		for p := 0; p < 4; p++ {
			produce(b, e, name, p, orderRecords(t*40+p*10, 10)...)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var openDur, renderDur time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		e, err := engine.Open(engine.DefaultOptions(dir))
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		m, err := New(testOptions(e))
		if err != nil {
			b.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: testWidth, Height: testHeight})
		msgs := make(chan tea.Msg, 4)
		launched := 0
		for _, c := range m.Init()().(tea.BatchMsg) {
			if c != nil {
				launched++
				go func() { msgs <- c() }()
			}
		}
		for {
			launched--
			msg := <-msgs
			if _, ok := msg.(topicsMsg); ok {
				m.Update(msg)
				break
			}
		}
		if v := m.View(); !strings.Contains(v, "topic-0000") {
			b.Fatalf("first render lacks topic-0000:\n%s", v)
		}
		openDur += t1.Sub(t0)
		renderDur += time.Since(t1)
		b.StopTimer()
		for ; launched > 0; launched-- {
			<-msgs
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(openDur.Milliseconds())/float64(b.N), "open-ms")
	b.ReportMetric(float64(renderDur.Milliseconds())/float64(b.N), "ui-ms")
}

// BenchmarkWholeLogSearch searches 1 GiB of 1 KiB JSON records (one
// partition, codec none) for a JSON path that matches 1 in 1,000, through
// the tail's whole-log filter: MB/s of record bytes read and matched.
//
//	go test ./tui -run '^$' -bench WholeLogSearch -benchtime 1x
func BenchmarkWholeLogSearch(b *testing.B) {
	e := openEngine(b)
	cfg := engine.DefaultTopicConfig()
	cfg.Codec, cfg.SyncMode, cfg.SegmentMaxBytes = "none", engine.SyncInterval, 256<<20
	create(b, e, "logs", cfg)
	pad := strings.Repeat("x", 950)
	const total = 1 << 20 // × ~1 KiB
	for n := 0; n < total; n += 1000 {
		recs := make([]engine.Record, 1000)
		for i := range recs {
			id := n + i
			recs[i] = engine.Record{Key: []byte(fmt.Sprintf("k%d", id)), Value: []byte(fmt.Sprintf(`{"user":{"id":%d},"pad":"%s"}`, id%1000, pad))}
		}
		produce(b, e, "logs", 0, recs...)
	}
	opts := testOptions(e)
	opts.Now = time.Now
	for _, f := range []struct{ name, filter string }{
		{"jsonpath", ".user.id == 7"},
		{"key", "key:k7777"}, // k7777, k7777N, k7777NN: 111 keys
		{"text", `"id":7}`},  // the same records as the path, by substring
	} {
		b.Run(f.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s := newTestTail(b, opts, "logs", 0)
				t0 := time.Now()
				cmd := s.SubmitFilter(f.filter)
				for cmd != nil {
					cmd = s.Update(run(b, cmd))
				}
				el := time.Since(t0)
				if s.search == nil || s.search.matches < 100 || s.search.done != s.search.span {
					b.Fatalf("search: %+v", s.search)
				}
				b.ReportMetric(float64(s.search.bytes)/1e6/el.Seconds(), "MB/s")
				b.ReportMetric(float64(s.search.bytes)/(1<<30), "GiB")
				b.ReportMetric(float64(s.search.matches), "matches")
			}
		})
	}
}
