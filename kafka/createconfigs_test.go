package kafka

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCreateTopicsAnswersTheTopicsConfigs: a CreateTopics response (v5+,
// KIP-525) carries the topic's partition count, replication factor and
// configs, with validate_only too, each config as DescribeConfigs then
// describes it (value, read-only, source, not sensitive); a topic refused
// gets -1, -1 and no configs.
func TestCreateTopicsAnswersTheTopicsConfigs(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	create := func(name string, parts int32, validate bool) kmsg.CreateTopicsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validate
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, -1
		for k, v := range map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact", "unknown.to.pulse": "x"} {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if v := req.GetVersion(); v < 5 {
			t.Fatalf("CreateTopics v%d: configs are in v5 and later", v)
		}
		return resp.Topics[0]
	}
	// configs lists a response's configs one a line, sorted.
	configs := func(cs []kmsg.CreateTopicsResponseTopicConfig) string {
		var lines []string
		for _, c := range cs {
			v := "<null>"
			if c.Value != nil {
				v = *c.Value
			}
			lines = append(lines, fmt.Sprintf("%s=%s read_only=%v source=%v sensitive=%v", c.Name, v, c.ReadOnly, kmsg.ConfigSource(c.Source), c.IsSensitive))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}

	validated := create("made", 3, true)
	if _, err := p.eng.Describe("made"); err == nil {
		t.Fatal("validate only created the topic")
	}
	made := create("made", 3, false)
	for what, rt := range map[string]kmsg.CreateTopicsResponseTopic{"validate only": validated, "create": made} {
		if rt.ErrorCode != 0 || rt.NumPartitions != 3 || rt.ReplicationFactor != 1 {
			t.Errorf("%s: error %d, num_partitions %d, replication_factor %d; want 0, 3, 1", what, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor)
		}
	}

	// What DescribeConfigs says of the topic created, in the same form.
	dreq := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "made"
	dreq.Resources = append(dreq.Resources, res)
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var described []kmsg.CreateTopicsResponseTopicConfig
	for _, c := range dresp.Resources[0].Configs {
		described = append(described, kmsg.CreateTopicsResponseTopicConfig{Name: c.Name, Value: c.Value, ReadOnly: c.ReadOnly, Source: int8(c.Source), IsSensitive: c.IsSensitive})
	}
	want := configs(described)
	for _, line := range []string{
		"retention.ms=3600000 read_only=false source=DYNAMIC_TOPIC_CONFIG sensitive=false",
		"cleanup.policy=compact read_only=false source=DYNAMIC_TOPIC_CONFIG sensitive=false",
		"segment.bytes=67108864 read_only=false source=DEFAULT_CONFIG sensitive=false",
		"pulse.codec=zstd read_only=true source=DEFAULT_CONFIG sensitive=false",
	} {
		if !strings.Contains(want+"\n", line+"\n") {
			t.Fatalf("DescribeConfigs of the topic created lacks %q:\n%s", line, want)
		}
	}
	for what, rt := range map[string]kmsg.CreateTopicsResponseTopic{"validate only": validated, "create": made} {
		if got := configs(rt.Configs); got != want {
			t.Errorf("%s: configs\n%s\nwant, as DescribeConfigs has them,\n%s", what, got, want)
		}
	}

	// kadm reads them too.
	kr, err := adm.ValidateCreateTopics(ctx, 2, 1, map[string]*string{"segment.bytes": kmsg.StringPtr("1048576")}, "other")
	if err != nil {
		t.Fatal(err)
	}
	r, err := kr.On("other", nil)
	if err != nil || r.Err != nil {
		t.Fatalf("kadm validate create: %v %v", err, r.Err)
	}
	if c := r.Configs["segment.bytes"]; r.NumPartitions != 2 || r.ReplicationFactor != 1 || c.Value == nil || *c.Value != "1048576" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("kadm validate create: %d partitions, replication factor %d, segment.bytes %+v", r.NumPartitions, r.ReplicationFactor, c)
	}
	if c := r.Configs["cleanup.policy"]; c.Value == nil || *c.Value != "delete" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("kadm validate create: cleanup.policy %+v, want delete from DEFAULT_CONFIG", c)
	}

	// Refused: the topic exists; a bad partition count.
	for what, rt := range map[string]kmsg.CreateTopicsResponseTopic{"existing topic": create("made", 3, false), "validate only, existing topic": create("made", 3, true), "0 partitions": create("zero", 0, false)} {
		if rt.ErrorCode == 0 || rt.NumPartitions != -1 || rt.ReplicationFactor != -1 || rt.Configs != nil {
			t.Errorf("%s: error %d, num_partitions %d, replication_factor %d, configs %v; want an error, -1, -1, none", what, rt.ErrorCode, rt.NumPartitions, rt.ReplicationFactor, rt.Configs)
		}
	}
}
