package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/pulselog/pulse/meta"
)

// makeMetaDir writes a meta.db with one topic, a cursor and a report.
func makeMetaDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := meta.Open(dir, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutTopic(meta.Topic{Name: "orders", Partitions: 2, Config: json.RawMessage(`{"codec":"zstd"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCursor("billing", "orders", 1, 42); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReport(meta.ReportRecovery, "orders", 0, []byte(`{"path":"full"}`)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMetaCheckClean(t *testing.T) {
	dir := makeMetaDir(t)
	before, _ := os.ReadFile(meta.Path(dir))
	out, _, err := runPulse(t, "meta", "check", "--data", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "schema 1, 1 topics, 1 cursors: ok") {
		t.Fatalf("output: %q", out)
	}
	after, _ := os.ReadFile(meta.Path(dir))
	if !bytes.Equal(before, after) {
		t.Fatal("meta check changed meta.db")
	}
}

func TestMetaCheckFindsProblems(t *testing.T) {
	dir := makeMetaDir(t)
	db, err := bolt.Open(meta.Path(dir), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte(meta.BucketCursors)).Put([]byte("billing/orders/1"), []byte("xx")); err != nil {
			return err
		}
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, 7)
		return tx.Bucket([]byte(meta.BucketCursors)).Put([]byte("billing/gone/0"), v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runPulse(t, "meta", "check", "--data", dir)
	if err == nil || !strings.Contains(err.Error(), "2 problems") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	for _, want := range []string{`BAD meta.db: corrupt metadata in bucket "cursors" at key "billing/orders/1": offset is 2 bytes`, `"billing/gone/0": topic gone does not exist`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestMetaCheckRefusesWhileInUse(t *testing.T) {
	dir := makeMetaDir(t)
	s, err := meta.Open(dir, meta.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = runPulse(t, "meta", "check", "--data", dir)
	if !errors.Is(err, meta.ErrLocked) || !strings.Contains(err.Error(), "stop the pulse") {
		t.Fatalf("check beside a running store: %v", err)
	}
}

func TestMetaCheckMissingStore(t *testing.T) {
	dir := t.TempDir()
	_, _, err := runPulse(t, "meta", "check", "--data", dir)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("check of a dir without meta.db: %v", err)
	}
	if _, err := os.Stat(meta.Path(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("meta check created meta.db")
	}
}

func TestMetaDump(t *testing.T) {
	dir := makeMetaDir(t)
	out, _, err := runPulse(t, "meta", "dump", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("dump is not JSON: %v\n%s", err, out)
	}
	if string(d["cursors"]["billing/orders/1"]) != "42" {
		t.Errorf("cursor: %s", d["cursors"]["billing/orders/1"])
	}
	if string(d["schema"]["version"]) != "1" {
		t.Errorf("schema: %s", d["schema"]["version"])
	}
	var topic meta.Topic
	if err := json.Unmarshal(d["topics"]["orders"], &topic); err != nil || topic.Partitions != 2 || compact(t, topic.Config) != `{"codec":"zstd"}` {
		t.Errorf("topic: %s (%v)", d["topics"]["orders"], err)
	}
	if _, ok := d["partitions"]["orders/1"]; !ok {
		t.Errorf("partitions: %v", d["partitions"])
	}
	if compact(t, d["reports"]["recovery/orders/0"]) != `{"path":"full"}` {
		t.Errorf("report: %s", d["reports"]["recovery/orders/0"])
	}
	if len(d["identity"]) != 4 {
		t.Errorf("identity: %v", d["identity"])
	}
}

// compact returns JSON without the dump's indentation.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return b.String()
}

// A truncated meta.db is a clear error naming the file (never a SIGBUS
// fault), and a deleted one with topic directories left says what is at
// stake; meta check never changes a byte.
func TestMetaCheckDamagedOrMissingStore(t *testing.T) {
	dir := makeMetaDir(t)
	img, err := os.ReadFile(meta.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta.Path(dir), img[:len(img)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = runPulse(t, "meta", "check", "--data", dir)
	if !errors.Is(err, meta.ErrDamaged) || !strings.Contains(err.Error(), meta.Path(dir)) {
		t.Fatalf("check of a truncated meta.db: %v, want ErrDamaged naming the file", err)
	}
	if now, _ := os.ReadFile(meta.Path(dir)); !bytes.Equal(now, img[:len(img)/3]) {
		t.Fatal("meta check changed meta.db")
	}

	if err := os.Remove(meta.Path(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir+"/topics/orders/p00000", 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err = runPulse(t, "meta", "check", "--data", dir)
	if err == nil || !strings.Contains(err.Error(), "is missing, but") || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("check of a deleted meta.db beside topic directories: %v", err)
	}
	if _, err := os.Stat(meta.Path(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("meta check created meta.db")
	}
}
