package main

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeHTTPAndMetrics: `pulse serve` answers curl-style produces and
// reads, serves /metrics counting them, and a SIGTERM ends it cleanly even
// with an event stream open.
func TestServeHTTPAndMetrics(t *testing.T) {
	s := startServe(t, t.TempDir())
	base := "http://" + s.addr
	hc := &http.Client{Timeout: time.Minute}
	resp, err := hc.Post(base+"/v1/topics/t/records", "application/x-www-form-urlencoded", strings.NewReader(`[{"value":"a"},{"value":"b"}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"offset":1`) {
		t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	ev, err := hc.Get(base + "/v1/topics/t/events?from=earliest")
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Body.Close()
	sc := bufio.NewScanner(ev.Body)
	for sc.Scan() && sc.Text() != "id: 0/1" {
	}
	resp, err = hc.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`pulse_produced_records_total{topic="t"} 2`,
		`pulse_read_records_total{topic="t"} 2`,
		`pulse_partition_high_watermark{partition="0",topic="t"} 2`,
		`pulse_open_connections{api="sse"} 1`,
		`pulse_fsync_duration_seconds_count`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := s.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("pulse serve after SIGTERM: %v; stderr %s", err, s.stderr)
	}
	for sc.Scan() {
	}
}
