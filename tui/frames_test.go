package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/damage"
)

// TestFramesAgreeWithRecovery: a batch whose header and CRC are fine but
// whose base offset is below the end of the batch before it (here a copy of
// the segment's first batch appended at its end) is rejected by recovery;
// the frame browser must not call it ok.
func TestFramesAgreeWithRecovery(t *testing.T) {
	data, part := crashDataDir(t, "none", 3)
	e := reopen(t, data, false) // the copy is appended while the engine runs
	path, spans := batchesOf(t, part)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := b[spans[0].Pos : spans[0].Pos+spans[0].Size]
	if err := os.WriteFile(path, append(b, first...), 0o644); err != nil {
		t.Fatal(err)
	}
	check, err := recovery.CheckSegmentFile(path, recovery.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if check.Batches != 3 || check.Torn == nil || check.Torn.Position != int64(len(b)) {
		t.Fatalf("recovery: %d batches, torn %+v; want 3 and the copy at %d torn", check.Batches, check.Torn, len(b))
	}
	pg, err := e.SegmentFrames("orders", 0, 0, 0, -1, 100)
	if err != nil {
		t.Fatal(err)
	}
	frs := pg.Frames
	if len(frs) != 4 {
		t.Fatalf("%d frames, want 4: %+v", len(frs), frs)
	}
	for i, f := range frs[:3] {
		if f.Damaged {
			t.Errorf("frame %d at %d: damaged (%s), recovery accepts it", i, f.Pos, f.Err)
		}
	}
	if last := frs[3]; !last.Damaged || last.Pos != int64(len(b)) {
		t.Errorf("frame 3 at %d: damaged %v (%s); recovery rejects the batch at %d: %s", last.Pos, last.Damaged, last.Err, len(b), check.Torn.Reason)
	}
}

// frameTS is the commit time of the hand-written batches: fixed, so that
// the header bytes of the hex view are the same on every run.
const frameTS = 1767323045678

// frameRecords are n records from offset base with fixed timestamps.
func frameRecords(base int64, n int) []codec.Record {
	recs := make([]codec.Record, n)
	for i := range recs {
		o := base + int64(i)
		recs[i] = codec.Record{
			Offset:    o,
			Timestamp: frameTS + o,
			Key:       []byte(fmt.Sprintf("cust-%d", o%3)),
			Value:     []byte(fmt.Sprintf(`{"order":%d,"total":%d.50}`, o, 10+o)),
			Headers:   []codec.Header{{Key: "source", Value: []byte("checkout")}},
		}
	}
	return recs
}

// handWrittenDataDir makes a data dir whose orders p0 holds batches
// written with the codec (fixed timestamps), codecs alternating zstd, none,
// zstd, ... of 5 records each, and no index, snapshot or hwm (recovery scans
// and rebuilds). It returns the data dir, the segment file and the batch
// positions.
func handWrittenDataDir(t *testing.T, batches int) (string, string, []int64) {
	t.Helper()
	data := t.TempDir()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		t.Fatal(err)
	}
	create(t, e, "orders", engine.DefaultTopicConfig())
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	part := crashlab.PartitionDir(data, "orders", 0)
	var buf []byte
	var pos []int64
	for b := 0; b < batches; b++ {
		c := codec.CodecZstd
		if b%2 == 1 {
			c = codec.CodecNone
		}
		pos = append(pos, int64(len(buf)))
		buf, err = codec.AppendBatch(buf, int64(b*5), frameRecords(int64(b*5), 5), codec.EncodeOptions{Codec: c})
		if err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(part, segment.LogFile(0))
	if err := os.WriteFile(log, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{segment.IndexFile(0), recovery.SnapshotFile, "hwm"} {
		if err := os.Remove(filepath.Join(part, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return data, log, pos
}

// openFrames opens the recovery screen of orders p0 and enters its first
// jump target.
func openFrames(t *testing.T, data string, wants ...string) *teatest.TestModel {
	t.Helper()
	e := reopen(t, data, false)
	tm := openRecovery(t, e)
	tm.Send(enter)
	waitFor(t, tm, append([]string{"frames 00000000000000000000", "POSITION"}, wants...)...)
	return tm
}

func TestFrameBrowser(t *testing.T) {
	data, _, pos := handWrittenDataDir(t, 3)
	tm := openFrames(t, data, "3 frames", "all loaded", humanCount(pos[2]))
	m := finish(t, tm)
	if strings.Count(m.View(), " ok ") != 3 {
		t.Errorf("want 3 batches with CRC ok:\n%s", m.View())
	}
	golden(t, m)
}

func TestHexViewZstdBatch(t *testing.T) {
	data, _, _ := handWrittenDataDir(t, 3)
	tm := openFrames(t, data, "3 frames")
	tm.Send(enter)
	waitFor(t, tm, "HEADER (52 bytes", "RECORDS (zstd", "decompressed", `record 0 · offset 0`)
	m := finish(t, tm)
	v := m.View()
	for _, want := range []string{"magic", "0x0001 codec zstd", "crc32c", "baseOffset", "batchLen", "recordCount", `key "cust-0"`, "CRC ok"} {
		if !strings.Contains(v, want) {
			t.Errorf("hex view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "^^") || strings.Contains(v, "✗") {
		t.Errorf("a good batch shows bad bytes:\n%s", v)
	}
	golden(t, m)
}

func TestHexViewCorruptBatch(t *testing.T) {
	data, log, pos := handWrittenDataDir(t, 3)
	damage.FlipByte(t, log, pos[1]+codec.HeaderLen+30) // inside batch 1's records (codec none)
	tm := openFrames(t, data, "BAD", "2 frames from byte "+humanCount(pos[1]))
	tm.Send(enter)
	waitFor(t, tm, "HEADER (52 bytes", "✗ computed 0x", "^^ ^^ ^^ ^^", "RECORDS (none")
	m := finish(t, tm)
	v := m.View()
	if !strings.Contains(v, "BAD: codec: batch checksum mismatch") || !strings.Contains(v, "the CRC failed") {
		t.Errorf("hex view does not say the CRC failed:\n%s", v)
	}
	golden(t, m)
}

// The browser reads a page of batches at a time and the next one only when
// the selection gets near the end of what is loaded.
func TestFrameBrowserPagesLazily(t *testing.T) {
	n := framesPage*2 + 50
	data, _, _ := handWrittenDataDir(t, n)
	tm := openFrames(t, data, fmt.Sprintf("%d frames", framesPage), "more past byte")
	tm.Send(keys("G"))
	waitFor(t, tm, fmt.Sprintf("%d frames", framesPage*2))
	tm.Send(keys("G"))
	waitFor(t, tm, fmt.Sprintf("%d frames", n), "all loaded")
	finish(t, tm)
}

// f on the segments screen opens the frame browser of the selected segment.
func TestFramesFromSegmentsScreen(t *testing.T) {
	data, _, _ := handWrittenDataDir(t, 3)
	opts := testOptions(reopen(t, data, false))
	opts.StartTopic = "orders"
	tm := startUI(t, opts)
	waitFor(t, tm, "Topics / orders", "LOG START")
	tm.Send(enter)
	waitFor(t, tm, "Topics / orders / p0 / segments")
	tm.Send(keys("f"))
	waitFor(t, tm, "Topics / orders / p0 / segments / frames 00000000000000000000", "3 frames, 0 bad")
	finish(t, tm)
}

// The source lists a damaged segment frame by frame: garbage over a
// batch's header is a damaged region without a header to check, a batch
// cut short a torn one whose CRC fails; the good batches around them are
// ok, and a listing in pages goes on where the previous page stopped.
func TestReadFramesDamage(t *testing.T) {
	data, log, pos := handWrittenDataDir(t, 4)
	e := reopen(t, data, false) // the damage is done while the engine runs
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Garbage over batch 1's header, batch 3 cut short.
	copy(b[pos[1]:], "garbage garbage garbage")
	b = b[:pos[3]+codec.HeaderLen+3]
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pg, err := e.SegmentFrames("orders", 0, 0, 0, -1, 10)
	if err != nil {
		t.Fatal(err)
	}
	frs, next, size := pg.Frames, pg.Next, pg.Size
	if next != size || len(frs) != 4 {
		t.Fatalf("%d frames to %d of %d: %+v", len(frs), next, size, frs)
	}
	want := []struct {
		pos, size int64
		damaged   bool
		crc       string
	}{
		{pos[0], pos[1] - pos[0], false, "ok"},
		{pos[1], pos[2] - pos[1], true, "-"},
		{pos[2], pos[3] - pos[2], false, "ok"},
		{pos[3], size - pos[3], true, "BAD"},
	}
	for i, w := range want {
		f := frs[i]
		if f.Pos != w.pos || f.Size != w.size || f.Damaged != w.damaged || crcState(f) != w.crc {
			t.Errorf("frame %d: %+v, want pos %d size %d damaged %v crc %s", i, f, w.pos, w.size, w.damaged, w.crc)
		}
	}
	if !strings.Contains(frs[3].Err, "overruns the file end") {
		t.Errorf("last frame error %q, want the batch cut short (overruns the file end)", frs[3].Err)
	}
	// Paging: two frames, then the rest from where the first read stopped.
	first, err := e.SegmentFrames("orders", 0, 0, 0, -1, 2)
	if err != nil || len(first.Frames) != 2 || first.Next != pos[2] {
		t.Fatalf("first page: %d frames to %d, %v", len(first.Frames), first.Next, err)
	}
	rest, err := e.SegmentFrames("orders", 0, 0, first.Next, first.NextOffset, 10)
	if err != nil || len(rest.Frames) != 2 || rest.Next != size {
		t.Fatalf("second page: %d frames to %d, %v", len(rest.Frames), rest.Next, err)
	}
}
