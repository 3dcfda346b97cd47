package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestValidateOnlyAnswersAsTheRealRequest: a validate-only CreateTopics or
// CreatePartitions gets the error code the same request would get for real
// (partitions past the engine's limit, past the data dir's cap), and
// changes nothing either way.
func TestValidateOnlyAnswersAsTheRealRequest(t *testing.T) {
	dir := t.TempDir()
	o := engine.DefaultOptions(dir)
	o.MaxPartitions = 10
	eng, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	p := startPulseOnEngine(t, eng, DefaultOptions())
	if err := p.eng.CreateTopic("grow", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	cl := kgoClient(t, p.addr)
	ctx := context.Background()

	createParts := func(count int32, validate bool) int16 {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.ValidateOnly = validate
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "grow", count
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode
	}
	createTopic := func(name string, parts int32, validate bool) int16 {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validate
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, 1
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode
	}

	for _, c := range []struct {
		what string
		call func(validate bool) int16
		want int16
	}{
		{"CreatePartitions past the engine's limit", func(v bool) int16 { return createParts(engine.MaxPartitions+1, v) }, errInvalidPartitions},
		{"CreatePartitions past --max-partitions", func(v bool) int16 { return createParts(11, v) }, errPolicyViolation},
		{"CreateTopics past the engine's limit", func(v bool) int16 { return createTopic("big", engine.MaxPartitions+1, v) }, errInvalidPartitions},
		{"CreateTopics past --max-partitions", func(v bool) int16 { return createTopic("big", 9, v) }, errPolicyViolation},
		{"CreatePartitions within the caps", func(v bool) int16 { return createParts(3, v) }, errNone},
		{"CreateTopics within the caps", func(v bool) int16 { return createTopic("small", 2, v) }, errNone},
	} {
		validated := c.call(true)
		if validated != c.want {
			t.Errorf("%s, validate only: code %d, want %d", c.what, validated, c.want)
		}
		info, err := p.eng.Describe("grow")
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Partitions) != 2 {
			t.Fatalf("%s, validate only: grow has %d partitions, want 2 still", c.what, len(info.Partitions))
		}
		if _, err := p.eng.Describe("small"); err == nil {
			t.Fatalf("%s, validate only: topic small was created", c.what)
		}
		if c.want != errNone {
			if real := c.call(false); real != c.want {
				t.Errorf("%s: code %d, want %d", c.what, real, c.want)
			}
		}
	}
}
