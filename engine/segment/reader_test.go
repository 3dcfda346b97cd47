package segment

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// file concatenates batches of 3 records at offsets base, base+3, ...
func file(t *testing.T, base int64, n int, c codec.Codec) ([]byte, []int64) {
	t.Helper()
	var out []byte
	var starts []int64
	for i := 0; i < n; i++ {
		b, _ := batch(t, base+int64(3*i), 3, 40, c)
		starts = append(starts, int64(len(out)))
		out = append(out, b...)
	}
	return out, starts
}

// frames reads every frame of data.
func frames(data []byte, opts ReaderOptions) []Frame {
	rd := NewReader(bytes.NewReader(data), int64(len(data)), opts)
	var out []Frame
	for {
		fr, ok := rd.Next()
		if !ok {
			return out
		}
		// Bytes and records are valid until the next call: keep copies.
		fr.Bytes = bytes.Clone(fr.Bytes)
		recs := make([]codec.Record, len(fr.Batch.Records))
		for i, r := range fr.Batch.Records {
			r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
			recs[i] = r
		}
		fr.Batch.Records = recs
		out = append(out, fr)
	}
}

func TestReaderLevels(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		data, starts := file(t, 100, 4, c)
		for _, lvl := range []Level{LevelHeader, LevelCRC, LevelDecode} {
			frs := frames(data, ReaderOptions{Level: lvl, Next: 100})
			if len(frs) != 4 {
				t.Fatalf("%v level %d: %d frames, want 4", c, lvl, len(frs))
			}
			for i, fr := range frs {
				if !fr.OK() || fr.Position != starts[i] || fr.Header.BaseOffset != 100+int64(3*i) || fr.NextOffset != 103+int64(3*i) {
					t.Errorf("%v level %d frame %d: %+v", c, lvl, i, fr)
				}
				if (lvl >= LevelCRC) != (fr.Bytes != nil) {
					t.Errorf("%v level %d frame %d: %d bytes held", c, lvl, i, len(fr.Bytes))
				}
				if lvl == LevelDecode && (len(fr.Batch.Records) != 3 || fr.Batch.Records[2].Offset != 102+int64(3*i)) {
					t.Errorf("%v frame %d: decoded %+v", c, i, fr.Batch.Records)
				}
			}
		}
	}
}

// TestReaderHeaderLevelReadsHeadersOnly: a header walk costs 52 bytes per
// batch, whatever the batches' size.
func TestReaderHeaderLevelReadsHeadersOnly(t *testing.T) {
	var data []byte
	for i := 0; i < 5; i++ {
		b, _ := batch(t, int64(i), 1, 64<<10, codec.CodecNone)
		data = append(data, b...)
	}
	cr := &countingReader{r: bytes.NewReader(data)}
	rd := NewReader(cr, int64(len(data)), ReaderOptions{Level: LevelHeader})
	n := 0
	for fr, ok := rd.Next(); ok; fr, ok = rd.Next() {
		if !fr.OK() {
			t.Fatalf("frame %+v", fr)
		}
		n++
	}
	if n != 5 || cr.n.Load() != 5*codec.HeaderLen {
		t.Fatalf("%d frames, %d bytes read; want 5 and %d", n, cr.n.Load(), 5*codec.HeaderLen)
	}
}

// TestReaderVerdicts: each kind of damage gets a verdict wrapping its codec
// sentinel, naming what is wrong; with Resync the reader steps over it to
// the next acceptable batch and says where.
func TestReaderVerdicts(t *testing.T) {
	data, starts := file(t, 0, 4, codec.CodecNone)
	b0 := data[starts[0]:starts[1]]
	cases := []struct {
		name   string
		data   []byte
		opts   ReaderOptions
		at     int64 // position of the damaged frame
		cause  error
		text   string
		resync int64 // where the next frame starts, -1: none
	}{
		{"flipped CRC", flip(data, starts[1]+30), ReaderOptions{Level: LevelCRC}, starts[1], codec.ErrChecksum, "checksum mismatch", starts[2]},
		{"torn tail", data[:len(data)-5], ReaderOptions{Level: LevelCRC}, starts[3], codec.ErrTorn, "overruns the file end by 5 bytes", -1},
		{"short tail", append(bytes.Clone(data), 1, 1, 0), ReaderOptions{Level: LevelCRC}, int64(len(data)), codec.ErrTorn, "3 bytes at the file end", -1},
		{"offset below the previous batch", append(bytes.Clone(data), b0...), ReaderOptions{Level: LevelCRC}, int64(len(data)), codec.ErrCorrupt, "batch base offset 0 is below the expected 12", -1},
		{"offset past the segment end", data, ReaderOptions{Level: LevelCRC, Limit: 7}, starts[2], codec.ErrCorrupt, "batch at offset 6 ends at 9, past the segment end 7", -1},
		{"bad magic", flip(data, starts[2]), ReaderOptions{Level: LevelHeader}, starts[2], codec.ErrCorrupt, "bad magic", starts[3]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, resync := range []bool{false, true} {
				opts := c.opts
				opts.Resync = resync
				frs := frames(c.data, opts)
				var bad *Frame
				for i := range frs {
					if !frs[i].OK() {
						bad = &frs[i]
						break
					}
				}
				if bad == nil || bad.Position != c.at {
					t.Fatalf("resync %v: damaged frame %+v, want one at %d", resync, bad, c.at)
				}
				if !errors.Is(bad.Err, c.cause) || !strings.Contains(bad.Err.Error(), c.text) {
					t.Errorf("resync %v: verdict %q (cause %v), want %v with %q", resync, bad.Err, errors.Unwrap(bad.Err), c.cause, c.text)
				}
				last := frs[len(frs)-1]
				switch {
				case !resync || c.resync < 0:
					if last.Position != c.at || last.Resynced || last.Position+last.Size != int64(len(c.data)) {
						t.Errorf("resync %v: the damaged frame %+v is not the last, reaching the file end", resync, last)
					}
				default:
					if !bad.Resynced || bad.Position+bad.Size != c.resync {
						t.Errorf("resync %v: damaged frame %+v does not end at %d", resync, *bad, c.resync)
					}
				}
			}
		})
	}
}

func flip(data []byte, pos int64) []byte {
	b := bytes.Clone(data)
	b[pos] ^= 0x40
	return b
}

// TestReaderProgressAndBuffer: progress reports positions up to the file
// size, ascending; the buffer handed back is reused by the next reader.
func TestReaderProgressAndBuffer(t *testing.T) {
	data, _ := file(t, 0, 50, codec.CodecZstd)
	path := filepath.Join(t.TempDir(), LogFile(0))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last int64
	rd := NewReader(f, int64(len(data)), ReaderOptions{Level: LevelCRC, Progress: func(done int64) {
		if done < last {
			t.Errorf("progress went back from %d to %d", last, done)
		}
		last = done
	}})
	for fr, ok := rd.Next(); ok; fr, ok = rd.Next() {
		if !fr.OK() {
			t.Fatalf("frame %+v", fr)
		}
	}
	if last != int64(len(data)) {
		t.Errorf("progress ended at %d of %d", last, len(data))
	}
	buf := rd.Buf()
	rd2 := NewReader(f, int64(len(data)), ReaderOptions{Level: LevelCRC, Buf: buf})
	if fr, ok := rd2.Next(); !ok || !fr.OK() || &rd2.Buf()[0] != &buf[0] {
		t.Errorf("second reader: %+v, buffer reused %v", fr, &rd2.Buf()[0] == &buf[0])
	}
}

// FuzzReader reads arbitrary bytes at every level: frames tile the file
// when the reader resyncs, every accepted batch verifies, its offsets
// ascend, every rejection names a codec sentinel, and a batch accepted at a
// higher level is accepted at the lower ones.
func FuzzReader(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "recovery", "segments", "*.log"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		var data []byte
		for i := int64(0); i < 3; i++ {
			b, _, err := encodeBatch(3*i, 3, 20, c)
			if err != nil {
				f.Fatal(err)
			}
			data = append(data, b...)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		ok := map[Level]map[int64]bool{}
		for _, lvl := range []Level{LevelHeader, LevelCRC, LevelDecode} {
			ok[lvl] = map[int64]bool{}
			var pos, next int64
			for _, fr := range frames(data, ReaderOptions{Level: lvl, Resync: true}) {
				if fr.Position != pos || fr.Size <= 0 {
					t.Fatalf("level %d: frame at %d size %d, want one at %d", lvl, fr.Position, fr.Size, pos)
				}
				pos += fr.Size
				if !fr.OK() {
					if !errors.Is(fr.Err, codec.ErrTorn) && !errors.Is(fr.Err, codec.ErrCorrupt) && !errors.Is(fr.Err, codec.ErrChecksum) {
						t.Fatalf("level %d: verdict %v names no codec sentinel", lvl, fr.Err)
					}
					continue
				}
				ok[lvl][fr.Position] = true
				if lvl >= LevelCRC {
					if _, err := codec.VerifyBatch(fr.Bytes); err != nil {
						t.Fatalf("accepted batch at %d does not verify: %v", fr.Position, err)
					}
					if fr.Header.BaseOffset < next || fr.NextOffset <= fr.Header.BaseOffset {
						t.Fatalf("accepted batch at %d: offsets [%d, %d) after %d", fr.Position, fr.Header.BaseOffset, fr.NextOffset, next)
					}
					next = fr.NextOffset
				}
			}
			if pos != int64(len(data)) {
				t.Fatalf("level %d: frames end at %d of %d", lvl, pos, len(data))
			}
			// Exact reads give the same verdicts and batches.
			win := frames(data, ReaderOptions{Level: lvl, Resync: true})
			ex := frames(data, ReaderOptions{Level: lvl, Resync: true, Exact: true})
			if len(win) != len(ex) {
				t.Fatalf("level %d: %d frames, %d with Exact", lvl, len(win), len(ex))
			}
			for i := range win {
				a, b := win[i], ex[i]
				if a.Position != b.Position || a.Size != b.Size || a.OK() != b.OK() || a.NextOffset != b.NextOffset ||
					!bytes.Equal(a.Bytes, b.Bytes) || len(a.Batch.Records) != len(b.Batch.Records) {
					t.Fatalf("level %d frame %d: %+v; with Exact %+v", lvl, i, a, b)
				}
			}
		}
		for p := range ok[LevelDecode] {
			if !ok[LevelCRC][p] {
				t.Fatalf("batch at %d decoded but not accepted at LevelCRC", p)
			}
		}
	})
}

// A batch larger than the read window, whose header the window already
// holds, is read whole: the bytes kept from the window are the file's.
func TestReaderBatchLargerThanWindow(t *testing.T) {
	small0, _ := batch(t, 0, 3, 40, codec.CodecNone)
	big, _ := batch(t, 3, 1, windowSize+windowSize/4, codec.CodecNone)
	small4, _ := batch(t, 4, 3, 40, codec.CodecNone)
	data := append(append(append([]byte(nil), small0...), big...), small4...)
	for _, lvl := range []Level{LevelCRC, LevelDecode} {
		for _, exact := range []bool{false, true} {
			fs := frames(data, ReaderOptions{Level: lvl, Exact: exact})
			if len(fs) != 3 {
				t.Fatalf("level %d exact %v: %d frames, want 3", lvl, exact, len(fs))
			}
			for i, fr := range fs {
				if !fr.OK() {
					t.Fatalf("level %d exact %v: frame %d at %d rejected: %v", lvl, exact, i, fr.Position, fr.Err)
				}
			}
			if !bytes.Equal(fs[1].Bytes, big) {
				t.Fatalf("level %d exact %v: the big batch's bytes differ from the file's", lvl, exact)
			}
		}
	}
}

// Exact reads a batch's header, then the rest of the batch, nothing more; the frames it
// hands out stay valid after the next call; Restart starts again at a position and
// DecodeFrom passes the batches before an offset without decoding them.
func TestReaderExact(t *testing.T) {
	data, starts := file(t, 0, 6, codec.CodecZstd)
	cr := &countingReader{r: bytes.NewReader(data)}
	rd := NewReader(cr, int64(len(data)), ReaderOptions{Level: LevelDecode, Exact: true, Start: starts[2], Next: 6, DecodeFrom: 10})
	var kept []Frame
	for {
		fr, ok := rd.Next()
		if !ok {
			break
		}
		if !fr.OK() {
			t.Fatalf("frame at %d rejected: %v", fr.Position, fr.Err)
		}
		kept = append(kept, fr)
	}
	if len(kept) != 4 {
		t.Fatalf("%d frames from position %d, want 4", len(kept), starts[2])
	}
	var want int64
	for i, fr := range kept {
		want += fr.Size
		if fr.Position != starts[2+i] || !bytes.Equal(fr.Bytes, data[fr.Position:fr.Position+fr.Size]) {
			t.Fatalf("frame %d at %d: bytes differ from the file's (reused buffer?)", i, fr.Position)
		}
		// Offsets [6,9) end at or below 10: not decoded; [9,12) holds 10.
		if decoded := len(fr.Batch.Records) > 0; decoded != (i > 0) {
			t.Fatalf("frame %d (offsets from %d): decoded %v with DecodeFrom 10", i, fr.Header.BaseOffset, decoded)
		}
		for j, r := range fr.Batch.Records {
			if r.Offset != fr.Header.BaseOffset+int64(j) || len(r.Value) != 40 {
				t.Fatalf("frame %d record %d: offset %d, %d value bytes", i, j, r.Offset, len(r.Value))
			}
		}
	}
	if got := cr.n.Load(); got != want {
		t.Fatalf("read %d bytes for %d batches, want %d (each batch's bytes once)", got, len(kept), want)
	}
	// The first frame's records survive the later decodes.
	if kept[1].Batch.Records[0].Offset != 9 || kept[3].Batch.Records[2].Offset != 17 {
		t.Fatalf("records of earlier frames changed: %d, %d", kept[1].Batch.Records[0].Offset, kept[3].Batch.Records[2].Offset)
	}

	// Restart back; with an expected offset past the batch there, it is
	// rejected, and Restart resumes after the damaged frame ended the walk.
	rd.Restart(starts[1], 4)
	if fr, ok := rd.Next(); !ok || fr.OK() || !errors.Is(fr.Err, codec.ErrCorrupt) {
		t.Fatalf("batch at offset 3 with 4 expected: ok %v err %v", ok, fr.Err)
	}
	if _, ok := rd.Next(); ok {
		t.Fatal("walk goes on after a damaged frame without Resync")
	}
	rd.Restart(starts[1], 3)
	rd.SetDecodeFrom(0)
	if fr, ok := rd.Next(); !ok || !fr.OK() || fr.Position != starts[1] || len(fr.Batch.Records) != 3 {
		t.Fatalf("after Restart: frame at %d ok %v err %v, %d records", fr.Position, ok, fr.Err, len(fr.Batch.Records))
	}
}
