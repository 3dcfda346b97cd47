package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// openStore opens a store in dir with short lock waits, closed at test end.
func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	opts := DefaultOptions()
	opts.OpenTimeout = 100 * time.Millisecond
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustClean fails the test if Check finds any problem.
func mustClean(t *testing.T, s *Store) {
	t.Helper()
	problems, err := s.Check()
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	for _, p := range problems {
		t.Errorf("check: %v", p)
	}
}

func TestOpenCreatesFileAndIdentityIsStable(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "meta.db")); err != nil {
		t.Fatalf("meta.db not created: %v", err)
	}
	id1, err := s.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if len(id1.Cluster.ID) != 36 || len(id1.Broker.ID) != 36 || id1.Cluster.ID == id1.Broker.ID {
		t.Fatalf("identity %+v: want two distinct UUIDs", id1)
	}
	if id1.Broker.ClusterID != id1.Cluster.ID {
		t.Fatalf("broker cluster id %q, cluster id %q", id1.Broker.ClusterID, id1.Cluster.ID)
	}
	if id1.Cluster.CreatedAt.IsZero() {
		t.Fatal("cluster created_at not set")
	}
	v, err := s.SchemaVersion()
	if err != nil || v != SchemaVersion {
		t.Fatalf("schema version %d, %v; want %d", v, err, SchemaVersion)
	}
	mustClean(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for i := 0; i < 3; i++ {
		s2 := openStore(t, dir)
		id2, err := s2.Identity()
		if err != nil {
			t.Fatal(err)
		}
		if !id2.Cluster.CreatedAt.Equal(id1.Cluster.CreatedAt) || id2.Cluster.ID != id1.Cluster.ID || id2.Broker != id1.Broker {
			t.Fatalf("reopen %d: identity %+v, first %+v", i, id2, id1)
		}
		s2.Close()
	}

	// A different data directory is a different cluster.
	other := openStore(t, t.TempDir())
	id3, err := other.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if id3.Cluster.ID == id1.Cluster.ID || id3.Broker.ID == id1.Broker.ID {
		t.Fatalf("two data dirs share an identity: %+v", id3)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	opts := DefaultOptions()
	opts.OpenTimeout = 0 // one attempt
	_, err := Open(dir, opts)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "meta.db") {
		t.Fatalf("error %q does not name the file", err)
	}
	opts.ReadOnly = true
	if _, err := Open(dir, opts); !errors.Is(err, ErrLocked) {
		t.Fatalf("read-only open beside a writer: %v, want ErrLocked", err)
	}
	// The first store is unaffected, and after it closes the file opens.
	if err := s.PutTopic(Topic{Name: "t", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openStore(t, dir)
	if _, err := s2.GetTopic("t"); err != nil {
		t.Fatal(err)
	}
}

// setSchemaVersion writes v directly into meta.db (the store must be closed).
func setSchemaVersion(t *testing.T, dir string, v int64) {
	t.Helper()
	db, err := bolt.Open(Path(dir), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(BucketSchema)).Put([]byte(keySchemaVersion), encodeInt64(v))
	}); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaTooNewIsRefusedAndUntouched(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "keep", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	setSchemaVersion(t, dir, SchemaVersion+1)
	before, err := os.ReadFile(Path(dir))
	if err != nil {
		t.Fatal(err)
	}

	for _, ro := range []bool{false, true} {
		opts := DefaultOptions()
		opts.ReadOnly = ro
		_, err := Open(dir, opts)
		if !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("read-only=%v: open: %v, want ErrSchemaTooNew", ro, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprintf("version %d", SchemaVersion+1)) || !strings.Contains(msg, fmt.Sprintf("up to %d", SchemaVersion)) {
			t.Fatalf("error %q does not name both versions", msg)
		}
	}
	after, err := os.ReadFile(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatal("a refused open changed meta.db")
	}

	// Back to the supported version, everything is there.
	setSchemaVersion(t, dir, SchemaVersion)
	s = openStore(t, dir)
	if tp, err := s.GetTopic("keep"); err != nil || tp.Partitions != 2 {
		t.Fatalf("topic after refusal: %+v, %v", tp, err)
	}
}

func TestSchemaVersionGarbageIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir).Close()
	db, err := bolt.Open(Path(dir), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(BucketSchema)).Put([]byte(keySchemaVersion), []byte("v1"))
	})
	db.Close()
	_, err = Open(dir, DefaultOptions())
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Bucket != BucketSchema || ce.Key != keySchemaVersion {
		t.Fatalf("open with garbage version: %v, want CorruptError at schema/version", err)
	}
	// Read-only inspection still opens it, and Check names the problem.
	opts := DefaultOptions()
	opts.ReadOnly = true
	r, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("read-only open with garbage version: %v", err)
	}
	defer r.Close()
	problems, err := r.Check()
	if err != nil || len(problems) != 1 || !errors.As(problems[0], &ce) || ce.Key != keySchemaVersion {
		t.Fatalf("check: %v %v", problems, err)
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.ReadOnly = true
	if _, err := Open(dir, opts); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only open of a missing store: %v, want not-exist", err)
	}
	if _, err := os.Stat(Path(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("read-only open created meta.db")
	}

	s := openStore(t, dir)
	if err := s.PutTopic(Topic{Name: "a", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	r, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.GetTopic("a"); err != nil {
		t.Fatal(err)
	}
	if err := r.PutTopic(Topic{Name: "b", Partitions: 1}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write on read-only store: %v", err)
	}
	// Two readers may share the file.
	r2, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	r2.Close()
	mustClean(t, r)
}

func TestClosedStore(t *testing.T) {
	s := openStore(t, t.TempDir())
	s.Close()
	if _, err := s.ListTopics(); !errors.Is(err, ErrClosed) {
		t.Fatalf("list on closed store: %v", err)
	}
	if err := s.CommitCursor("c", "t", 0, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit on closed store: %v", err)
	}
}

func TestNotABoltFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(Path(dir), []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "meta.db") {
		t.Fatalf("open of garbage file: %v", err)
	}
}

func TestDump(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.PutTopic(Topic{Name: "orders", Partitions: 2, Config: json.RawMessage(`{"codec":"zstd"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCursor("billing", "orders", 1, 42); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReport(ReportRecovery, "orders", 0, []byte{0xff, 0x00}); err != nil {
		t.Fatal(err)
	}
	d, err := s.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if d[BucketSchema][keySchemaVersion] != SchemaVersion {
		t.Errorf("schema: %v", d[BucketSchema])
	}
	if d[BucketCursors]["billing/orders/1"] != int64(42) {
		t.Errorf("cursors: %v", d[BucketCursors])
	}
	if d[BucketReports]["recovery/orders/0"] != "hex:ff00" {
		t.Errorf("reports: %v", d[BucketReports])
	}
	if _, ok := d[BucketPartitions]["orders/1"]; !ok {
		t.Errorf("partitions: %v", d[BucketPartitions])
	}
	id, _ := s.Identity()
	if d[BucketIdentity][keyClusterCurrent] != id.Cluster.ID {
		t.Errorf("identity: %v", d[BucketIdentity])
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"orders":{"name":"orders","partitions":2,"config":{"codec":"zstd"}`) {
		t.Errorf("dump JSON: %s", raw)
	}
}
