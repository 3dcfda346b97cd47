// Package metrics is Pulse's Prometheus metrics (docs/http.md, "Metrics"):
// one registry per process (never the global one), served by the websocket
// server at GET /metrics.
//
// Most metrics are read from the engine when Prometheus scrapes (topics,
// partitions, consumers, recovery reports, maintenance counters: see
// collector.go), so they cost nothing between scrapes. Three kinds are
// counted as they happen: records and bytes produced and read through the
// APIs, with the latency of each engine call (Backend, a wrapper of the
// engine the APIs are given), and the partition logs' fsync times and
// commit sizes (the engine's Observer hook, engine/plog/observe.go).
//
// Labels are bounded: topic, partition, consumer name, API name, and fixed
// sets (recovery path, retention reason). Nothing is labelled per record,
// connection or client address.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the registry of one Pulse process and the metrics counted as
// they happen. Create it with New before the engine opens (it is the
// engine's Observer), then Watch the engine and the API server.
type Metrics struct {
	reg *prometheus.Registry

	producedRecords, producedBytes *prometheus.CounterVec // topic
	readRecords, readBytes         *prometheus.CounterVec // topic
	produceSeconds, fetchSeconds   prometheus.Histogram
	fsyncSeconds                   prometheus.Histogram
	commitRecords, commitAppends   prometheus.Histogram

	// counted holds the topics the counters above have series of, so that
	// a scrape drops those of a topic deleted since (forget). src is the
	// engine Watch was given.
	counted sync.Map // topic name → struct{}
	src     Source
}

// latencyBuckets span a loopback interval-mode write (tens of µs) to a
// slow disk's fsync (hundreds of ms).
var latencyBuckets = prometheus.ExponentialBuckets(25e-6, 2, 16) // 25µs … 0.8s

// New returns an empty registry with the Go runtime and process collectors
// and Pulse's counted metrics.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.producedRecords = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pulse_produced_records_total", Help: "Records acknowledged to producers of the Pulse APIs, by topic.",
	}, []string{"topic"})
	m.producedBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pulse_produced_bytes_total", Help: "Key, value and header bytes of the records in pulse_produced_records_total, by topic.",
	}, []string{"topic"})
	m.readRecords = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pulse_read_records_total", Help: "Records read by subscribers, tails, event streams and HTTP reads of the Pulse APIs, by topic.",
	}, []string{"topic"})
	m.readBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pulse_read_bytes_total", Help: "Key, value and header bytes of the records in pulse_read_records_total, by topic.",
	}, []string{"topic"})
	m.produceSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pulse_produce_request_duration_seconds", Help: "Time of one produce call to the engine, from the request to its ack (the topic's sync mode promise held).",
		Buckets: latencyBuckets,
	})
	m.fetchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pulse_fetch_request_duration_seconds", Help: "Time of one read call to the engine (it never waits for new records).",
		Buckets: latencyBuckets,
	})
	m.fsyncSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pulse_fsync_duration_seconds", Help: "Time of one data sync of a segment by a partition's commit (fdatasync; F_FULLFSYNC on macOS).",
		Buckets: latencyBuckets,
	})
	m.commitRecords = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pulse_commit_batch_records", Help: "Records made durable and visible by one commit (one fsync pass) of a partition.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10), // 1 … 262144
	})
	m.commitAppends = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pulse_commit_batch_appends", Help: "Appends (produce calls) acknowledged by one commit of an every-write partition: the group commit's size.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10), // 1 … 512
	})
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.producedRecords, m.producedBytes, m.readRecords, m.readBytes,
		m.produceSeconds, m.fetchSeconds, m.fsyncSeconds, m.commitRecords, m.commitAppends,
	)
	return m
}

// Registry returns the registry, for tests and for further collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format, without the
// series of topics deleted since the last scrape.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.forget()
		h.ServeHTTP(w, r)
	})
}

// count notes that the counters have series of topic.
func (m *Metrics) count(topic string) {
	if _, ok := m.counted.Load(topic); !ok {
		m.counted.Store(topic, struct{}{})
	}
}

// forget deletes the counters' series of every topic the engine no longer
// has. A topic created again keeps counting from 0 (a counter reset).
func (m *Metrics) forget() {
	if m.src == nil {
		return
	}
	topics, err := m.src.Topics()
	if err != nil {
		return
	}
	live := make(map[string]bool, len(topics))
	for _, ti := range topics {
		live[ti.Name] = true
	}
	m.counted.Range(func(k, _ any) bool {
		if topic := k.(string); !live[topic] {
			m.counted.Delete(topic)
			for _, v := range []*prometheus.CounterVec{m.producedRecords, m.producedBytes, m.readRecords, m.readBytes} {
				v.DeleteLabelValues(topic)
			}
		}
		return true
	})
}

// ObserveFsync implements engine.Observer.
func (m *Metrics) ObserveFsync(topic string, partition int, d time.Duration) {
	m.fsyncSeconds.Observe(d.Seconds())
}

// ObserveCommit implements engine.Observer.
func (m *Metrics) ObserveCommit(topic string, partition int, records int64, appends int) {
	m.commitRecords.Observe(float64(records))
	if appends > 0 {
		m.commitAppends.Observe(float64(appends))
	}
}

// partitionLabel is a partition number as a label value.
func partitionLabel(p int) string { return strconv.Itoa(p) }
