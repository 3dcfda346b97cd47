package recovery

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// seedFiles adds every file of testdata/recovery/<sub> as a fuzz seed.
func seedFiles(f *testing.F, sub string) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "recovery", sub, "*"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeSnapshot: any bytes either decode into a snapshot that
// re-encodes to the same bytes, or fail with ErrBadSnapshot.
func FuzzDecodeSnapshot(f *testing.F) {
	seedFiles(f, "snapshot")
	good, _ := EncodeSnapshot(Snapshot{LEO: 10, ActiveBase: 4, ActiveSize: 300, ActiveNext: 10})
	f.Add(good)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapshot(b)
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error %v does not match ErrBadSnapshot", err)
			}
			return
		}
		again, err := EncodeSnapshot(s)
		if err != nil {
			t.Fatalf("decoded %+v does not re-encode: %v", s, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed bytes:\n% x\n% x", b, again)
		}
	})
}

// FuzzDecodeHWM: any bytes either decode into a non-negative value that
// re-encodes to the same bytes, or fail with ErrBadHWM.
func FuzzDecodeHWM(f *testing.F) {
	seedFiles(f, "hwm")
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 42})
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeHWM(b)
		if err != nil {
			if !errors.Is(err, ErrBadHWM) {
				t.Fatalf("error %v does not match ErrBadHWM", err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("decoded negative %d", v)
		}
		again, _ := EncodeHWM(v)
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed bytes")
		}
	})
}

// FuzzScanSegment: any bytes as a segment file scan without panicking, and
// what the scanner reports is consistent: ranges inside the file, in order,
// not overlapping; accepted batches CRC-valid; a torn tail after the rest.
func FuzzScanSegment(f *testing.F) {
	seedFiles(f, "segments")
	var good []byte
	good = appendBatch(f, good, 0, 3, 0)
	good = appendBatch(f, good, 3, 2, 1)
	f.Add(good)
	f.Add(good[:len(good)-7])
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, sealed := range []bool{false, true} {
			limit := int64(maxOffset)
			if sealed {
				limit = 1 << 20
			}
			var frames []Frame
			out := scanSegment(scanInput{
				path: "seg", r: bytes.NewReader(b), size: int64(len(b)), limit: limit, sealed: sealed,
				interval: 64, lastIndexed: -1,
				visit: func(fr Frame) error { fr.Bytes = bytes.Clone(fr.Bytes); frames = append(frames, fr); return nil },
			})
			if out.validEnd < 0 || out.validEnd > int64(len(b)) {
				t.Fatalf("validEnd %d of %d", out.validEnd, len(b))
			}
			pos := int64(0)
			for _, fr := range frames {
				if fr.Position != pos || fr.Size <= 0 {
					t.Fatalf("frame at %d size %d, expected position %d", fr.Position, fr.Size, pos)
				}
				if fr.Err == "" {
					if _, err := codec.VerifyBatch(fr.Bytes); err != nil {
						t.Fatalf("accepted a bad batch at %d: %v", fr.Position, err)
					}
				}
				pos += fr.Size
			}
			if pos != int64(len(b)) {
				t.Fatalf("frames cover %d of %d bytes", pos, len(b))
			}
			last := int64(0)
			for _, c := range out.corrupt {
				if c.StartPos < last || c.EndPos <= c.StartPos || c.EndPos > int64(len(b)) || c.EndOffset < c.FirstOffset {
					t.Fatalf("bad range %+v", c)
				}
				last = c.EndPos
			}
			if out.torn != nil && (sealed || out.torn.Position < last || out.torn.Position+out.torn.Bytes != int64(len(b))) {
				t.Fatalf("bad torn tail %+v", out.torn)
			}
		}
	})
}

// FuzzIndexFile: any bytes as a sealed segment's .index, read by recovery on
// both paths: the log is recovered the same whatever the index says (the
// data is valid), and an index recovery keeps (does not rebuild) decodes to
// entries that each point at a batch holding the entry's offset.
func FuzzIndexFile(f *testing.F) {
	fx := newFixture(f, segSpec{base: 0, batches: []int{3, 2, 4, 1, 5, 2, 2}}, segSpec{base: 19, batches: []int{2, 2}})
	seg := fx.segs[0]
	pristine := fx.files(f, true)
	idxName := seg.name() + ".index"
	f.Add(pristine[idxName])
	f.Add([]byte{})
	f.Add(pristine[idxName][:5])
	seedFiles(f, "index")
	starts := map[int64]int64{}
	for i, p := range seg.starts {
		starts[p] = seg.bases[i]
	}
	f.Fuzz(func(t *testing.T, idx []byte) {
		for _, snap := range []bool{true, false} {
			dir := t.TempDir()
			m := fx.files(t, snap)
			m[idxName] = idx
			writeFiles(t, dir, m)
			res, err := Run(dir, Options{IndexIntervalBytes: testInterval, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			if res.LEO != fx.leo || len(rep.Corrupt) > 0 || len(rep.Truncations) > 0 {
				t.Fatalf("a bad index changed the log:\n%s", strings.Join(rep.Lines(), "\n"))
			}
			if len(rep.IndexesRebuilt) > 0 {
				continue
			}
			entries, err := segment.DecodeIndex(idx)
			if err != nil || len(entries) == 0 {
				t.Fatalf("kept an index that does not decode (%v)", err)
			}
			for _, e := range entries {
				if base, ok := starts[int64(e.RelPosition)]; !ok || base != seg.base+int64(e.RelOffset) {
					t.Fatalf("kept an entry %+v that points at no batch of its offset", e)
				}
			}
		}
	})
}
