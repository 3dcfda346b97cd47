package wsapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/wsapi/wire"
)

// alter_topic changes what it names, refuses what is invalid with
// invalid_config and then changes nothing; consumers and
// offset_for_time answer, and bad requests name what is missing.
func TestAlterConsumersOffsetForTime(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "create_topic", "topic": "orders", "config": map[string]any{"partitions": 2}}); errCode(r) != "" {
		t.Fatalf("create: %v", r)
	}
	r := c.call(2, map[string]any{"op": "alter_topic", "topic": "orders", "alter": map[string]any{"retention_ms": 3600000, "cleanup": "compact"}})
	cfg, _ := r["topic"].(map[string]any)["config"].(map[string]any)
	if errCode(r) != "" || cfg["retention_ms"] != float64(3600000) || cfg["cleanup"] != "compact" {
		t.Fatalf("alter: %v", r)
	}
	for i, bad := range []struct {
		alter map[string]any
		code  string
		says  string
	}{
		{map[string]any{"partitions": 1}, wire.CodeInvalidConfig, "never shrink"},
		{map[string]any{"partitions": 2000000}, wire.CodeInvalidConfig, "partitions 2000000"},
		{map[string]any{"sync_mode": "sometimes", "retention_ms": 0}, wire.CodeInvalidConfig, `sync_mode "sometimes"`},
		{map[string]any{"segment_bytes": 0}, wire.CodeInvalidConfig, "segment_bytes 0"},
		{map[string]any{"segment_bytes": 1 << 31, "retention_ms": 0}, wire.CodeInvalidConfig, "segment_bytes 2147483648"},
		{map[string]any{"cleanup": "shred"}, wire.CodeInvalidConfig, `cleanup "shred"`},
		{map[string]any{"retention_bytes": -1}, wire.CodeInvalidConfig, "must not be negative"},
	} {
		r := c.call(10+i, map[string]any{"op": "alter_topic", "topic": "orders", "alter": bad.alter})
		msg, _ := r["error"].(map[string]any)["message"].(string)
		if errCode(r) != bad.code || !strings.Contains(msg, bad.says) {
			t.Errorf("alter %v: %v", bad.alter, r)
		}
	}
	if r := c.call(20, map[string]any{"op": "alter_topic", "topic": "orders"}); errCode(r) != wire.CodeInvalidRequest {
		t.Errorf("alter without alter: %v", r)
	}
	// Nothing the refusals touched changed.
	r = c.call(21, map[string]any{"op": "describe", "topic": "orders"})
	cfg, _ = r["topic"].(map[string]any)["config"].(map[string]any)
	if cfg["retention_ms"] != float64(3600000) || cfg["partitions"] != float64(2) || cfg["sync_mode"] != "every-write" {
		t.Fatalf("after refused alters: %v", cfg)
	}

	// consumers and offset_for_time.
	before := time.Now().UnixMilli() - 1
	if r := c.call(30, map[string]any{"op": "produce", "topic": "orders", "partition": 1, "records": []any{map[string]any{"value": "a"}, map[string]any{"value": "b"}}}); errCode(r) != "" {
		t.Fatalf("produce: %v", r)
	}
	if r := c.call(31, map[string]any{"op": "commit", "consumer": "billing", "topic": "orders", "partition": 1, "offset": 1}); errCode(r) != "" {
		t.Fatalf("commit: %v", r)
	}
	r = c.call(32, map[string]any{"op": "consumers", "topic": "orders"})
	cs, _ := r["topic"].(map[string]any)["consumers"].([]any)
	if len(cs) != 1 {
		t.Fatalf("consumers: %v", r)
	}
	if cc := cs[0].(map[string]any); cc["consumer"] != "billing" || cc["partition"] != float64(1) || cc["offset"] != float64(1) || cc["lag"] != float64(1) {
		t.Fatalf("consumer: %v", cc)
	}
	if r := c.call(33, map[string]any{"op": "offset_for_time", "topic": "orders", "partition": 1, "timestamp": before}); errCode(r) != "" || r["offset"] != float64(0) {
		t.Fatalf("offset_for_time before the records: %v", r)
	}
	if r := c.call(34, map[string]any{"op": "offset_for_time", "topic": "orders", "partition": 1, "timestamp": time.Now().UnixMilli() + 60000}); r["offset"] != float64(2) {
		t.Fatalf("offset_for_time after the records (the HWM): %v", r)
	}
	if r := c.call(35, map[string]any{"op": "offset_for_time", "topic": "orders", "partition": 1}); errCode(r) != wire.CodeInvalidRequest {
		t.Fatalf("offset_for_time without a timestamp: %v", r)
	}
	if r := c.call(36, map[string]any{"op": "consumers", "topic": "nosuch"}); errCode(r) != wire.CodeTopicNotFound {
		t.Fatalf("consumers of a missing topic: %v", r)
	}
}

// alter_topic grows partitions, changes the segment size and the sync
// mode live: the reply and describe show them, the new partition takes
// produces and serves a subscription at once, and a topic-wide
// subscription made before the grow (on another connection) follows it.
func TestAlterTopicGrowsAndChangesLive(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "create_topic", "topic": "orders", "config": map[string]any{"partitions": 2}}); errCode(r) != "" {
		t.Fatalf("create: %v", r)
	}
	watcher := dialRaw(t, s.addr, "/v1/ws", nil)
	if r := watcher.call(1, map[string]any{"op": "subscribe", "topic": "orders", "from": "latest"}); errCode(r) != "" {
		t.Fatalf("topic-wide subscribe: %v", r)
	}
	tail := dialRaw(t, s.addr, "/v1/topics/orders/tail?from=latest", nil)
	r := c.call(2, map[string]any{"op": "alter_topic", "topic": "orders", "alter": map[string]any{"partitions": 3, "segment_bytes": 1 << 20, "sync_mode": "interval"}})
	top, _ := r["topic"].(map[string]any)
	cfg, _ := top["config"].(map[string]any)
	parts, _ := top["partitions"].([]any)
	if errCode(r) != "" || cfg["partitions"] != float64(3) || len(parts) != 3 || cfg["segment_bytes"] != float64(1<<20) || cfg["sync_mode"] != "interval" {
		t.Fatalf("alter: %v", r)
	}
	r = c.call(3, map[string]any{"op": "produce", "topic": "orders", "partition": 2, "value": "on the new partition"})
	if errCode(r) != "" || r["partition"] != float64(2) || r["offset"] != float64(0) {
		t.Fatalf("produce to the new partition: %v", r)
	}
	c.call(4, map[string]any{"op": "subscribe", "topic": "orders", "partition": 2, "from": "earliest"})
	got := c.waitFor(func(m map[string]any) bool { return m["records"] != nil })
	recs, _ := got["records"].([]any)
	if len(recs) != 1 || recs[0].(map[string]any)["value"] != "on the new partition" {
		t.Fatalf("subscription to the new partition: %v", got)
	}
	info, err := s.eng.Describe("orders")
	if err != nil || len(info.Partitions) != 3 || info.Config.SegmentMaxBytes != 1<<20 || info.Config.SyncMode != "interval" {
		t.Fatalf("engine after alter: %+v %v", info.Config, err)
	}
	got = watcher.waitFor(func(m map[string]any) bool { return m["records"] != nil })
	recs, _ = got["records"].([]any)
	if got["partition"] != float64(2) || len(recs) != 1 || recs[0].(map[string]any)["value"] != "on the new partition" {
		t.Fatalf("the subscription made before the grow got %v", got)
	}
	if m := tail.next(); m["partition"] != float64(2) || m["value"] != "on the new partition" {
		t.Fatalf("the tail endpoint opened before the grow got %v", m)
	}
}

// delete_consumer deletes a consumer's cursors on one topic or all, a dry
// run lists them and changes nothing, a second delete is
// consumer_not_found; consumers with "consumer" lists only that one.
func TestDeleteConsumer(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	for i, tp := range []string{"orders", "users"} {
		if r := c.call(1+i, map[string]any{"op": "create_topic", "topic": tp, "config": map[string]any{"partitions": 2}}); errCode(r) != "" {
			t.Fatalf("create: %v", r)
		}
		if r := c.call(3+i, map[string]any{"op": "produce", "topic": tp, "partition": 1, "records": []any{map[string]any{"value": "a"}, map[string]any{"value": "b"}}}); errCode(r) != "" {
			t.Fatalf("produce: %v", r)
		}
	}
	for i, cm := range []map[string]any{
		{"consumer": "billing", "topic": "orders", "partition": 1, "offset": 1},
		{"consumer": "billing", "topic": "users", "partition": 1, "offset": 2},
		{"consumer": "audit", "topic": "orders", "partition": 1, "offset": 0},
	} {
		cm["op"] = "commit"
		if r := c.call(10+i, cm); errCode(r) != "" {
			t.Fatalf("commit %v: %v", cm, r)
		}
	}
	r := c.call(20, map[string]any{"op": "delete_consumer", "consumer": "billing", "topic": "orders", "dry_run": true})
	dc, _ := r["consumer"].(map[string]any)
	cur, _ := dc["cursors"].([]any)
	if errCode(r) != "" || dc["dry_run"] != true || len(cur) != 1 || cur[0].(map[string]any)["lag"] != float64(1) {
		t.Fatalf("dry run: %v", r)
	}
	r = c.call(21, map[string]any{"op": "consumers", "topic": "orders", "consumer": "billing"})
	if cs, _ := r["topic"].(map[string]any)["consumers"].([]any); len(cs) != 1 {
		t.Fatalf("billing on orders after the dry run: %v", r)
	}
	r = c.call(22, map[string]any{"op": "delete_consumer", "consumer": "billing"})
	dc, _ = r["consumer"].(map[string]any)
	cur, _ = dc["cursors"].([]any)
	if errCode(r) != "" || dc["dry_run"] != false || len(cur) != 2 {
		t.Fatalf("delete billing everywhere: %v", r)
	}
	r = c.call(23, map[string]any{"op": "consumers", "topic": "orders"})
	cs, _ := r["topic"].(map[string]any)["consumers"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["consumer"] != "audit" {
		t.Fatalf("orders after the delete: %v", r)
	}
	for i, bad := range []struct {
		req  map[string]any
		code string
	}{
		{map[string]any{"consumer": "billing"}, wire.CodeConsumerNotFound},
		{map[string]any{"consumer": "audit", "topic": "users"}, wire.CodeConsumerNotFound},
		{map[string]any{"consumer": "audit", "topic": "nosuch"}, wire.CodeTopicNotFound},
		{map[string]any{}, wire.CodeInvalidRequest},
		{map[string]any{"consumer": "a/b"}, wire.CodeInvalidRequest},
		{map[string]any{"consumer": "audit", "dry_run": "yes"}, wire.CodeInvalidRequest},
	} {
		bad.req["op"] = "delete_consumer"
		if r := c.call(30+i, bad.req); errCode(r) != bad.code {
			t.Errorf("delete_consumer %v: %v, want %s", bad.req, r, bad.code)
		}
	}
	if cs, _ := s.eng.Consumers("orders"); len(cs) != 1 {
		t.Fatalf("refused deletes changed cursors: %+v", cs)
	}
}

// alter_topic refuses a field it cannot change (the codec, protect_cursors,
// a misspelt name) instead of replying as if it had changed it,
// and a field of the wrong type is named; nothing changes either way.
func TestAlterRefusesFieldsItDoesNotChange(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	if r := c.call(1, map[string]any{"op": "create_topic", "topic": "orders", "config": map[string]any{"codec": "zstd"}}); errCode(r) != "" {
		t.Fatalf("create: %v", r)
	}
	for i, bad := range []struct {
		alter map[string]any
		code  string
		says  string
	}{
		{map[string]any{"codec": "none"}, wire.CodeInvalidConfig, `"codec"`},
		{map[string]any{"protect_cursors": true, "retention_ms": 5}, wire.CodeInvalidConfig, `"protect_cursors"`},
		{map[string]any{"retention_msec": 5}, wire.CodeInvalidConfig, `"retention_msec"`},
		{map[string]any{"partitions": "7"}, wire.CodeInvalidRequest, `field "alter.partitions": got string, want an integer`},
		{map[string]any{"cleanup": 1}, wire.CodeInvalidRequest, `field "alter.cleanup"`},
	} {
		r := c.call(10+i, map[string]any{"op": "alter_topic", "topic": "orders", "alter": bad.alter})
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if errCode(r) != bad.code || !strings.Contains(msg, bad.says) {
			t.Errorf("alter %v: %v, want %s naming %s", bad.alter, r, bad.code, bad.says)
		}
	}
	if r := c.call(20, map[string]any{"op": "alter_topic", "topic": "orders", "alter": []any{1}}); errCode(r) != wire.CodeInvalidRequest {
		t.Errorf("alter that is not an object: %v", r)
	}
	r := c.call(21, map[string]any{"op": "describe", "topic": "orders"})
	cfg, _ := r["topic"].(map[string]any)["config"].(map[string]any)
	if cfg["codec"] != "zstd" || cfg["retention_ms"] != float64(0) || cfg["tombstone_retention_ms"] != float64(86400000) || cfg["protect_cursors"] != nil {
		t.Fatalf("after refused alters: %v", cfg)
	}
	// Every field the reply's config shows that alter_topic changes is
	// accepted, with the value it already has.
	same := map[string]any{"retention_ms": 0, "retention_bytes": 0, "cleanup": "delete", "segment_bytes": cfg["segment_bytes"], "sync_mode": "every-write", "partitions": 1,
		"tombstone_retention_ms": cfg["tombstone_retention_ms"]}
	if r := c.call(22, map[string]any{"op": "alter_topic", "topic": "orders", "alter": same}); errCode(r) != "" {
		t.Fatalf("alter to the same values: %v", r)
	}
}

// A retention in milliseconds too long for a time.Duration (over about
// 292 years) is refused naming the field and its bound, not as a
// "negative retention" it never was; the bound itself is accepted.
func TestRetentionMsPastDurationIsNamed(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	const most = int64(9223372036854) // math.MaxInt64 ns, in whole ms
	for i, tc := range []struct {
		req   map[string]any
		field string
	}{
		{map[string]any{"op": "create_topic", "topic": "a", "config": map[string]any{"retention_ms": most + 1}}, "retention_ms"},
		{map[string]any{"op": "create_topic", "topic": "b", "config": map[string]any{"tombstone_retention_ms": int64(9300000000000)}}, "tombstone_retention_ms"},
		{map[string]any{"op": "create_topic", "topic": "c", "config": map[string]any{"retention_ms": int64(1) << 62}}, "retention_ms"},
	} {
		r := c.call(1+i, tc.req)
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if errCode(r) != wire.CodeInvalidConfig || !strings.Contains(msg, tc.field) || strings.Contains(msg, "negative") {
			t.Errorf("%v: %v, want invalid_config naming %s", tc.req, r, tc.field)
		}
	}
	if dirs := topicDirs(t, s.dir); len(dirs) != 0 {
		t.Errorf("refused creates made %v", dirs)
	}
	if r := c.call(10, map[string]any{"op": "create_topic", "topic": "d", "config": map[string]any{"retention_ms": most, "tombstone_retention_ms": most}}); errCode(r) != "" {
		t.Fatalf("retention at the bound: %v", r)
	}
	r := c.call(11, map[string]any{"op": "alter_topic", "topic": "d", "alter": map[string]any{"retention_ms": most + 1}})
	e, _ := r["error"].(map[string]any)
	if msg, _ := e["message"].(string); errCode(r) != wire.CodeInvalidConfig || !strings.Contains(msg, "retention_ms") || strings.Contains(msg, "negative") {
		t.Errorf("alter past the bound: %v", r)
	}
	r = c.call(12, map[string]any{"op": "describe", "topic": "d"})
	cfg, _ := r["topic"].(map[string]any)["config"].(map[string]any)
	if cfg["retention_ms"] != float64(most) || cfg["tombstone_retention_ms"] != float64(most) {
		t.Errorf("config at the bound: %v", cfg)
	}
}

// create_topic refuses a config field it does not know (a misspelt
// "retention", say) instead of creating the topic without it; nothing is
// created.
func TestCreateTopicRefusesUnknownConfigFields(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	for i, cfg := range []map[string]any{
		{"retention": "7d"},
		{"partitions": 2, "retention_msec": 5},
		{"segment": 1 << 20},
	} {
		r := c.call(1+i, map[string]any{"op": "create_topic", "topic": "t" + strconv.Itoa(i), "config": cfg})
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if errCode(r) != wire.CodeInvalidConfig || !strings.Contains(msg, "config: unknown field") {
			t.Errorf("create_topic with %v: %v, want invalid_config naming the field", cfg, r)
		}
	}
	if dirs := topicDirs(t, s.dir); len(dirs) != 0 {
		t.Errorf("refused creates made %v", dirs)
	}
	every := map[string]any{"partitions": 2, "codec": "none", "segment_bytes": 1 << 20, "sync_mode": "interval",
		"retention_ms": 1, "retention_bytes": 1, "cleanup": "compact", "tombstone_retention_ms": 1, "protect_cursors": true}
	if r := c.call(10, map[string]any{"op": "create_topic", "topic": "every", "config": every}); errCode(r) != "" {
		t.Fatalf("create_topic with every field: %v", r)
	}
}

// create_topic with a negative config value names the field that is
// negative, as alter_topic does, and creates nothing.
func TestCreateTopicNamesTheNegativeField(t *testing.T) {
	s := startServer(t, Options{})
	c := dialRaw(t, s.addr, "/v1/ws", nil)
	for i, f := range []string{"partitions", "segment_bytes", "retention_ms", "retention_bytes", "tombstone_retention_ms"} {
		r := c.call(1+i, map[string]any{"op": "create_topic", "topic": "t" + strconv.Itoa(i),
			"config": map[string]any{"partitions": 2, f: -5}})
		e, _ := r["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if want := f + " -5: must not be negative"; errCode(r) != wire.CodeInvalidConfig || msg != want {
			t.Errorf("create_topic with %s -5: %v, want invalid_config %q", f, r, want)
		}
	}
	if dirs := topicDirs(t, s.dir); len(dirs) != 0 {
		t.Errorf("refused creates made %v", dirs)
	}
}
