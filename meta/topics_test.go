package meta

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestTopicCreateGetList(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	cfg := json.RawMessage(`{"partitions": 3, "codec": "none"}`)
	if err := s.PutTopic(Topic{Name: "orders", Partitions: 3, Config: cfg, CreatedAt: created}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTopic(Topic{Name: "audit.log", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	err := s.PutTopic(Topic{Name: "orders", Partitions: 1})
	if !errors.Is(err, ErrTopicExists) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("duplicate create: %v", err)
	}
	s.Close()

	s = openStore(t, dir)
	got, err := s.GetTopic("orders")
	if err != nil {
		t.Fatal(err)
	}
	want := Topic{Name: "orders", Partitions: 3, Config: json.RawMessage(`{"partitions":3,"codec":"none"}`), CreatedAt: created, State: TopicActive}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	list, err := s.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "audit.log" || list[1].Name != "orders" {
		t.Fatalf("list %+v", list)
	}
	if string(list[0].Config) != "{}" || list[0].CreatedAt.IsZero() {
		t.Fatalf("defaults not applied: %+v", list[0])
	}
	parts, err := s.Partitions("orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("partitions %+v", parts)
	}
	for i, p := range parts {
		if p.Topic != "orders" || p.Partition != i || !p.CreatedAt.Equal(created) {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
	if _, err := s.GetTopic("nope"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	mustClean(t, s)
}

func TestPartitionsSortNumerically(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.PutTopic(Topic{Name: "wide", Partitions: 12}); err != nil {
		t.Fatal(err)
	}
	// "wide.x" sorts between "wide/" keys' neighbours and must not leak in.
	if err := s.PutTopic(Topic{Name: "wide.x", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	parts, err := s.Partitions("wide")
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 12 {
		t.Fatalf("%d partitions", len(parts))
	}
	for i, p := range parts {
		if p.Partition != i || p.Topic != "wide" {
			t.Fatalf("position %d: %+v", i, p)
		}
	}
}

func TestBadTopicInputChangesNothing(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.PutTopic(Topic{Name: "ok", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Dump()
	cases := []struct {
		topic Topic
		want  error
	}{
		{Topic{Name: "", Partitions: 1}, ErrInvalidTopic},
		{Topic{Name: "a/b", Partitions: 1}, ErrInvalidTopic},
		{Topic{Name: "..", Partitions: 1}, ErrInvalidTopic},
		{Topic{Name: strings.Repeat("x", 250), Partitions: 1}, ErrInvalidTopic},
		{Topic{Name: "x", Partitions: 0}, ErrInvalidPartition},
		{Topic{Name: "x", Partitions: MaxPartitions + 1}, ErrInvalidPartition},
		{Topic{Name: "x", Partitions: 1, Config: json.RawMessage(`{"a":`)}, ErrInvalidConfig},
	}
	for _, c := range cases {
		if err := s.PutTopic(c.topic); !errors.Is(err, c.want) {
			t.Errorf("PutTopic(%.20q, %d): %v, want %v", c.topic.Name, c.topic.Partitions, err, c.want)
		}
	}
	if err := s.UpdateTopicConfig("ok", json.RawMessage("nope")); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad config update: %v", err)
	}
	if err := s.UpdateTopicConfig("missing", json.RawMessage("{}")); !errors.Is(err, ErrTopicNotFound) {
		t.Errorf("config update of missing topic: %v", err)
	}
	after, _ := s.Dump()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("bad input changed the store:\nbefore %v\nafter  %v", before, after)
	}
}

func TestUpdateTopicConfig(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "t", Partitions: 2, Config: json.RawMessage(`{"v":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateTopicConfig("t", json.RawMessage(`{"v":2}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dir)
	got, err := s.GetTopic("t")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Config) != `{"v":2}` || got.Partitions != 2 || got.State != TopicActive {
		t.Fatalf("after update: %+v", got)
	}
}

// populate creates topic with partitions, cursors of two consumers and a
// report per partition.
func populate(t *testing.T, s *Store, topic string, partitions int) {
	t.Helper()
	if err := s.PutTopic(Topic{Name: topic, Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	for p := 0; p < partitions; p++ {
		for _, c := range []string{"alpha", "beta"} {
			if err := s.CommitCursor(c, topic, p, int64(10*p+1)); err != nil {
				t.Fatal(err)
			}
		}
		for _, kind := range []string{ReportRecovery, ReportCompaction} {
			if err := s.PutReport(kind, topic, p, []byte(`{"p":1}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// keysOf returns the keys of a bucket.
func keysOf(t *testing.T, s *Store, bucket string) []string {
	t.Helper()
	var keys []string
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucket)).ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestDeleteIsCrashSafeBetweenCommits(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	populate(t, s, "doomed", 3)
	populate(t, s, "doomed2", 1) // a name sharing the prefix must survive
	populate(t, s, "kept", 2)

	if err := s.DeleteTopic("doomed"); !errors.Is(err, ErrTopicNotDeleting) {
		t.Fatalf("delete without mark: %v", err)
	}
	if err := s.MarkTopicDeleting("doomed"); err != nil {
		t.Fatal(err)
	}
	// The crash: the process dies after the first commit. Reopen.
	s.Close()
	s = openStore(t, dir)

	got, err := s.GetTopic("doomed")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != TopicDeleting {
		t.Fatalf("state after reopen: %q", got.State)
	}
	// While deleting, nothing new may attach to it, and its name is taken.
	if err := s.CommitCursor("alpha", "doomed", 0, 99); !errors.Is(err, ErrTopicDeleting) || !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("cursor on deleting topic: %v", err)
	}
	if err := s.PutReport(ReportCompaction, "doomed", 0, nil); !errors.Is(err, ErrTopicDeleting) {
		t.Fatalf("report on deleting topic: %v", err)
	}
	if err := s.UpdateTopicConfig("doomed", json.RawMessage(`{}`)); !errors.Is(err, ErrTopicDeleting) {
		t.Fatalf("config on deleting topic: %v", err)
	}
	if err := s.PutTopic(Topic{Name: "doomed", Partitions: 1}); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("recreate while deleting: %v", err)
	}
	if err := s.MarkTopicDeleting("doomed"); err != nil {
		t.Fatalf("mark twice: %v", err)
	}
	mustClean(t, s)

	// Startup finishes what it finds in state deleting.
	topics, err := s.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	finished := 0
	for _, tp := range topics {
		if tp.State == TopicDeleting {
			if err := s.DeleteTopic(tp.Name); err != nil {
				t.Fatal(err)
			}
			finished++
		}
	}
	if finished != 1 {
		t.Fatalf("finished %d deletes", finished)
	}
	s.Close()
	s = openStore(t, dir)

	if _, err := s.GetTopic("doomed"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("deleted topic: %v", err)
	}
	for _, b := range []string{BucketPartitions, BucketCursors, BucketReports} {
		for _, k := range keysOf(t, s, b) {
			if strings.Contains(k, "doomed/") {
				t.Errorf("bucket %s still has %s", b, k)
			}
		}
	}
	for _, topic := range []string{"doomed2", "kept"} {
		cs, err := s.ListCursors(topic)
		if err != nil {
			t.Fatal(err)
		}
		tp, err := s.GetTopic(topic)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 2*tp.Partitions {
			t.Errorf("%s lost cursors: %+v", topic, cs)
		}
	}
	if rs, _ := s.ListReports(ReportRecovery); len(rs) != 3 {
		t.Errorf("reports left: %+v", rs)
	}
	mustClean(t, s)

	// The name is free again, and the new topic starts with nothing.
	if err := s.PutTopic(Topic{Name: "doomed", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Cursor("alpha", "doomed", 0); ok || err != nil {
		t.Fatalf("recreated topic inherited a cursor: %v %v", ok, err)
	}
	if err := s.DeleteTopic("never"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("delete of missing topic: %v", err)
	}
}

// putRaw writes key=value into bucket, bypassing every check.
func putRaw(t *testing.T, s *Store, bucket, key string, value []byte) {
	t.Helper()
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucket)).Put([]byte(key), value)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestGarbageValuesAreCorruptErrors(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	populate(t, s, "good", 2)
	cases := []struct {
		bucket, key string
		value       []byte
		read        func() error
	}{
		{BucketTopics, "good", []byte("\x00garbage"), func() error { _, err := s.GetTopic("good"); return err }},
		{BucketTopics, "good", []byte(`{"name":"other","partitions":2,"config":{},"state":"active"}`), func() error { _, err := s.ListTopics(); return err }},
		{BucketTopics, "good", []byte(`{"name":"good","partitions":-1,"config":{},"state":"active"}`), func() error { _, err := s.GetTopic("good"); return err }},
		{BucketTopics, "good", []byte(`{"name":"good","partitions":2,"config":{},"state":"zombie"}`), func() error { _, err := s.GetTopic("good"); return err }},
		{BucketTopics, "good", []byte(`{"name":"good","partitions":2,"state":"active"}`), func() error { _, err := s.GetTopic("good"); return err }},
		{BucketPartitions, "good/1", []byte("{{"), func() error { _, err := s.Partitions("good"); return err }},
		{BucketPartitions, "good/1", []byte(`{"topic":"good","partition":0}`), func() error { _, err := s.Partitions("good"); return err }},
		{BucketCursors, "alpha/good/1", []byte{1, 2, 3}, func() error { _, _, err := s.Cursor("alpha", "good", 1); return err }},
		{BucketCursors, "alpha/good/1", encodeInt64(-5), func() error { _, err := s.ListCursors("good"); return err }},
		{BucketCursors, "alpha/good/01", encodeInt64(5), func() error { _, err := s.ListCursors(""); return err }},
		{BucketIdentity, keyClusterCurrent, []byte("no-such-cluster"), func() error { _, err := s.Identity(); return err }},
	}
	for _, c := range cases {
		var old []byte
		s.db.View(func(tx *bolt.Tx) error {
			old = append([]byte(nil), tx.Bucket([]byte(c.bucket)).Get([]byte(c.key))...)
			return nil
		})
		putRaw(t, s, c.bucket, c.key, c.value)
		err := c.read()
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
			t.Errorf("%s/%s = %q: read gave %v, want a CorruptError", c.bucket, c.key, c.value, err)
		} else if ce.Bucket != c.bucket || ce.Key != c.key && !(c.bucket == BucketIdentity) {
			t.Errorf("%s/%s: error names %s/%s: %v", c.bucket, c.key, ce.Bucket, ce.Key, err)
		} else if !strings.Contains(err.Error(), c.bucket) {
			t.Errorf("%s/%s: message %q does not name the bucket", c.bucket, c.key, err)
		}
		problems, err := s.Check()
		if err != nil || len(problems) == 0 {
			t.Errorf("%s/%s: Check found nothing (%v)", c.bucket, c.key, err)
		}
		// Restore (or remove a key that did not exist) for the next case.
		if err := s.db.Update(func(tx *bolt.Tx) error {
			if len(old) == 0 {
				return tx.Bucket([]byte(c.bucket)).Delete([]byte(c.key))
			}
			return tx.Bucket([]byte(c.bucket)).Put([]byte(c.key), old)
		}); err != nil {
			t.Fatal(err)
		}
		mustClean(t, s)
	}
}

func TestCheckFindsDanglingRecords(t *testing.T) {
	s := openStore(t, t.TempDir())
	populate(t, s, "t", 2)
	putRaw(t, s, BucketPartitions, "t/2", []byte(`{"topic":"t","partition":2}`))
	putRaw(t, s, BucketCursors, "c/ghost/0", encodeInt64(1))
	putRaw(t, s, BucketReports, "recovery/t/7", []byte("{}"))
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(BucketPartitions)).Delete([]byte("t/0"))
	}); err != nil {
		t.Fatal(err)
	}
	problems, err := s.Check()
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, p := range problems {
		if !errors.Is(p, ErrCorrupt) {
			t.Errorf("problem %v is not ErrCorrupt", p)
		}
		text = append(text, p.Error())
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{`"t/2"`, `"c/ghost/0"`, `"recovery/t/7"`, "partition 0 has no record"} {
		if !strings.Contains(all, want) {
			t.Errorf("Check did not report %s; got:\n%s", want, all)
		}
	}
	if len(problems) != 4 {
		t.Errorf("%d problems, want 4:\n%s", len(problems), all)
	}
}

// UndoGrowTopic takes back a grow whose partitions never opened: the count,
// the partition records and anything stored for those partitions go back,
// the config it is given stays, and it never raises a count.
func TestUndoGrowTopic(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "orders", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.GrowTopic("orders", 3, json.RawMessage(`{"n":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCursor("billing", "orders", 2, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.UndoGrowTopic("orders", 4, json.RawMessage(`{}`)); !errors.Is(err, ErrInvalidPartition) {
		t.Fatalf("undo to more partitions: %v, want ErrInvalidPartition", err)
	}
	if err := s.UndoGrowTopic("orders", 1, json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dir)
	got, err := s.GetTopic("orders")
	if err != nil || got.Partitions != 1 || string(got.Config) != `{"n":1}` {
		t.Fatalf("after the undo: %+v, %v", got, err)
	}
	ps, err := s.Partitions("orders")
	if err != nil || len(ps) != 1 {
		t.Fatalf("partition records after the undo: %+v, %v", ps, err)
	}
	if _, ok, err := s.Cursor("billing", "orders", 2); ok || err != nil {
		t.Fatalf("a cursor of an undone partition is still there (%v)", err)
	}
}
