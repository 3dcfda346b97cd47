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

// TestEventsResumeAfterSIGKILL: records acked over HTTP survive a SIGKILL
// of `pulse serve`; after a restart on the same address, an event stream
// resumed with the last id it saw goes on exactly after it.
func TestEventsResumeAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir)
	base := "http://" + s.addr
	hc := &http.Client{Timeout: time.Minute}
	post := func(body string) {
		t.Helper()
		resp, err := hc.Post(base+"/v1/topics/k/records", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d", body, resp.StatusCode)
		}
	}
	// events reads the ids of a stream until it has n of them.
	events := func(lastID string, n int) []string {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/v1/topics/k/events?from=earliest", nil)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ids []string
		sc := bufio.NewScanner(resp.Body)
		for len(ids) < n && sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				ids = append(ids, id)
			}
		}
		return ids
	}
	post(`[{"value":0},{"value":1},{"value":2}]`)
	if got := strings.Join(events("", 3), " "); got != "0/0 0/1 0/2" {
		t.Fatalf("first stream: %s", got)
	}
	post(`{"value":3}`)
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.waited
	startServe(t, dir, "--listen", s.addr)
	post(`{"value":4}`)
	if got := strings.Join(events("0/2", 2), " "); got != "0/3 0/4" {
		t.Fatalf("stream resumed after 0/2: %s, want 0/3 0/4", got)
	}
}

// TestMetricsPreflight: a page on localhost that scrapes /metrics of a
// `pulse serve --token` sends Authorization, so its browser asks first with
// a CORS preflight; Pulse answers it as on the records endpoints, and the
// GET that follows carries Access-Control-Allow-Origin.
func TestMetricsPreflight(t *testing.T) {
	s := startServe(t, t.TempDir(), "--token", "s3cret")
	hc := &http.Client{Timeout: time.Minute}
	req, _ := http.NewRequest("OPTIONS", "http://"+s.addr+"/metrics", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "authorization")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent ||
		resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") ||
		resp.Header.Get("Access-Control-Allow-Methods") != "GET" {
		t.Fatalf("preflight of /metrics: %d %v, want 204 allowing GET with Authorization from the page", resp.StatusCode, resp.Header)
	}
	req.Header.Set("Origin", "http://evil.example")
	if resp, err = hc.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("preflight of /metrics from a foreign origin: %d, want 403", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", "http://"+s.addr+"/metrics", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Authorization", "Bearer s3cret")
	if resp, err = hc.Do(req); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || !strings.Contains(string(b), "pulse_open_connections") {
		t.Fatalf("GET /metrics from the page: %d %v", resp.StatusCode, resp.Header)
	}
}
