package tui

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/engine"
)

// peakRSS returns the process's peak resident set (VmHWM) in bytes, or 0
// where /proc is missing.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkTailFollow20k follows a partition that receives about 20,000
// records/s (four producers, 50 records each every 10 ms) and measures one
// render per delivered read: records/s the tail kept up with, renders/s,
// the heap the tail holds and the process's peak RSS.
//
//	go test ./tui -run '^$' -bench TailFollow -benchtime 10s
func BenchmarkTailFollow20k(b *testing.B) {
	e := openEngine(b)
	create(b, e, "firehose", engine.DefaultTopicConfig())

	ctx, cancel := context.WithCancel(context.Background())
	var produced atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				recs := make([]engine.Record, 50)
				for i := range recs {
					id := n*50 + i
					recs[i] = engine.Record{
						Key:   []byte(fmt.Sprintf("sensor-%d-%d", w, id%64)),
						Value: []byte(fmt.Sprintf(`{"sensor":"s-%d","reading":%d,"temperature":%d.%d,"unit":"celsius","site":"lab-%d"}`, w, id, 15+id%20, id%10, id%4)),
					}
				}
				if _, err := e.Produce(ctx, "firehose", 0, recs); err == nil {
					produced.Add(int64(len(recs)))
				}
			}
		}(w)
	}
	defer func() { cancel(); wg.Wait() }()

	opts := testOptions(e)
	opts.Now = time.Now
	s := newTestTail(b, opts, "firehose", 0)
	cmd := s.Update(run(b, s.Init()))
	b.ReportAllocs()
	b.ResetTimer()
	start, received := time.Now(), s.received
	startProduced := produced.Load()
	for i := 0; i < b.N; i++ {
		msg := cmd() // parks on the long-poll until the HWM moves
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
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(produced.Load()-startProduced)/el, "produced/s")
	b.ReportMetric(float64(s.received-received)/el, "records/s")
	b.ReportMetric(float64(b.N)/el, "renders/s")
	b.ReportMetric(float64(len(s.recs)), "buffered")
	b.ReportMetric(float64(s.bytes)/(1<<10), "buffer-KiB")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MiB")
}

// BenchmarkOpenToFirstRender opens a data dir with 100 topics × 4
// partitions and measures engine.Open + the first render of the topic list.
//
//	go test ./tui -run '^$' -bench OpenToFirstRender -benchtime 20x
func BenchmarkOpenToFirstRender(b *testing.B) {
	dir := b.TempDir()
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 4
	for t := 0; t < 100; t++ {
		name := fmt.Sprintf("topic-%03d", t)
		create(b, e, name, cfg)
		for p := 0; p < 4; p++ {
			produce(b, e, name, p, orderRecords(t*100+p*25, 25)...)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, err := engine.Open(engine.DefaultOptions(dir))
		if err != nil {
			b.Fatal(err)
		}
		opts := testOptions(e)
		m, err := New(opts)
		if err != nil {
			b.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: testWidth, Height: testHeight})
		// The first screen is drawn when the topic list arrives; the
		// compression ratios follow in their own command.
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
		if v := m.View(); !strings.Contains(v, "topic-000") {
			b.Fatalf("first render lacks topic-000:\n%s", v)
		}
		b.StopTimer()
		for ; launched > 0; launched-- { // let the ratio command finish before closing
			<-msgs
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
