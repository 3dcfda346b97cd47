package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/wsapi/wire"
)

// pulse topics create and alter take --tombstone-retention (and the
// hidden --tombstone-retention-ms); describe shows it for a compacted
// topic; 0 and a bad unit are refused, naming the flag, and change
// nothing; alter with no flag names it among what it can change.
func TestTopicsTombstoneRetention(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "data"))
	srv := []string{"--server", s.addr}
	with := func(args ...string) []string { return append(args, srv...) }
	tombstoneMs := func(topic string) int64 {
		t.Helper()
		var ti wire.TopicInfo
		if err := json.Unmarshal([]byte(mustPulse(t, "", with("topics", "describe", topic, "--json")...)), &ti); err != nil {
			t.Fatal(err)
		}
		return ti.Config.TombstoneRetentionMs
	}

	mustPulse(t, "", with("topics", "create", "kv", "--cleanup", "compact", "--tombstone-retention", "2h")...)
	if ms := tombstoneMs("kv"); ms != 2*3600*1000 {
		t.Fatalf("created with --tombstone-retention 2h: %d ms", ms)
	}
	if out := mustPulse(t, "", with("topics", "describe", "kv")...); !strings.Contains(out, "  cleanup     compact\n  retention   none\n  tombstones  kept 2h\n") {
		t.Errorf("describe kv:\n%s", out)
	}
	mustPulse(t, "", with("topics", "create", "raw", "--cleanup", "compact", "--tombstone-retention-ms", "60000")...)
	if ms := tombstoneMs("raw"); ms != 60000 {
		t.Fatalf("created with --tombstone-retention-ms 60000: %d ms", ms)
	}
	// Left out: the default, 24h; a delete topic's describe has no line.
	mustPulse(t, "", with("topics", "create", "plain")...)
	if ms := tombstoneMs("plain"); ms != 24*3600*1000 {
		t.Fatalf("created without --tombstone-retention: %d ms", ms)
	}
	if out := mustPulse(t, "", with("topics", "describe", "plain")...); strings.Contains(out, "tombstones") {
		t.Errorf("describe of a delete topic shows tombstones:\n%s", out)
	}
	if _, errOut, err := pulse(t, "", with("topics", "create", "zero", "--cleanup", "compact", "--tombstone-retention", "0")...); err == nil || !strings.Contains(errOut, "--tombstone-retention 0: want at least 1ms") {
		t.Errorf("create --tombstone-retention 0: %v, stderr %q", err, errOut)
	}
	if _, _, err := pulse(t, "", with("topics", "describe", "zero")...); err == nil {
		t.Error("topic zero exists after a refused create")
	}

	out := mustPulse(t, "", with("topics", "alter", "kv", "--tombstone-retention", "30m")...)
	if !strings.HasPrefix(out, "altered topic kv: ") {
		t.Errorf("alter printed %q", out)
	}
	if ms := tombstoneMs("kv"); ms != 30*60*1000 {
		t.Fatalf("after alter --tombstone-retention 30m: %d ms", ms)
	}
	if out := mustPulse(t, "", with("topics", "describe", "kv")...); !strings.Contains(out, "  tombstones  kept 30m\n") {
		t.Errorf("describe kv after the alter:\n%s", out)
	}
	mustPulse(t, "", with("topics", "alter", "kv", "--tombstone-retention-ms", "1")...)
	if ms := tombstoneMs("kv"); ms != 1 {
		t.Fatalf("after alter --tombstone-retention-ms 1: %d ms", ms)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--tombstone-retention", "0", "--retention", "1h"}, "tombstone_retention_ms 0: want at least 1"},
		{[]string{"--tombstone-retention", "7x"}, `invalid argument "7x" for "--tombstone-retention" flag`},
		{[]string{"--tombstone-retention-ms", "1h"}, `"1h" is not a number of milliseconds (--tombstone-retention takes 7d, 1h30m)`},
	} {
		_, errOut, err := pulse(t, "", append(with("topics", "alter", "kv"), bad.args...)...)
		if err == nil || !strings.Contains(errOut, bad.says) {
			t.Errorf("alter %v: %v, stderr %q; want %q", bad.args, err, errOut, bad.says)
		}
	}
	if ms := tombstoneMs("kv"); ms != 1 {
		t.Fatalf("refused alters changed the tombstone retention: %d ms", ms)
	}
	var ti wire.TopicInfo
	if err := json.Unmarshal([]byte(mustPulse(t, "", with("topics", "describe", "kv", "--json")...)), &ti); err != nil || ti.Config.RetentionMs != 0 {
		t.Fatalf("a refused alter changed the retention: %+v %v", ti.Config, err)
	}
	if _, errOut, err := pulse(t, "", with("topics", "alter", "kv")...); err == nil || !strings.Contains(errOut, "--cleanup or --tombstone-retention)") {
		t.Errorf("alter without flags: %v %q", err, errOut)
	}
}
