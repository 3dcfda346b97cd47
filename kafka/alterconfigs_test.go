package kafka

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestIncrementalAlterConfigs: kadm's AlterTopicConfigs changes a topic's
// retention and cleanup (SET and DELETE), the engine applies it and
// DescribeConfigs reads it back; a bad value, an unsupported op and a
// missing topic are refused with Kafka's codes and change nothing.
func TestIncrementalAlterConfigs(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("cfg", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	str := func(s string) *string { return &s }
	alter := func(cs ...kadm.AlterConfig) error {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, cs, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		r, err := resp.On("cfg", nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Err
	}
	if err := alter(
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms", Value: str("3600000")},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.bytes", Value: str("1048576")},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "cleanup.policy", Value: str("compact")},
	); err != nil {
		t.Fatalf("alter: %v", err)
	}
	info, err := p.eng.Describe("cfg")
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Config; c.RetentionMaxAge != time.Hour || c.RetentionMaxBytes != 1<<20 || c.Cleanup != engine.CleanupCompact {
		t.Fatalf("engine config after alter: %+v", c)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	r, err := rc.On("cfg", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Configs {
		if c.Value != nil {
			got[c.Key] = *c.Value
		}
	}
	if got["retention.ms"] != "3600000" || got["retention.bytes"] != "1048576" || got["cleanup.policy"] != "compact" {
		t.Fatalf("DescribeConfigs after alter: %v", got)
	}
	if err := alter(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "retention.ms"}); err != nil {
		t.Fatalf("delete retention.ms: %v", err)
	}
	if info, _ = p.eng.Describe("cfg"); info.Config.RetentionMaxAge != 0 || info.Config.RetentionMaxBytes != 1<<20 {
		t.Fatalf("after DELETE retention.ms: %+v", info.Config)
	}
	before := info.Config
	for _, c := range []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: str("soon")},
		{Op: kadm.SetConfig, Name: "segment.bytes", Value: str("1000")}, // below 1 MiB
		{Op: kadm.SetConfig, Name: "pulse.sync.mode", Value: str("sometimes")},
		{Op: kadm.SetConfig, Name: "flush.messages", Value: str("0")},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: str("delete")},
	} {
		if err := alter(c); err == nil {
			t.Errorf("%s %s accepted", c.Name, *c.Value)
		}
	}
	if info, _ = p.eng.Describe("cfg"); info.Config != before {
		t.Fatalf("a refused alter changed the config: %+v, was %+v", info.Config, before)
	}
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: str("1")}}, "nope")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := resp.On("nope", nil); r.Err == nil {
		t.Fatal("altering a missing topic succeeded")
	}
}

// TestRetentionMsPastADuration: retention.ms set to Long.MAX_VALUE (Kafka's
// other way of saying "forever") or anything else past what Pulse's
// durations hold (about 292 years) is no time limit, not a value wrapped
// around to a negative or tiny retention that would delete records.
func TestRetentionMsPastADuration(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("forever", engine.TopicConfig{RetentionMaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, v := range []string{"9223372036854775807", "9223372036855", "4611686018427387904"} {
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: &v}}, "forever")
		if err != nil {
			t.Fatal(err)
		}
		if r, err := resp.On("forever", nil); err != nil || r.Err != nil {
			t.Fatalf("retention.ms %s: %v %v", v, err, r.Err)
		}
		info, err := p.eng.Describe("forever")
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Config.RetentionMaxAge; got != 0 {
			t.Errorf("retention.ms %s: retention %v, want no time limit", v, got)
		}
	}
	ct, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("9223372036854775807")}, "forever2")
	if err != nil || ct.Err != nil {
		t.Fatalf("CreateTopics with retention.ms Long.MAX_VALUE: %v %v", err, ct.Err)
	}
	if info, _ := p.eng.Describe("forever2"); info.Config.RetentionMaxAge != 0 {
		t.Errorf("created with retention.ms Long.MAX_VALUE: retention %v, want no time limit", info.Config.RetentionMaxAge)
	}
}

// TestDescribeBrokerConfigsOfThisBrokerOnly: Pulse is broker 0; as in
// Kafka, its broker configs are described for the name "0" or "" (the
// broker's defaults), and another name is INVALID_REQUEST naming it.
func TestDescribeBrokerConfigsOfThisBrokerOnly(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	cl := kgoClient(t, p.addr)
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, name := range []string{"0", "", "1", "x"} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources = append(req.Resources, r)
	}
	// Straight to broker 0: franz-go would route each broker resource to
	// the broker it names.
	kresp, err := cl.Broker(0).Request(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 4 {
		t.Fatalf("%d resources answered, want 4", len(resp.Resources))
	}
	for _, r := range resp.Resources {
		mine := r.ResourceName == "0" || r.ResourceName == ""
		switch {
		case mine && (r.ErrorCode != 0 || len(r.Configs) == 0):
			t.Errorf("broker %q: code %d, %d configs", r.ResourceName, r.ErrorCode, len(r.Configs))
		case !mine && (r.ErrorCode != errInvalidRequest || len(r.Configs) != 0 || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, strconv.Quote(r.ResourceName))):
			t.Errorf("broker %q: code %d, %d configs, message %v; want INVALID_REQUEST naming it", r.ResourceName, r.ErrorCode, len(r.Configs), r.ErrorMessage)
		}
	}
}

// TestDeleteRetentionMs: Kafka's delete.retention.ms is the topic's
// tombstone retention (how long compaction keeps a tombstone), taken by
// CreateTopics, read back by DescribeConfigs, SET and DELETEd (back to 24 h)
// by IncrementalAlterConfigs; 0 keeps a tombstone 1 ms, and a negative or
// non-numeric value is INVALID_CONFIG and changes nothing.
func TestDeleteRetentionMs(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	str := func(s string) *string { return &s }
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": str("compact"), "delete.retention.ms": str("60000")}, "tomb"); err != nil {
		t.Fatal(err)
	}
	check := func(what string, want time.Duration) {
		t.Helper()
		info, err := p.eng.Describe("tomb")
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Config.TombstoneRetention; got != want {
			t.Errorf("%s: tombstone retention %v, want %v", what, got, want)
		}
		rc, err := adm.DescribeTopicConfigs(ctx, "tomb")
		if err != nil {
			t.Fatal(err)
		}
		r, err := rc.On("tomb", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Configs {
			if c.Key == "delete.retention.ms" {
				if c.MaybeValue() != strconv.FormatInt(want.Milliseconds(), 10) {
					t.Errorf("%s: DescribeConfigs delete.retention.ms %q, want %d", what, c.MaybeValue(), want.Milliseconds())
				}
				return
			}
		}
		t.Errorf("%s: DescribeConfigs has no delete.retention.ms", what)
	}
	check("created", time.Minute)
	alter := func(op kadm.IncrementalOp, v *string) error {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: "delete.retention.ms", Value: v}}, "tomb")
		if err != nil {
			t.Fatal(err)
		}
		r, err := resp.On("tomb", nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Err
	}
	if err := alter(kadm.SetConfig, str("1000")); err != nil {
		t.Fatal(err)
	}
	check("set to 1000", time.Second)
	if err := alter(kadm.SetConfig, str("0")); err != nil {
		t.Fatal(err)
	}
	check("set to 0", time.Millisecond)
	for _, bad := range []string{"-1", "soon"} {
		if err := alter(kadm.SetConfig, str(bad)); !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("set to %q: %v, want INVALID_CONFIG", bad, err)
		}
	}
	check("after refused values", time.Millisecond)
	if err := alter(kadm.DeleteConfig, nil); err != nil {
		t.Fatal(err)
	}
	check("deleted", 24*time.Hour)
}

// DescribeConfigs says which of a topic's values are its own
// (DYNAMIC_TOPIC_CONFIG: set at creation or by an alter) and which are the
// defaults a topic gets when nothing sets them (DEFAULT_CONFIG), as Kafka
// does, so that Kafka's tools list only a topic's overrides; a DELETE
// makes a value the default again.
func TestDescribeConfigsSaysWhichValuesAreDefaults(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	adm := kadm.NewClient(kgoClient(t, p.addr))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hour := "3600000"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": &hour}, "src"); err != nil {
		t.Fatal(err)
	}
	sources := func() map[string]kmsg.ConfigSource {
		t.Helper()
		rc, err := adm.DescribeTopicConfigs(ctx, "src")
		if err != nil {
			t.Fatal(err)
		}
		r, err := rc.On("src", nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]kmsg.ConfigSource{}
		for _, c := range r.Configs {
			m[c.Key] = c.Source
		}
		return m
	}
	got := sources()
	for name, want := range map[string]kmsg.ConfigSource{
		"retention.ms":        kmsg.ConfigSourceDynamicTopicConfig,
		"retention.bytes":     kmsg.ConfigSourceDefaultConfig,
		"cleanup.policy":      kmsg.ConfigSourceDefaultConfig,
		"segment.bytes":       kmsg.ConfigSourceDefaultConfig,
		"delete.retention.ms": kmsg.ConfigSourceDefaultConfig,
		"pulse.codec":         kmsg.ConfigSourceDefaultConfig,
		"pulse.sync.mode":     kmsg.ConfigSourceDefaultConfig,
	} {
		if got[name] != want {
			t.Errorf("after creating with retention.ms: %s is %v, want %v", name, got[name], want)
		}
	}
	resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "retention.ms"}, {Op: kadm.SetConfig, Name: "cleanup.policy", Value: kmsg.StringPtr("compact")}}, "src")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := resp.On("src", nil); err != nil || r.Err != nil {
		t.Fatalf("alter: %v %v", err, r.Err)
	}
	got = sources()
	if got["retention.ms"] != kmsg.ConfigSourceDefaultConfig || got["cleanup.policy"] != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("after DELETE retention.ms and SET cleanup.policy compact: retention.ms %v, cleanup.policy %v", got["retention.ms"], got["cleanup.policy"])
	}
}
