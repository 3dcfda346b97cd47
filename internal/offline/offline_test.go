package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/layout"
)

// TestMain fails the package when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// engineDir writes a data dir with the engine itself: topic orders, one
// partition, three batches of ten records. It returns the data dir and the
// path of the partition's segment.
func engineDir(t *testing.T) (string, string) {
	t.Helper()
	data := t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions, cfg.Codec = 1, "none"
	if err := e.CreateTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	for b := range 3 {
		var recs []engine.Record
		for i := range 10 {
			recs = append(recs, engine.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, `{"order":%d}`, b*10+i)})
		}
		if _, err := e.Produce(context.Background(), "orders", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return data, filepath.Join(layout.PartitionDir(data, "orders", 0), layout.LogFile(0))
}

// files returns the contents of every file under dir.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestToolsOnEngineDir runs every tool of the package on a data dir the
// engine wrote, clean and then with one byte of a batch flipped: clean, each
// says so; damaged, Verify and Dump name the batch; and no tool changes a
// byte of the dir.
func TestToolsOnEngineDir(t *testing.T) {
	data, seg := engineDir(t)
	before := files(t, data)

	var out bytes.Buffer
	if err := Verify(&out, nil, data, false); err != nil || !strings.Contains(out.String(), "3 batches") || !strings.Contains(out.String(), "all ok") {
		t.Fatalf("Verify on a clean dir: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := Inspect(&out, data, recovery.Options{}, false); err != nil || !strings.Contains(out.String(), "orders") {
		t.Fatalf("Inspect on a clean dir: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := MetaCheck(&out, data); err != nil || !strings.Contains(out.String(), "1 topics") {
		t.Fatalf("MetaCheck on a clean dir: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := MetaDump(&out, data); err != nil || !json.Valid(out.Bytes()) {
		t.Fatalf("MetaDump: %v\n%s", err, out.String())
	}
	if after := files(t, data); !maps.Equal(before, after) {
		t.Fatal("a tool changed the clean data dir")
	}

	// Flip one byte inside the second batch's records.
	var doc struct {
		Batches []struct {
			Position int64 `json:"position"`
			Size     int64 `json:"size"`
			CRC      string
		}
	}
	out.Reset()
	if err := Dump(&out, seg, DumpOptions{JSON: true}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Batches) != 3 {
		t.Fatalf("Dump --json of a clean segment: %v, %d batches\n%s", err, len(doc.Batches), out.String())
	}
	b := []byte(before[seg])
	at := doc.Batches[1].Position + doc.Batches[1].Size - 2
	b[at] ^= 0x40
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := files(t, data)

	out.Reset()
	err := Verify(&out, nil, data, false)
	if err == nil || !strings.Contains(err.Error(), "1 problems") {
		t.Fatalf("Verify on a damaged dir: %v\n%s", err, out.String())
	}
	if want := fmt.Sprintf("BAD %s position %d-", seg, doc.Batches[1].Position); !strings.Contains(out.String(), want) {
		t.Fatalf("Verify's output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	if err := Dump(&out, seg, DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("position %d size %d BAD", doc.Batches[1].Position, doc.Batches[1].Size); !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "DAMAGED") {
		t.Fatalf("Dump's output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	if err := Inspect(&out, data, recovery.Options{}, false); err != nil {
		t.Fatal(err)
	}
	if after := files(t, data); !maps.Equal(damaged, after) {
		t.Fatal("a tool changed the damaged data dir")
	}
}

// TestNotPulse: a directory Pulse did not write is refused with an error
// saying so, by Verify and Inspect alike; Dump refuses a directory.
func TestNotPulse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Verify(&out, nil, dir, false); !errors.Is(err, errNotPulse) {
		t.Errorf("Verify: %v, want %v", err, errNotPulse)
	}
	if err := Inspect(&out, dir, recovery.Options{}, false); !errors.Is(err, errNotPulse) {
		t.Errorf("Inspect: %v, want %v", err, errNotPulse)
	}
	if err := Dump(&out, dir, DumpOptions{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Dump of a directory: %v", err)
	}
}

// The verify progress bar counts bytes in the unit that fits them: a small
// store is not "0.0 MiB / 0.0 MiB".
func TestProgressBarUnits(t *testing.T) {
	var out strings.Builder
	b := newProgressBar(&out, 22499)
	b.set(11250)
	b.set(22499)
	draws := strings.Split(out.String(), "\r")[1:]
	if len(draws) != 2 || !strings.HasSuffix(draws[0], " 50%   11.0 KiB / 22.0 KiB") || !strings.HasSuffix(draws[1], "100%   22.0 KiB / 22.0 KiB") {
		t.Errorf("progress bar: %q", out.String())
	}
	// A redraw in a shorter unit is as long as the one before it.
	out.Reset()
	b = newProgressBar(&out, 2<<20)
	b.set(1023 << 10)
	b.set(2 << 20)
	if draws := strings.Split(out.String(), "\r")[1:]; len(draws) != 2 || len(draws[0]) != len(draws[1]) {
		t.Errorf("redraws of different lengths: %q", out.String())
	}
}
