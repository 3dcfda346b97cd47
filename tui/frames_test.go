package tui

import (
	"os"
	"testing"

	"github.com/pulselog/pulse/engine/recovery"
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
