package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/themes"
)

// FuzzFramesAndHexView walks arbitrary segment bytes as the frame browser
// does and renders every frame as the hex view does: whatever the bytes,
// no panic, frames tile the input exactly, and a damaged frame says why.
// Seeded with the codec's golden batches and recovery's damaged segments.
func FuzzFramesAndHexView(f *testing.F) {
	for _, pat := range []string{"../testdata/codec/*.batch", "../testdata/recovery/segments/*.log"} {
		files, _ := filepath.Glob(pat)
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte{1, 1, 0, 0})
	// The frames come from an engine, as in the UI: each input is written as
	// a segment file of a real partition (base fuzzBase, past every other
	// segment) and listed with SegmentFrames.
	data := f.TempDir()
	e, err := engine.Open(engine.DefaultOptions(data))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	if err := e.CreateTopic("fuzz", engine.DefaultTopicConfig()); err != nil {
		f.Fatal(err)
	}
	const fuzzBase = 1 << 40
	seg := filepath.Join(crashlab.PartitionDir(data, "fuzz", 0), segment.LogFile(fuzzBase))
	st := themes.MustNew(themes.Options{Name: "dark"})
	c := &Common{Styles: &st, Keys: DefaultKeyMap(), Opts: Options{FormatTime: func(int64) string { return "t" }}, Width: 100}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		if err := os.WriteFile(seg, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pg, err := e.SegmentFrames("fuzz", 0, fuzzBase, 0, -1, 1000)
		if err != nil {
			t.Fatal(err)
		}
		frs, next := pg.Frames, pg.Next
		var pos int64
		for _, fr := range frs {
			if fr.Pos != pos || fr.Size <= 0 {
				t.Fatalf("frame %+v does not start at %d or is empty", fr, pos)
			}
			if fr.Damaged && fr.Err == "" {
				t.Fatalf("damaged frame without a reason: %+v", fr)
			}
			pos += fr.Size
			v, err := e.SegmentBatch("fuzz", 0, fuzzBase, fr, hexLimits)
			if err != nil {
				t.Fatal(err)
			}
			if want := data[fr.Pos:min(pos, fr.Pos+int64(len(v.Raw)))]; string(v.Raw) != string(want) {
				t.Fatalf("frame %+v: SegmentBatch read %d bytes that are not the file's", fr, len(v.Raw))
			}
			out := renderBatchHex(c, fr, v)
			if !strings.Contains(out, "HEADER") {
				t.Fatalf("no header section for %+v", fr)
			}
		}
		if len(frs) < 1000 && next != int64(len(data)) {
			t.Fatalf("walk stopped at %d of %d", next, len(data))
		}
	})
}
