package metrics

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/loopfs"
	"github.com/pulselog/pulse/kafka"
)

// scrape GETs m's handler and parses the answer with the Prometheus text
// parser (a line it cannot parse fails the test).
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	// Legacy validation: every name is a classic Prometheus name, which
	// every scraper accepts.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// series returns the values of name's series whose labels include want.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) []float64 {
	var vals []float64
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			vals = append(vals, m.Counter.GetValue())
		case m.Gauge != nil:
			vals = append(vals, m.Gauge.GetValue())
		default:
			vals = append(vals, -1)
		}
	}
	return vals
}

// A deleted topic's series are gone from the next scrape on: the ones
// read from the engine and the _total counters of what was produced and
// read, so that topic names coming and going do not pile up series.
func TestMetricsForgetADeletedTopic(t *testing.T) {
	m := New()
	e := openEngine(t, t.TempDir(), m)
	defer e.Close()
	m.Watch(e, nil)
	b := m.Wrap(e)
	for _, name := range []string{"gone", "kept"} {
		if err := e.CreateTopic(name, engine.TopicConfig{}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Produce(context.Background(), name, 0, []engine.Record{{Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Read(name, 0, 0, 10, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	counted := []string{"pulse_produced_records_total", "pulse_produced_bytes_total", "pulse_read_records_total", "pulse_read_bytes_total"}
	fams := scrape(t, m)
	for _, name := range append(counted, "pulse_partition_high_watermark") {
		for _, topic := range []string{"gone", "kept"} {
			if v := series(fams, name, map[string]string{"topic": topic}); len(v) != 1 || v[0] != 1 {
				t.Fatalf("before the delete: %s{topic=%q} = %v, want [1]", name, topic, v)
			}
		}
	}
	if err := e.DeleteTopic("gone"); err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, m)
	for name := range fams {
		if v := series(fams, name, map[string]string{"topic": "gone"}); len(v) > 0 {
			t.Errorf("after the delete: %s{topic=\"gone\"} still there: %v", name, v)
		}
	}
	for _, name := range counted {
		if v := series(fams, name, map[string]string{"topic": "kept"}); len(v) != 1 || v[0] != 1 {
			t.Errorf("after the delete: %s{topic=\"kept\"} = %v, want [1]", name, v)
		}
	}
}

// A partition whose last write failed (a real full disk) shows
// pulse_partition_failed 1 until a write succeeds again, after space is
// freed; nothing failed is counted as produced.
func TestMetricsShowAPartitionWhoseWriteFailed(t *testing.T) {
	mnt := loopfs.Mount(t, 16)
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, bytes.Repeat([]byte{1}, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	m := New()
	e := openEngine(t, filepath.Join(mnt, "data"), m)
	t.Cleanup(func() { e.Close() }) // before the unmount
	m.Watch(e, nil)
	b := m.Wrap(e)
	if err := e.CreateTopic("t", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	failed := func(want float64, when string) {
		t.Helper()
		if v := series(scrape(t, m), "pulse_partition_failed", map[string]string{"topic": "t", "partition": "0"}); len(v) != 1 || v[0] != want {
			t.Fatalf("%s: pulse_partition_failed = %v, want [%v]", when, v, want)
		}
	}
	failed(0, "before")
	acked := 0
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("the disk never filled")
		}
		_, err := b.Produce(context.Background(), "t", 0, []engine.Record{{Value: bytes.Repeat([]byte{'x'}, 32<<10)}})
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("produce on a full disk: %v, want ENOSPC", err)
			}
			break
		}
		acked++
	}
	failed(1, "after a write failed")
	if v := series(scrape(t, m), "pulse_produced_records_total", map[string]string{"topic": "t"}); len(v) != 1 || v[0] != float64(acked) {
		t.Fatalf("pulse_produced_records_total = %v, want [%d] (the acked ones)", v, acked)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Produce(context.Background(), "t", 0, []engine.Record{{Value: []byte("again")}}); err != nil {
		t.Fatalf("produce once there is room: %v", err)
	}
	failed(0, "after a write succeeded again")
}

// A Kafka fetch that waits for min_bytes reads its partitions again when
// it wakes (a produce, or max_wait passing): /metrics counts the records of
// the response it sends, once, not every read it made while waiting.
func TestMetricsCountAWaitingKafkaFetchOnce(t *testing.T) {
	m := New()
	e := openEngine(t, t.TempDir(), m)
	defer e.Close()
	m.Watch(e, nil)
	if err := e.CreateTopic("k", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	produce(t, e, "k", engine.Record{Value: []byte("v")})
	srv := kafka.New(e, kafka.Options{Records: m.Wrap(e)})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	defer func() {
		srv.Close()
		<-served
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// More than the partition holds: the fetch waits its max_wait, then
	// answers with what there is.
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 100, 1<<20, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "k"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = 0, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var b kmsg.RecordBatch
	if err := b.ReadFrom(resp.Topics[0].Partitions[0].RecordBatches); err != nil || b.NumRecords != 1 {
		t.Fatalf("fetch: %d records, %v; want the 1 record", b.NumRecords, err)
	}
	if v := series(scrape(t, m), "pulse_read_records_total", map[string]string{"topic": "k"}); len(v) != 1 || v[0] != 1 {
		t.Fatalf("pulse_read_records_total = %v, want [1]", v)
	}
}

// The Kafka listener counts a fetch's records through this interface.
var _ kafka.ReadCounter = (*Backend)(nil)
