package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/recovery"
)

// Source is what the scrape-time collector reads from the engine;
// *engine.Engine satisfies it.
type Source interface {
	Topics() ([]engine.TopicInfo, error)
	Consumers(topic string) ([]engine.ConsumerInfo, error)
	RecoveryReports() []recovery.Report
	MaintenanceStatus(topic string, partition int) (engine.MaintenanceStatus, error)
	Problems() []string
}

// Connections reports the open connections of each API by name
// ("websocket", "sse", ...) and the connections closed as slow consumers
// since start; the websocket server's Stats gives them.
type Connections func() (open map[string]int, slowClosed int64)

// Watch registers the collectors that read src (and conns, when not nil)
// at every scrape.
func (m *Metrics) Watch(src Source, conns Connections) {
	m.src = src
	m.reg.MustRegister(&engineCollector{src: src, conns: conns})
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	tp  = []string{"topic", "partition"}
	ctp = []string{"consumer", "topic", "partition"}

	dHWM        = desc("pulse_partition_high_watermark", "High-watermark of the partition: the exclusive end of what consumers may read (durable, verified).", tp...)
	dLEO        = desc("pulse_partition_log_end_offset", "Log end offset: the next offset the partition assigns.", tp...)
	dLogStart   = desc("pulse_partition_log_start_offset", "First offset still stored (after retention).", tp...)
	dHidden     = desc("pulse_partition_hidden_tail_records", "Records between the HWM and the log end kept hidden after recovery.", tp...)
	dPartBytes  = desc("pulse_partition_size_bytes", "Bytes on disk of all segments of the partition.", tp...)
	dSegments   = desc("pulse_partition_segments", "Segments of the partition.", tp...)
	dDegraded   = desc("pulse_partition_degraded", "1 when the partition is degraded (it opened so, or a read found a corrupt batch since): corrupt or lost ranges reads skip; else 0.", tp...)
	dFailed     = desc("pulse_partition_failed", "1 while the partition's last write failed (an I/O error, a full disk; the next write that succeeds clears it), else 0.", tp...)
	dSkipped    = desc("pulse_partition_skipped_records", "Offsets reads skipped in corrupt or lost ranges, every read's skip counted (a Kafka fetch counts what its response moves the consumer past, docs/kafka.md).", tp...)
	dDirty      = desc("pulse_compaction_dirty_ratio", "Share of the sealed records the last compaction left droppable (compacted topics).", tp...)
	dLag        = desc("pulse_consumer_lag_records", "Records between a consumer's committed cursor and the partition's HWM.", ctp...)
	dCursor     = desc("pulse_consumer_offset", "A consumer's committed cursor: the next offset it will read.", ctp...)
	dDegradedN  = desc("pulse_degraded_partitions", "Partitions degraded (pulse_partition_degraded 1).")
	dProblems   = desc("pulse_open_problems", "Inconsistencies between meta.db and the disk found when the data directory opened.")
	dRecovery   = desc("pulse_recovery_partitions", "Partitions by how recovery opened them at start: path (new, snapshot, delta, full-scan) and outcome (clean, repaired: truncated, rebuilt, temp files removed or hidden tail; degraded).", "path", "outcome")
	dTruncated  = desc("pulse_recovery_truncated_bytes", "Bytes of torn tails recovery truncated at start, all partitions.")
	dCorrupt    = desc("pulse_recovery_corrupt_ranges", "Corrupt ranges recovery reported at start, all partitions.")
	dRebuilt    = desc("pulse_recovery_indexes_rebuilt", "Index files recovery rebuilt at start, all partitions.")
	dRecHidden  = desc("pulse_recovery_hidden_tail_records", "Records past the persisted HWM that recovery found at start, all partitions.")
	dRecSeconds = desc("pulse_recovery_seconds", "Time recovery spent on all partitions at start (sum of the per-partition durations).")
	dConns      = desc("pulse_open_connections", "Open connections by API: websocket (/v1/ws), websocket_produce, websocket_tail, sse (event streams).", "api")
	dSlow       = desc("pulse_slow_consumers_closed_total", "Websocket connections closed as slow consumers since start.")

	tr = []string{"topic", "reason"}
	t  = []string{"topic"}

	dRetSegments = desc("pulse_retention_deleted_segments_total", "Segments retention deleted since start, by topic and reason (age, size).", tr...)
	dRetBytes    = desc("pulse_retention_deleted_bytes_total", "Bytes retention deleted since start, by topic and reason.", tr...)
	dRetRecords  = desc("pulse_retention_deleted_records_total", "Records retention deleted since start, by topic and reason.", tr...)
	dCmpRuns     = desc("pulse_compaction_runs_total", "Compaction runs since start, by topic.", t...)
	dCmpDone     = desc("pulse_compaction_compacted_runs_total", "Compaction runs that rewrote or deleted a segment since start, by topic.", t...)
	dCmpRewrit   = desc("pulse_compaction_segments_rewritten_total", "Segments compaction rewrote since start, by topic.", t...)
	dCmpDeleted  = desc("pulse_compaction_segments_deleted_total", "Segments compaction deleted (left empty) since start, by topic.", t...)
	dCmpDropped  = desc("pulse_compaction_records_dropped_total", "Records compaction dropped since start, by topic.", t...)
	dCmpTombs    = desc("pulse_compaction_tombstones_dropped_total", "Tombstones compaction dropped since start, by topic.", t...)
	dCmpBytes    = desc("pulse_compaction_bytes_reclaimed_total", "Bytes compaction reclaimed since start, by topic.", t...)

	allDescs = []*prometheus.Desc{dHWM, dLEO, dLogStart, dHidden, dPartBytes, dSegments, dDegraded, dFailed, dSkipped,
		dDirty, dLag, dCursor, dDegradedN, dProblems, dRecovery, dTruncated, dCorrupt, dRebuilt, dRecHidden,
		dRecSeconds, dConns, dSlow, dRetSegments, dRetBytes, dRetRecords, dCmpRuns, dCmpDone, dCmpRewrit,
		dCmpDeleted, dCmpDropped, dCmpTombs, dCmpBytes}
)

// engineCollector reads the engine's own figures at scrape time.
type engineCollector struct {
	src   Source
	conns Connections
}

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	topics, err := c.src.Topics()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(dHWM, err)
	}
	degraded := 0
	for _, ti := range topics {
		var cmp engine.CompactionCounters
		ret := map[string]engine.DeletionCounters{}
		for _, pi := range ti.Partitions {
			l := []string{ti.Name, partitionLabel(pi.Partition)}
			gauge(dHWM, float64(pi.HWM), l...)
			gauge(dLEO, float64(pi.LEO), l...)
			gauge(dLogStart, float64(pi.LogStart), l...)
			gauge(dHidden, float64(pi.HiddenTail), l...)
			gauge(dPartBytes, float64(pi.Bytes), l...)
			gauge(dSegments, float64(pi.Segments), l...)
			gauge(dSkipped, float64(pi.SkippedRecords), l...)
			d := 0.0
			if pi.Degraded {
				d = 1
				degraded++
			}
			gauge(dDegraded, d, l...)
			f := 0.0
			if pi.Failed != "" {
				f = 1
			}
			gauge(dFailed, f, l...)
			st, err := c.src.MaintenanceStatus(ti.Name, pi.Partition)
			if err != nil {
				continue // deleted meanwhile
			}
			if ti.Config.Cleanup == engine.CleanupCompact {
				gauge(dDirty, st.DirtyRatio, l...)
			}
			for reason, dc := range st.RetentionDeleted {
				sum := ret[reason]
				sum.Segments += dc.Segments
				sum.Bytes += dc.Bytes
				sum.Records += dc.Records
				ret[reason] = sum
			}
			cc := st.Compaction
			cmp.Runs += cc.Runs
			cmp.Compacted += cc.Compacted
			cmp.SegmentsRewritten += cc.SegmentsRewritten
			cmp.SegmentsDeleted += cc.SegmentsDeleted
			cmp.RecordsDropped += cc.RecordsDropped
			cmp.TombstonesDropped += cc.TombstonesDropped
			cmp.BytesReclaimed += cc.BytesReclaimed
		}
		for _, reason := range []string{"age", "size"} {
			dc := ret[reason]
			counter(dRetSegments, float64(dc.Segments), ti.Name, reason)
			counter(dRetBytes, float64(dc.Bytes), ti.Name, reason)
			counter(dRetRecords, float64(dc.Records), ti.Name, reason)
		}
		counter(dCmpRuns, float64(cmp.Runs), ti.Name)
		counter(dCmpDone, float64(cmp.Compacted), ti.Name)
		counter(dCmpRewrit, float64(cmp.SegmentsRewritten), ti.Name)
		counter(dCmpDeleted, float64(cmp.SegmentsDeleted), ti.Name)
		counter(dCmpDropped, float64(cmp.RecordsDropped), ti.Name)
		counter(dCmpTombs, float64(cmp.TombstonesDropped), ti.Name)
		counter(dCmpBytes, float64(cmp.BytesReclaimed), ti.Name)

		cons, err := c.src.Consumers(ti.Name)
		if err != nil {
			continue
		}
		for _, ci := range cons {
			l := []string{ci.Consumer, ci.Topic, partitionLabel(ci.Partition)}
			gauge(dLag, float64(ci.Lag), l...)
			gauge(dCursor, float64(ci.Offset), l...)
		}
	}
	gauge(dDegradedN, float64(degraded))
	gauge(dProblems, float64(len(c.src.Problems())))

	type po struct{ path, outcome string }
	outcomes := map[po]int{}
	var truncated, corrupt, rebuilt, hidden int64
	var seconds float64
	for _, r := range c.src.RecoveryReports() {
		o := "clean"
		switch {
		case r.Degraded:
			o = "degraded"
		case len(r.Truncations) > 0 || len(r.IndexesRebuilt) > 0 || len(r.TempFilesRemoved) > 0 || r.HiddenTail > 0:
			o = "repaired"
		}
		outcomes[po{r.Path, o}]++
		truncated += r.TruncatedBytes()
		corrupt += int64(len(r.Corrupt))
		rebuilt += int64(len(r.IndexesRebuilt))
		hidden += r.HiddenTail
		seconds += r.Duration.Seconds()
	}
	for k, n := range outcomes {
		gauge(dRecovery, float64(n), k.path, k.outcome)
	}
	gauge(dTruncated, float64(truncated))
	gauge(dCorrupt, float64(corrupt))
	gauge(dRebuilt, float64(rebuilt))
	gauge(dRecHidden, float64(hidden))
	gauge(dRecSeconds, seconds)

	if c.conns != nil {
		open, slow := c.conns()
		for api, n := range open {
			gauge(dConns, float64(n), api)
		}
		counter(dSlow, float64(slow))
	}
}
