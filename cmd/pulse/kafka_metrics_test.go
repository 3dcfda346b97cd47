package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMetricsCountKafkaTraffic: records a Kafka client produces to and
// fetches from pulse serve's listener are counted in /metrics like the
// websocket API's.
func TestMetricsCountKafkaTraffic(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kaddr := l.Addr().String()
	l.Close()
	s := startServe(t, t.TempDir(), "--kafka-listen", kaddr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kaddr), kgo.AllowAutoTopicCreation(), kgo.ConsumeTopics("k"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range []string{"a", "b", "c"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "k", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	for got := 0; got < 3; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("fetched %d of 3 records: %v", got, err)
		}
		got += fs.NumRecords()
	}
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`pulse_produced_records_total{topic="k"} 3`, `pulse_read_records_total{topic="k"} 3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
