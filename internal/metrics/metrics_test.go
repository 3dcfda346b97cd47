package metrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hangGuard bounds blocking reads so that a bug fails instead of hanging;
// nothing here is expected to take a noticeable part of it.
const hangGuard = 30 * time.Second

// The metrics every scrape must show, as docs/http.md lists them.
var documented = []string{
	"pulse_produced_records_total", "pulse_produced_bytes_total",
	"pulse_read_records_total", "pulse_read_bytes_total",
	"pulse_produce_request_duration_seconds", "pulse_fetch_request_duration_seconds",
	"pulse_fsync_duration_seconds", "pulse_commit_batch_records", "pulse_commit_batch_appends",
	"pulse_partition_high_watermark", "pulse_partition_log_end_offset", "pulse_partition_log_start_offset",
	"pulse_partition_hidden_tail_records", "pulse_partition_size_bytes", "pulse_partition_segments",
	"pulse_partition_degraded", "pulse_partition_failed", "pulse_partition_skipped_records", "pulse_compaction_dirty_ratio",
	"pulse_consumer_lag_records", "pulse_consumer_offset",
	"pulse_open_connections", "pulse_slow_consumers_closed_total",
	"pulse_recovery_partitions", "pulse_recovery_truncated_bytes", "pulse_recovery_corrupt_ranges",
	"pulse_recovery_indexes_rebuilt", "pulse_recovery_hidden_tail_records", "pulse_recovery_seconds",
	"pulse_degraded_partitions", "pulse_open_problems",
	"pulse_retention_deleted_segments_total", "pulse_retention_deleted_bytes_total", "pulse_retention_deleted_records_total",
	"pulse_compaction_runs_total", "pulse_compaction_compacted_runs_total", "pulse_compaction_segments_rewritten_total",
	"pulse_compaction_segments_deleted_total", "pulse_compaction_records_dropped_total",
	"pulse_compaction_tombstones_dropped_total", "pulse_compaction_bytes_reclaimed_total",
}

// allowedLabels bounds the label cardinality: no label names a record, a
// connection or a client.
var allowedLabels = map[string]bool{"topic": true, "partition": true, "consumer": true, "api": true, "path": true, "outcome": true, "reason": true}

func openEngine(t *testing.T, dir string, m *Metrics) *engine.Engine {
	t.Helper()
	o := engine.DefaultOptions(dir)
	o.RetentionInterval, o.CompactionInterval = 0, 0 // passes run by hand
	if m != nil {
		o.Observer = m
	}
	e, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func produce(t *testing.T, e *engine.Engine, topic string, recs ...engine.Record) {
	t.Helper()
	if _, err := e.Produce(context.Background(), topic, 0, recs); err != nil {
		t.Fatal(err)
	}
}

// damage prepares a data dir whose next open has work to do: a torn tail
// of 100 bytes on "orders", and a corrupt batch with valid batches after it
// on "broken" (which opens degraded).
func damage(t *testing.T, dir string) {
	e := openEngine(t, dir, nil)
	for _, c := range []struct{ name string }{{"orders"}, {"broken"}} {
		if err := e.CreateTopic(c.name, engine.TopicConfig{Codec: "none"}); err != nil {
			t.Fatal(err)
		}
	}
	produce(t, e, "orders", engine.Record{Value: []byte(`{"n":0}`)})
	for i := range 3 {
		produce(t, e, "broken", engine.Record{Value: bytes.Repeat([]byte{byte('a' + i)}, 64)})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "topics", "orders", "p00000", "00000000000000000000.log")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{0xEE}, 100))
	f.Close()
	broken := filepath.Join(dir, "topics", "broken", "p00000", "00000000000000000000.log")
	b, err := os.ReadFile(broken)
	if err != nil {
		t.Fatal(err)
	}
	b[60] ^= 0xFF // inside the first batch's records: its CRC no longer matches
	if err := os.WriteFile(broken, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Without its snapshot the partition is scanned in full at open.
	if err := os.Remove(filepath.Join(filepath.Dir(broken), "snapshot")); err != nil {
		t.Fatal(err)
	}
}

// TestMetricsAfterTraffic drives a real server (HTTP, websocket, an event
// stream, retention and compaction passes, a recovery with work to do) and
// parses /metrics with the Prometheus text parser.
func TestMetricsAfterTraffic(t *testing.T) {
	dir := t.TempDir()
	damage(t, dir)

	m := New()
	e := openEngine(t, dir, m)
	defer e.Close()
	opts := wsapi.DefaultOptions()
	opts.Metrics = m.Handler()
	srv := wsapi.New(m.Wrap(e), opts)
	m.Watch(e, ServerConnections(srv))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		srv.Shutdown(ctx)
		<-served
	}()
	base := "http://" + l.Addr().String()
	hc := &http.Client{Timeout: hangGuard}

	// 9 records over HTTP (offsets 1..9 of orders: offset 0 survived the
	// torn tail), 5 over the websocket.
	var body strings.Builder
	body.WriteString("[")
	for i := 1; i <= 9; i++ {
		if i > 1 {
			body.WriteString(",")
		}
		fmt.Fprintf(&body, `{"value":{"n":%d}}`, i)
	}
	body.WriteString("]")
	resp, err := hc.Post(base+"/v1/topics/orders/records", "application/json", strings.NewReader(body.String()))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST: %v %v", resp, err)
	}
	resp.Body.Close()

	ws, _, err := websocket.DefaultDialer.Dial("ws://"+l.Addr().String()+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(hangGuard))
	call := func(req string) map[string]any {
		t.Helper()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		var id map[string]any
		json.Unmarshal([]byte(req), &id)
		for {
			_, b, err := ws.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			var msg map[string]any
			json.Unmarshal(b, &msg)
			if msg["id"] == id["id"] {
				return msg
			}
		}
	}
	r := call(`{"op":"produce","id":1,"topic":"orders","records":[{"value":"a"},{"value":"b"},{"value":"c"},{"value":"d"},{"value":"e"}]}`)
	if r["error"] != nil {
		t.Fatalf("produce: %v", r)
	}
	if r := call(`{"op":"subscribe","id":2,"topic":"orders","from":"earliest","consumer":"billing"}`); r["error"] != nil {
		t.Fatalf("subscribe: %v", r)
	}
	if r := call(`{"op":"commit","id":3,"consumer":"billing","topic":"orders","partition":0,"offset":3}`); r["error"] != nil {
		t.Fatalf("commit: %v", r)
	}

	// An event stream, open while we scrape.
	sse, err := hc.Get(base + "/v1/topics/orders/events?from=earliest")
	if err != nil || sse.StatusCode != 200 {
		t.Fatalf("events: %v %v", sse, err)
	}
	defer sse.Body.Close()
	sc := bufio.NewScanner(sse.Body)
	for sc.Scan() && sc.Text() != "id: 0/14" {
	}

	// Retention by size and a compaction, on topics of 1 MiB segments.
	if err := e.CreateTopic("logs", engine.TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("kv", engine.TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20, Cleanup: engine.CleanupCompact}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		recs := make([]engine.Record, 100)
		for j := range recs {
			recs[j] = engine.Record{Key: []byte(fmt.Sprintf("k%d", j%50)), Value: make([]byte, 1000)}
		}
		produce(t, e, "logs", recs...)
		produce(t, e, "kv", recs...)
	}
	if err := e.AlterTopic("logs", engine.TopicConfig{Codec: "none", SegmentMaxBytes: 1 << 20, RetentionMaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := e.RunRetention("logs"); err != nil {
		t.Fatal(err)
	}
	if err := e.RunCompaction("kv"); err != nil {
		t.Fatal(err)
	}

	resp, err = hc.Get(base + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %v %v", resp, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}

	for _, name := range documented {
		if fams[name] == nil || len(fams[name].Metric) == 0 {
			t.Errorf("metric %s missing", name)
		}
	}
	for name, f := range fams {
		if !strings.HasPrefix(name, "pulse_") {
			continue
		}
		for _, mt := range f.Metric {
			for _, lp := range mt.Label {
				if !allowedLabels[lp.GetName()] {
					t.Errorf("%s has label %q", name, lp.GetName())
				}
			}
		}
	}

	get := func(name string, labels ...string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no metric %s", name)
		}
	next:
		for _, mt := range f.Metric {
			have := map[string]string{}
			for _, lp := range mt.Label {
				have[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue next
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return mt.Counter.GetValue()
			case dto.MetricType_GAUGE:
				return mt.Gauge.GetValue()
			case dto.MetricType_HISTOGRAM:
				return float64(mt.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	check := func(what string, got float64, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s = %v", what, got)
		}
	}
	orders := []string{"topic", "orders", "partition", "0"}
	v := get("pulse_produced_records_total", "topic", "orders")
	check("produced records of orders", v, v == 14)
	v = get("pulse_produced_bytes_total", "topic", "orders")
	check("produced bytes of orders", v, v == float64(9*len(`{"n":1}`)+5))
	v = get("pulse_read_records_total", "topic", "orders")
	check("read records of orders (subscription and event stream)", v, v >= 2*15)
	v = get("pulse_read_bytes_total", "topic", "orders")
	check("read bytes of orders", v, v > 0)
	for _, h := range []string{"pulse_produce_request_duration_seconds", "pulse_fetch_request_duration_seconds", "pulse_fsync_duration_seconds", "pulse_commit_batch_records", "pulse_commit_batch_appends"} {
		v = get(h)
		check(h+" count", v, v >= 2)
	}
	v = get("pulse_partition_high_watermark", orders...)
	check("HWM of orders", v, v == 15)
	v = get("pulse_partition_log_end_offset", orders...)
	check("LEO of orders", v, v == 15)
	v = get("pulse_partition_log_start_offset", "topic", "logs", "partition", "0")
	check("log start of logs after retention", v, v > 0)
	v = get("pulse_consumer_lag_records", "consumer", "billing", "topic", "orders", "partition", "0")
	check("lag of billing", v, v == 12)
	v = get("pulse_consumer_offset", "consumer", "billing", "topic", "orders", "partition", "0")
	check("cursor of billing", v, v == 3)
	v = get("pulse_open_connections", "api", "websocket")
	check("open websocket connections", v, v == 1)
	v = get("pulse_open_connections", "api", "sse")
	check("open event streams", v, v == 1)
	v = get("pulse_recovery_truncated_bytes")
	check("bytes truncated at open", v, v == 100)
	v = get("pulse_recovery_partitions", "outcome", "repaired")
	check("partitions repaired at open", v, v >= 1)
	v = get("pulse_recovery_partitions", "outcome", "degraded")
	check("partitions degraded at open", v, v == 1)
	v = get("pulse_recovery_corrupt_ranges")
	check("corrupt ranges at open", v, v >= 1)
	v = get("pulse_degraded_partitions")
	check("degraded partitions", v, v == 1)
	v = get("pulse_partition_degraded", "topic", "broken", "partition", "0")
	check("broken is degraded", v, v == 1)
	v = get("pulse_partition_degraded", orders...)
	check("orders is not degraded", v, v == 0)
	v = get("pulse_retention_deleted_segments_total", "topic", "logs", "reason", "size")
	check("segments retention deleted", v, v >= 1)
	v = get("pulse_retention_deleted_records_total", "topic", "logs", "reason", "size")
	check("records retention deleted", v, v >= 100)
	v = get("pulse_compaction_runs_total", "topic", "kv")
	check("compaction runs", v, v >= 1)
	v = get("pulse_compaction_records_dropped_total", "topic", "kv")
	check("records compaction dropped", v, v > 0)
}

// BenchmarkScrape is one /metrics scrape of 100 topics of 4 partitions,
// each with a consumer cursor: what the scrape-time collectors cost.
func BenchmarkScrape(b *testing.B) {
	m := New()
	o := engine.DefaultOptions(b.TempDir())
	o.RetentionInterval, o.CompactionInterval = 0, 0
	o.Observer = m
	e, err := engine.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for i := range 100 {
		name := fmt.Sprintf("topic-%03d", i)
		if err := e.CreateTopic(name, engine.TopicConfig{Partitions: 4}); err != nil {
			b.Fatal(err)
		}
		for p := range 4 {
			if _, err := e.Produce(context.Background(), name, p, []engine.Record{{Value: []byte("x")}}); err != nil {
				b.Fatal(err)
			}
			if err := e.CommitCursor("c", name, p, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	m.Watch(e, nil)
	h := m.Handler()
	b.ResetTimer()
	var size int
	for b.Loop() {
		rec := &discardWriter{h: http.Header{}}
		h.ServeHTTP(rec, httpGet("/metrics"))
		size = rec.n
	}
	b.ReportMetric(float64(size), "bytes/scrape")
}

type discardWriter struct {
	h http.Header
	n int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) {
	d.n += len(p)
	return len(p), nil
}
func (d *discardWriter) WriteHeader(int) {}

func httpGet(path string) *http.Request {
	r, _ := http.NewRequest("GET", path, nil)
	return r
}
