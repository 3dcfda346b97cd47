package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/damage"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/meta"
)

// segmentedDir writes a data dir with the engine: topic orders, one
// partition of 1 MiB segments holding three segments. It returns the data
// dir, the partition dir and the segment bases.
func segmentedDir(t *testing.T) (string, string, []int64) {
	t.Helper()
	data := t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions, cfg.Codec, cfg.SegmentMaxBytes = 1, "none", 1<<20
	if err := e.CreateTopic("orders", cfg); err != nil {
		t.Fatal(err)
	}
	dir := layout.PartitionDir(data, "orders", 0)
	for b := 0; ; b++ {
		bases, err := segment.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(bases) >= 3 {
			break
		}
		recs := make([]engine.Record, 100)
		for i := range recs {
			recs[i] = engine.Record{Value: bytes.Repeat([]byte{byte('a' + b%26)}, 1000)}
		}
		if _, err := e.Produce(context.Background(), "orders", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	bases, err := segment.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return data, dir, bases
}

func verifyJSON(t *testing.T, root string) (VerifySummary, error) {
	t.Helper()
	var out bytes.Buffer
	err := Verify(&out, nil, root, true)
	var sum VerifySummary
	if jerr := json.Unmarshal(out.Bytes(), &sum); jerr != nil {
		t.Fatalf("verify --json printed %q: %v", out.String(), jerr)
	}
	return sum, err
}

// TestVerifyMissingSegment: a segment the manifest lists that is gone is a
// problem of verify, named with its offsets, before and after an engine
// open recorded the loss as a gap.
func TestVerifyMissingSegment(t *testing.T) {
	data, dir, bases := segmentedDir(t)
	if sum, err := verifyJSON(t, data); err != nil || !sum.OK {
		t.Fatalf("clean dir: %v %+v", err, sum)
	}
	gone := filepath.Join(dir, segment.LogFile(bases[1]))
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	sum, err := verifyJSON(t, data)
	if err == nil || sum.OK || len(sum.Problems) != 1 {
		t.Fatalf("verify of a dir missing %s: err %v, %+v", gone, err, sum)
	}
	p := sum.Problems[0]
	if p.Kind != "missing" || p.File != gone || p.FirstOffset != bases[1] || p.EndOffset != bases[2] {
		t.Fatalf("problem %+v, want missing %s offsets [%d, %d)", p, gone, bases[1], bases[2])
	}

	// The engine records the loss; verify still reports it, as a gap.
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err = verifyJSON(t, data)
	if err == nil || len(sum.Problems) != 1 {
		t.Fatalf("verify after the engine recorded the gap: err %v, %+v", err, sum)
	}
	p = sum.Problems[0]
	if p.Kind != "lost" || p.FirstOffset != bases[1] || p.EndOffset != bases[2] || !strings.Contains(p.Error, "missing") {
		t.Fatalf("problem %+v, want lost [%d, %d)", p, bases[1], bases[2])
	}
}

// TestVerifyStraySegment: a .log the manifest does not list is reported as
// stray, as recovery reports it, and is not scrubbed as if it were part of
// the log (a copy of the first segment would otherwise show as damage).
func TestVerifyStraySegment(t *testing.T) {
	data, dir, bases := segmentedDir(t)
	b, err := os.ReadFile(filepath.Join(dir, segment.LogFile(bases[0])))
	if err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, segment.LogFile(99999999))
	if err := os.WriteFile(stray, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := files(t, data)
	sum, err := verifyJSON(t, data)
	if err == nil || len(sum.Problems) != 1 {
		t.Fatalf("verify with a stray copy: err %v, %+v", err, sum)
	}
	if p := sum.Problems[0]; p.Kind != "stray" || p.File != stray {
		t.Fatalf("problem %+v, want stray %s", p, stray)
	}
	if sum.Segments != len(bases) {
		t.Fatalf("verified %d segments, want the %d the manifest lists", sum.Segments, len(bases))
	}
	after := files(t, data)
	if len(after) != len(before) {
		t.Fatalf("verify changed the dir")
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("verify changed %s", k)
		}
	}
}

// TestVerifySealedSegmentShort: a sealed segment that lost whole batches at
// its end (cut at a batch boundary, or emptied) holds no damaged byte, but
// the offsets up to the next segment's base are gone: verify reports them
// as lost, as recovery does.
func TestVerifySealedSegmentShort(t *testing.T) {
	for _, emptied := range []bool{false, true} {
		data, dir, bases := segmentedDir(t)
		seg := filepath.Join(dir, segment.LogFile(bases[0]))
		var lastPos, lastBase int64
		if _, err := recovery.CheckSegmentFile(seg, recovery.CheckOptions{Limit: bases[1], Visit: func(fr recovery.Frame) error {
			lastPos, lastBase = fr.Position, fr.Header.BaseOffset
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		cut, from := lastPos, lastBase
		if emptied {
			cut, from = 0, bases[0]
		}
		if err := os.Truncate(seg, cut); err != nil {
			t.Fatal(err)
		}
		sum, err := verifyJSON(t, data)
		if err == nil || len(sum.Problems) != 1 {
			t.Fatalf("emptied %v: verify of %s cut at %d: err %v, %+v", emptied, seg, cut, err, sum)
		}
		if p := sum.Problems[0]; p.Kind != "lost" || p.File != seg || p.FirstOffset != from || p.EndOffset != bases[1] {
			t.Fatalf("emptied %v: problem %+v, want lost %s offsets [%d, %d)", emptied, p, seg, from, bases[1])
		}
	}
}

// TestVerifyAcknowledgedEnd: offsets the persisted hwm (or the snapshot)
// says were acknowledged but that no segment holds are a problem, named as
// a missing active segment when the manifest lists one that is gone; a
// manifest naming a last segment a roll never created loses nothing.
func TestVerifyAcknowledgedEnd(t *testing.T) {
	t.Run("hwm ahead", func(t *testing.T) {
		data, dir, _ := segmentedDir(t)
		end, err := recovery.ReadHWM(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := recovery.WriteHWM(dir, end+100); err != nil {
			t.Fatal(err)
		}
		sum, err := verifyJSON(t, data)
		if err == nil || len(sum.Problems) != 1 {
			t.Fatalf("err %v, %+v", err, sum)
		}
		if p := sum.Problems[0]; p.Kind != "lost" || p.FirstOffset != end || p.EndOffset != end+100 {
			t.Fatalf("problem %+v, want lost [%d, %d)", p, end, end+100)
		}
	})
	t.Run("active segment gone", func(t *testing.T) {
		data, dir, bases := segmentedDir(t)
		end, err := recovery.ReadHWM(dir)
		if err != nil {
			t.Fatal(err)
		}
		active := filepath.Join(dir, segment.LogFile(bases[2]))
		if err := os.Remove(active); err != nil {
			t.Fatal(err)
		}
		sum, err := verifyJSON(t, data)
		if err == nil || len(sum.Problems) != 1 {
			t.Fatalf("err %v, %+v", err, sum)
		}
		if p := sum.Problems[0]; p.Kind != "missing" || p.File != active || p.FirstOffset != bases[2] || p.EndOffset != end {
			t.Fatalf("problem %+v, want missing %s [%d, %d)", p, active, bases[2], end)
		}
	})
	t.Run("roll interrupted", func(t *testing.T) {
		data, dir, bases := segmentedDir(t)
		end, err := recovery.ReadHWM(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := recovery.ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		m.Segments = append(append([]int64{}, bases...), end)
		if err := recovery.WriteManifest(dir, m); err != nil {
			t.Fatal(err)
		}
		if sum, err := verifyJSON(t, data); err != nil || !sum.OK {
			t.Fatalf("a roll interrupted before its segment was created: err %v, %+v", err, sum)
		}
	})
}

// TestVerifyActiveTailBelowAcknowledgedEnd: damage at the end of the active
// segment holding offsets the persisted hwm acknowledged is corruption, kept
// and skipped, never a torn tail: verify names it as recovery (pulse
// inspect) does: the same bytes, and offsets up to the acknowledged end.
// Above the acknowledged end the same damage is a torn tail in both.
func TestVerifyActiveTailBelowAcknowledgedEnd(t *testing.T) {
	damages := map[string]func(t *testing.T, path string){
		"last batch flipped": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			damage.FlipByte(t, path, fi.Size()-1)
		},
		"cut inside the last batch": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()-1); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, hurt := range damages {
		t.Run(name, func(t *testing.T) {
			data, dir, bases := segmentedDir(t)
			end := recovery.AcknowledgedEnd(dir)
			active := filepath.Join(dir, segment.LogFile(bases[len(bases)-1]))
			hurt(t, active)
			// Without the snapshot recovery scans every batch, as verify
			// does; the persisted hwm still acknowledges every offset.
			if err := os.Remove(filepath.Join(dir, layout.SnapshotFile)); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Inspect(&out, data, recovery.Options{}, true); err != nil {
				t.Fatal(err)
			}
			var reps []recovery.Report
			if err := json.Unmarshal(out.Bytes(), &reps); err != nil {
				t.Fatal(err)
			}
			if len(reps) != 1 || len(reps[0].Corrupt) != 1 || len(reps[0].Truncations) != 0 {
				t.Fatalf("inspect: %s", out.String())
			}
			c := reps[0].Corrupt[0]
			if c.EndOffset != end {
				t.Fatalf("inspect's corrupt range %+v, want it to end at the acknowledged end %d", c, end)
			}
			sum, err := verifyJSON(t, data)
			if err == nil || len(sum.Problems) != 1 {
				t.Fatalf("err %v, %+v", err, sum)
			}
			want := VerifyProblem{File: active, Position: c.StartPos, EndPosition: c.EndPos,
				FirstOffset: c.FirstOffset, EndOffset: c.EndOffset, Kind: "corrupt", Error: c.Err}
			if p := sum.Problems[0]; p != want {
				t.Fatalf("verify found\n%+v\nwant what recovery reports\n%+v", p, want)
			}

			// With the acknowledged end below the damage, it is a torn tail:
			// the hwm file lowered, and no meta.db recording a higher one.
			if err := recovery.WriteHWM(dir, c.FirstOffset); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(meta.Path(data)); err != nil {
				t.Fatal(err)
			}
			sum, err = verifyJSON(t, data)
			if err == nil || len(sum.Problems) != 1 {
				t.Fatalf("err %v, %+v", err, sum)
			}
			if p := sum.Problems[0]; p.Kind != "torn-tail" || p.Position != c.StartPos || p.FirstOffset != c.FirstOffset {
				t.Fatalf("above the acknowledged end verify found %+v, want a torn tail at %d (offset %d)", p, c.StartPos, c.FirstOffset)
			}
		})
	}
}

// TestDumpOfAManifestSaysWhatDumpReads: pulse dump of a partition's manifest
// (text, not a segment) fails saying which of the partition's files dump
// reads, and that the manifest is text, rather than only .log files.
func TestDumpOfAManifestSaysWhatDumpReads(t *testing.T) {
	_, dir, _ := segmentedDir(t)
	err := Dump(io.Discard, filepath.Join(dir, layout.ManifestFile), DumpOptions{})
	if err == nil {
		t.Fatal("dump of a manifest succeeded")
	}
	for _, want := range []string{"not a Pulse segment", ".index", "snapshot", "hwm", "manifest is text"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
}

// A partition directory emptied at rest: inspect and verify count the
// high-watermark meta.db recorded as acknowledged, as the open does, so
// both say offsets up to it were lost instead of seeing a new log.
func TestInspectAndVerifyUseTheRecordedHWM(t *testing.T) {
	data := t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("orders", engine.TopicConfig{Codec: "none"}); err != nil {
		t.Fatal(err)
	}
	acks, err := e.Produce(context.Background(), "orders", 0, []engine.Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
	if err != nil {
		t.Fatal(err)
	}
	end := acks[len(acks)-1].Offset + 1
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	dir := layout.PartitionDir(data, "orders", 0)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if err := os.Remove(filepath.Join(dir, ent.Name())); err != nil {
			t.Fatal(err)
		}
	}

	var out bytes.Buffer
	if err := Inspect(&out, data, recovery.Options{}, true); err != nil {
		t.Fatal(err)
	}
	var reps []recovery.Report
	if err := json.Unmarshal(out.Bytes(), &reps); err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].RecoveredEnd != end || len(reps[0].Gaps) != 1 || reps[0].Gaps[0].FirstOffset != 0 || reps[0].Gaps[0].EndOffset != end {
		t.Fatalf("inspect: %s; want the log to end at %d with [0, %d) lost", out.String(), end, end)
	}
	sum, err := verifyJSON(t, data)
	if err == nil || len(sum.Problems) != 1 {
		t.Fatalf("verify: err %v, %+v; want one lost range", err, sum)
	}
	if p := sum.Problems[0]; p.Kind != "lost" || p.FirstOffset != 0 || p.EndOffset != end || !strings.Contains(p.Error, "meta.db") {
		t.Fatalf("verify found %+v, want offsets [0, %d) lost by meta.db's recorded hwm", p, end)
	}
}
