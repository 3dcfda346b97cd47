package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/wsapi/wsclient"
)

// TestWebsocketAndKafkaAreOne: records produced over Kafka are the
// websocket API's records, and a Kafka group's committed offset is the
// cursor of the websocket consumer of the same name, both ways. (franz-go
// keeps its own timestamp on a produced record; TestTimestampsArePulses
// checks what Kafka consumers see.)
func TestWebsocketAndKafkaAreOne(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	wsAddr := serveWebsocket(t, p.eng)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	cl := kgoClient(t, p.addr, kgo.DefaultProduceTopic("both"), kgo.AllowAutoTopicCreation())
	var sent []*kgo.Record
	for i := range 10 {
		sent = append(sent, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{byte(i)}}}})
	}
	if err := cl.ProduceSync(ctx, sent...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "both", Partition: 0, At: 6, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "shared", offs); err != nil {
		t.Fatal(err)
	}

	wc, err := wsclient.Dial(ctx, wsAddr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	sub, err := wc.Subscribe(ctx, wsclient.SubscribeOptions{Topic: "both", Partition: -1, Consumer: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	var got []wsclient.Record
	for len(got) < 4 {
		select {
		case push, ok := <-sub.C():
			if !ok || push.Err != nil {
				t.Fatalf("subscription ended: %+v", push.Err)
			}
			got = append(got, push.Records...)
		case <-ctx.Done():
			t.Fatalf("websocket consumer got %d records", len(got))
		}
	}
	for i, r := range got {
		s := sent[6+i]
		if r.Offset != s.Offset || string(r.Key) != string(s.Key) || string(r.Value) != string(s.Value) ||
			len(r.Headers) != 1 || r.Headers[0].Key != "h" || r.Headers[0].Value[0] != byte(6+i) {
			t.Fatalf("websocket record %+v, Kafka produced %+v at offset %d", r, s, s.Offset)
		}
	}

	// The websocket consumer commits; the Kafka group sees it.
	if err := wc.Commit(ctx, "shared", "both", 0, 9); err != nil {
		t.Fatal(err)
	}
	fetched, err := adm.FetchOffsets(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("both", 0); !ok || o.At != 9 {
		t.Fatalf("the group's offset after the websocket commit: %+v", o)
	}
}
