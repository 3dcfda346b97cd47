package meta

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestCursorRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "orders", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTopic(Topic{Name: "users", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Cursor("billing", "orders", 0); ok || err != nil {
		t.Fatalf("cursor before commit: ok=%v err=%v", ok, err)
	}
	commits := []Cursor{
		{"billing", "orders", 0, 5},
		{"billing", "orders", 2, 1 << 40},
		{"billing", "orders", 0, 7}, // overwrites
		{"shipping svc ☃", "orders", 1, 0},
		{"billing", "users", 0, 3},
	}
	for _, c := range commits {
		if err := s.CommitCursor(c.Consumer, c.Topic, c.Partition, c.Offset); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = openStore(t, dir)

	off, ok, err := s.Cursor("billing", "orders", 0)
	if err != nil || !ok || off != 7 {
		t.Fatalf("cursor billing/orders/0 = %d %v %v, want 7", off, ok, err)
	}
	got, err := s.ListCursors("orders")
	if err != nil {
		t.Fatal(err)
	}
	want := []Cursor{
		{"billing", "orders", 0, 7},
		{"billing", "orders", 2, 1 << 40},
		{"shipping svc ☃", "orders", 1, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListCursors(orders)\n got %+v\nwant %+v", got, want)
	}
	all, err := s.ListCursors("")
	if err != nil || len(all) != 4 || all[3].Topic != "users" {
		t.Fatalf("ListCursors(\"\") = %+v, %v", all, err)
	}

	if err := s.DeleteConsumer("billing"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConsumer("billing"); !errors.Is(err, ErrConsumerNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// A consumer whose name extends "billing" is a different consumer.
	if err := s.CommitCursor("billing-2", "users", 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConsumer("billing"); !errors.Is(err, ErrConsumerNotFound) {
		t.Fatalf("delete matched a longer name: %v", err)
	}
	all, _ = s.ListCursors("")
	if len(all) != 2 || all[0].Consumer != "shipping svc ☃" || all[1].Consumer != "billing-2" {
		t.Fatalf("after delete: %+v", all)
	}
	mustClean(t, s)
}

func TestCursorBadInputChangesNothing(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.PutTopic(Topic{Name: "t", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCursor("c", "t", 1, 10); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		consumer, topic string
		p               int
		off             int64
		want            error
	}{
		{"", "t", 0, 1, ErrInvalidConsumer},
		{"a/b", "t", 0, 1, ErrInvalidConsumer},
		{"a\x00b", "t", 0, 1, ErrInvalidConsumer},
		{strings.Repeat("c", 250), "t", 0, 1, ErrInvalidConsumer},
		{"c", "t", 0, -1, ErrInvalidOffset},
		{"c", "t", 2, 1, ErrInvalidPartition},
		{"c", "t", -1, 1, ErrInvalidPartition},
		{"c", "missing", 0, 1, ErrTopicNotFound},
		{"c", "bad/name", 0, 1, ErrInvalidTopic},
	}
	before, _ := s.Dump()
	for _, c := range cases {
		err := s.CommitCursor(c.consumer, c.topic, c.p, c.off)
		if !errors.Is(err, c.want) {
			t.Errorf("CommitCursor(%.20q, %q, %d, %d) = %v, want %v", c.consumer, c.topic, c.p, c.off, err, c.want)
		}
	}
	after, _ := s.Dump()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("bad input changed the store")
	}
	if err := ValidateConsumerName(strings.Repeat("c", 249)); err != nil {
		t.Fatalf("249-byte name refused: %v", err)
	}
	if _, _, err := s.Cursor("a/b", "t", 0); !errors.Is(err, ErrInvalidConsumer) {
		t.Fatalf("Cursor with bad consumer: %v", err)
	}
	if err := s.DeleteConsumer(""); !errors.Is(err, ErrInvalidConsumer) {
		t.Fatalf("DeleteConsumer(\"\"): %v", err)
	}
}

func TestReports(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "b", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTopic(Topic{Name: "a", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	puts := []Report{
		{ReportRecovery, "b", 1, []byte(`{"path":"full"}`)},
		{ReportRecovery, "b", 0, []byte(`{"path":"snapshot"}`)},
		{ReportRecovery, "a", 0, []byte("opaque \x00 bytes")},
		{ReportCompaction, "b", 0, []byte(`{"outcome":"compacted"}`)},
		{ReportCompaction, "b", 0, []byte(`{"outcome":"skipped"}`)}, // replaces
	}
	for _, r := range puts {
		if err := s.PutReport(r.Kind, r.Topic, r.Partition, r.Data); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = openStore(t, dir)
	data, ok, err := s.GetReport(ReportCompaction, "b", 0)
	if err != nil || !ok || string(data) != `{"outcome":"skipped"}` {
		t.Fatalf("GetReport = %q %v %v", data, ok, err)
	}
	if _, ok, err := s.GetReport(ReportRetention, "b", 0); ok || err != nil {
		t.Fatalf("missing report: %v %v", ok, err)
	}
	got, err := s.ListReports(ReportRecovery)
	if err != nil {
		t.Fatal(err)
	}
	want := []Report{puts[2], puts[1], puts[0]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListReports\n got %+v\nwant %+v", got, want)
	}
	before, _ := s.Dump()
	for _, c := range []struct {
		kind, topic string
		p           int
		want        error
	}{
		{"", "a", 0, ErrInvalidReportKind},
		{"Recovery", "a", 0, ErrInvalidReportKind},
		{"a/b", "a", 0, ErrInvalidReportKind},
		{ReportRecovery, "a", 1, ErrInvalidPartition},
		{ReportRecovery, "zzz", 0, ErrTopicNotFound},
	} {
		if err := s.PutReport(c.kind, c.topic, c.p, []byte("x")); !errors.Is(err, c.want) {
			t.Errorf("PutReport(%q, %q, %d) = %v, want %v", c.kind, c.topic, c.p, err, c.want)
		}
	}
	after, _ := s.Dump()
	if !reflect.DeepEqual(before, after) {
		t.Fatal("bad report input changed the store")
	}
	mustClean(t, s)
}

func TestCommitCursorsIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "t", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	good := []Cursor{{"c", "t", 0, 10}, {"c", "t", 1, 20}, {"d", "t", 1, 5}}
	if err := s.CommitCursors(good); err != nil {
		t.Fatal(err)
	}
	// The last one names a partition the topic lacks: nothing is written.
	bad := []Cursor{{"c", "t", 0, 11}, {"c", "t", 1, 21}, {"c", "t", 2, 1}}
	if err := s.CommitCursors(bad); !errors.Is(err, ErrInvalidPartition) || !strings.Contains(err.Error(), "c/t/2") {
		t.Fatalf("bad batch: %v", err)
	}
	if err := s.CommitCursors([]Cursor{{"c", "t", 0, 12}, {"c", "gone", 0, 1}}); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("batch with missing topic: %v", err)
	}
	if err := s.CommitCursors([]Cursor{{"c", "t", 0, 12}, {"c/x", "t", 0, 1}}); !errors.Is(err, ErrInvalidConsumer) {
		t.Fatalf("batch with bad consumer: %v", err)
	}
	s.Close()
	s = openStore(t, dir)
	got, err := s.ListCursors("t")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, good) {
		t.Fatalf("after failed batches: %+v, want %+v", got, good)
	}
}

// TestConcurrentUse runs writers and readers together (meant for -race):
// every committed cursor is read back, and the store checks clean.
func TestConcurrentUse(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.PutTopic(Topic{Name: "shared", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*3)
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func() { // cursors
			defer wg.Done()
			c := fmt.Sprintf("c%d", w)
			for i := 0; i < rounds; i++ {
				if err := s.CommitCursor(c, "shared", i%3, int64(i)); err != nil {
					errs <- err
					return
				}
				if off, ok, err := s.Cursor(c, "shared", i%3); err != nil || !ok || off != int64(i) {
					errs <- fmt.Errorf("%s read back %d %v %v, want %d", c, off, ok, err, i)
					return
				}
			}
		}()
		go func() { // topic churn beside them
			defer wg.Done()
			for i := 0; i < rounds/5; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				for _, step := range []func() error{
					func() error { return s.PutTopic(Topic{Name: name, Partitions: 2}) },
					func() error { return s.CommitCursor("x", name, 1, 1) },
					func() error { _, err := s.ListTopics(); return err },
					func() error { return s.MarkTopicDeleting(name) },
					func() error { return s.DeleteTopic(name) },
				} {
					if err := step(); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	cs, err := s.ListCursors("")
	if err != nil || len(cs) != workers*3 {
		t.Fatalf("cursors %+v, %v", cs, err)
	}
	mustClean(t, s)
}

// DeleteCursors removes only what it names (topic, partitions), returns
// what it removed, and changes nothing when nothing matches; a topic
// whose name extends another's is another topic.
func TestDeleteCursorsByTopicAndPartition(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	for _, tp := range []Topic{{Name: "orders", Partitions: 3}, {Name: "orders2", Partitions: 1}, {Name: "users", Partitions: 1}} {
		if err := s.PutTopic(tp); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []Cursor{
		{"g", "orders", 0, 1}, {"g", "orders", 1, 2}, {"g", "orders", 2, 3},
		{"g", "orders2", 0, 4}, {"g", "users", 0, 5}, {"h", "orders", 0, 6},
	} {
		if err := s.CommitCursor(c.Consumer, c.Topic, c.Partition, c.Offset); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := s.DeleteCursors("g", "orders", []int{2, 0})
	if want := []Cursor{{"g", "orders", 0, 1}, {"g", "orders", 2, 3}}; err != nil || !reflect.DeepEqual(gone, want) {
		t.Fatalf("delete g/orders/{0,2}: %+v %v, want %+v", gone, err, want)
	}
	if _, err := s.DeleteCursors("g", "orders", []int{2}); !errors.Is(err, ErrConsumerNotFound) {
		t.Fatalf("deleting it again: %v, want ErrConsumerNotFound", err)
	}
	gone, err = s.DeleteCursors("g", "orders", nil)
	if want := []Cursor{{"g", "orders", 1, 2}}; err != nil || !reflect.DeepEqual(gone, want) {
		t.Fatalf("delete g/orders: %+v %v, want %+v (orders2 is another topic)", gone, err, want)
	}
	if _, err := s.DeleteCursors("g", "bad/topic", nil); err == nil {
		t.Fatal("a bad topic name was accepted")
	}
	s.Close()
	s = openStore(t, dir)
	all, _ := s.ListCursors("")
	want := []Cursor{{"h", "orders", 0, 6}, {"g", "orders2", 0, 4}, {"g", "users", 0, 5}}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("after the deletes and a reopen: %+v, want %+v", all, want)
	}
	gone, err = s.DeleteCursors("g", "", nil)
	if err != nil || len(gone) != 2 || gone[0].Topic != "orders2" || gone[1].Topic != "users" {
		t.Fatalf("delete every cursor of g: %+v %v", gone, err)
	}
}

// Commit metadata is stored with the offset and survives a reopen; a cursor
// written as the 8-byte offset alone (every meta.db before metadata was
// kept) reads back with no metadata; a commit without metadata clears it.
func TestCursorMetadataIsDurable(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutTopic(Topic{Name: "t", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	// The old encoding, byte for byte.
	if err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(BucketCursors)).Put(cursorKey("old", "t", 0), []byte{0, 0, 0, 0, 0, 0, 0, 42})
	}); err != nil {
		t.Fatal(err)
	}
	cs := []Cursor{{Consumer: "g", Topic: "t", Partition: 0, Offset: 7}, {Consumer: "g", Topic: "t", Partition: 1, Offset: 9}}
	if err := s.CommitCursorsMetadata(cs, []string{"state=a\x00b", ""}); err != nil {
		t.Fatal(err)
	}
	// Too long: refused, nothing changes.
	long := strings.Repeat("x", MaxCursorMetadata+1)
	err = s.CommitCursorsMetadata([]Cursor{{Consumer: "g", Topic: "t", Partition: 1, Offset: 10}}, []string{long})
	if !errors.Is(err, ErrInvalidOffset) || !strings.Contains(err.Error(), "g/t/1") {
		t.Fatalf("over-long metadata: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, dir)
	check := func(consumer string, p int, wantOff int64, wantMD string) {
		t.Helper()
		off, md, ok, err := s.CursorMetadata(consumer, "t", p)
		if err != nil || !ok || off != wantOff || md != wantMD {
			t.Fatalf("CursorMetadata(%s, t, %d) = %d, %q, %v, %v; want %d, %q", consumer, p, off, md, ok, err, wantOff, wantMD)
		}
		if off, ok, err := s.Cursor(consumer, "t", p); err != nil || !ok || off != wantOff {
			t.Fatalf("Cursor(%s, t, %d) = %d, %v, %v; want %d", consumer, p, off, ok, err, wantOff)
		}
	}
	check("old", 0, 42, "")
	check("g", 0, 7, "state=a\x00b")
	check("g", 1, 9, "")
	all, err := s.ListCursors("t")
	if err != nil || len(all) != 3 {
		t.Fatalf("ListCursors = %+v, %v", all, err)
	}
	mustClean(t, s)
	dump, err := s.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(dump[BucketCursors]["g/t/0"], " ", dump[BucketCursors]["old/t/0"]); got != "map[metadata:state=a\x00b offset:7] 42" {
		t.Errorf("dump of the cursors: %s", got)
	}
	// A websocket-style commit (offset only) clears the metadata.
	if err := s.CommitCursor("g", "t", 0, 8); err != nil {
		t.Fatal(err)
	}
	check("g", 0, 8, "")
	// A value shorter than an offset is corrupt, named by its key.
	if err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(BucketCursors)).Put(cursorKey("bad", "t", 0), []byte{1, 2, 3})
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.CursorMetadata("bad", "t", 0); err == nil || !strings.Contains(err.Error(), "bad/t/0") {
		t.Fatalf("short value: %v", err)
	}
}

// Producer ids reserved are never reserved again, across a reopen.
func TestReserveProducerIDs(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.ReserveProducerIDs(1000)
	if err != nil || a != 1 {
		t.Fatalf("first block: %d, %v", a, err)
	}
	b, err := s.ReserveProducerIDs(10)
	if err != nil || b != 1001 {
		t.Fatalf("second block: %d, %v", b, err)
	}
	if _, err := s.ReserveProducerIDs(0); err == nil {
		t.Fatal("reserving 0 ids succeeded")
	}
	s.Close()
	s = openStore(t, dir)
	c, err := s.ReserveProducerIDs(1)
	if err != nil || c != 1011 {
		t.Fatalf("after reopen: %d, %v", c, err)
	}
	mustClean(t, s)
	// The id space ends at 2^32-1.
	if err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(BucketIdentity)).Put([]byte(keyNextProducerID), []byte("4294967295"))
	}); err != nil {
		t.Fatal(err)
	}
	if id, err := s.ReserveProducerIDs(1); err != nil || id != 4294967295 {
		t.Fatalf("last id: %d, %v", id, err)
	}
	if _, err := s.ReserveProducerIDs(1); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("past the last id: %v", err)
	}
}
