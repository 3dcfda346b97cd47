package recovery

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// rawScan scans data as a whole segment.
func rawScan(data []byte, base, limit int64, sealed bool) scanOutput {
	return scanSegment(scanInput{
		path: "seg", r: bytes.NewReader(data), size: int64(len(data)), base: base, limit: limit,
		sealed: sealed, startOff: base, interval: 4096, lastIndexed: -1,
	})
}

// batchStarts returns the positions of the batches in data (which must be valid).
func batchStarts(t *testing.T, data []byte) []int64 {
	t.Helper()
	var ps []int64
	for p := int64(0); p < int64(len(data)); {
		h, err := codec.ParseHeader(data[p:])
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
		p += h.Size()
	}
	return ps
}

func TestScanClean(t *testing.T) {
	var data []byte
	next := int64(100)
	for i := 0; i < 50; i++ {
		data = appendBatch(t, data, next, 1+i%5, codec.Codec(i%2))
		next += int64(1 + i%5)
	}
	out := rawScan(data, 100, maxOffset, false)
	if out.torn != nil || len(out.corrupt) > 0 {
		t.Fatalf("torn %v corrupt %v", out.torn, out.corrupt)
	}
	if out.next != next || out.validEnd != int64(len(data)) || out.batches != 50 || out.bytes != int64(len(data)) {
		t.Fatalf("next %d validEnd %d batches %d bytes %d", out.next, out.validEnd, out.batches, out.bytes)
	}
	if out.indexProblem == "" || !strings.Contains(out.indexProblem, "no entry") {
		t.Fatalf("no disk index given, problem = %q", out.indexProblem)
	}
	if len(out.index) == 0 || out.index[0] != (indexEntry{0, 100}) {
		t.Fatalf("rebuilt index %v", out.index)
	}
	// The rebuilt index passes as the disk index.
	in := scanInput{path: "seg", r: bytes.NewReader(data), size: int64(len(data)), base: 100, limit: maxOffset,
		startOff: 100, interval: 4096, lastIndexed: -1, disk: out.index}
	if again := scanSegment(in); again.indexProblem != "" {
		t.Fatalf("rebuilt index rejected: %s", again.indexProblem)
	}
}

func TestScanSparse(t *testing.T) {
	var data []byte
	data = appendSparse(t, data, []int64{10, 13, 17}, codec.CodecZstd)
	data = appendSparse(t, data, []int64{18, 30}, codec.CodecNone)
	out := rawScan(data, 10, 40, true)
	if out.torn != nil || len(out.corrupt) > 0 || out.next != 31 {
		t.Fatalf("torn %v corrupt %v next %d", out.torn, out.corrupt, out.next)
	}
	// A sparse batch reaching past the segment limit is rejected.
	out = rawScan(data, 10, 25, true)
	if len(out.corrupt) != 1 || out.corrupt[0].FirstOffset != 18 || out.corrupt[0].EndOffset != 25 {
		t.Fatalf("corrupt %+v", out.corrupt)
	}
}

func TestScanTornTail(t *testing.T) {
	var data []byte
	for i := 0; i < 3; i++ {
		data = appendBatch(t, data, int64(i*4), 4, codec.CodecZstd)
	}
	starts := batchStarts(t, data)
	for cut := starts[1]; cut < int64(len(data)); cut++ {
		out := rawScan(data[:cut], 0, maxOffset, false)
		wantEnd := starts[1]
		wantNext := int64(4)
		if cut >= starts[2] {
			wantEnd, wantNext = starts[2], 8
		}
		if cut == wantEnd {
			if out.torn != nil {
				t.Fatalf("cut %d at a boundary: torn %+v", cut, out.torn)
			}
		} else if out.torn == nil || out.torn.Position != wantEnd || out.torn.Bytes != cut-wantEnd {
			t.Fatalf("cut %d: torn %+v, want position %d", cut, out.torn, wantEnd)
		}
		if len(out.corrupt) != 0 || out.next != wantNext || out.validEnd != wantEnd {
			t.Fatalf("cut %d: corrupt %v next %d validEnd %d", cut, out.corrupt, out.next, out.validEnd)
		}
	}
}

func TestScanMidFileCorruption(t *testing.T) {
	var data []byte
	for i := 0; i < 5; i++ {
		data = appendBatch(t, data, int64(i*3), 3, codec.CodecNone)
	}
	starts := batchStarts(t, data)
	bad := append([]byte(nil), data...)
	bad[starts[2]+codec.HeaderLen+5] ^= 0x10 // a record byte of batch 2
	for _, sealed := range []bool{false, true} {
		out := rawScan(bad, 0, 15, sealed)
		if out.torn != nil || len(out.corrupt) != 1 {
			t.Fatalf("sealed %v: torn %v corrupt %v", sealed, out.torn, out.corrupt)
		}
		c := out.corrupt[0]
		if c.StartPos != starts[2] || c.EndPos != starts[3] || c.FirstOffset != 6 || c.EndOffset != 9 || !strings.Contains(c.Err, "checksum") {
			t.Fatalf("corrupt range %+v", c)
		}
		if out.next != 15 || out.batches != 4 {
			t.Fatalf("next %d batches %d", out.next, out.batches)
		}
	}
	// The same damage in the last batch: torn in the active segment, corrupt
	// (never truncated) in a sealed one.
	bad = append([]byte(nil), data...)
	bad[starts[4]+9] ^= 0x01 // base offset of the last batch
	out := rawScan(bad, 0, maxOffset, false)
	if out.torn == nil || out.torn.Position != starts[4] || len(out.corrupt) != 0 || out.next != 12 {
		t.Fatalf("active: torn %+v corrupt %v next %d", out.torn, out.corrupt, out.next)
	}
	out = rawScan(bad, 0, 15, true)
	if out.torn != nil || len(out.corrupt) != 1 || out.corrupt[0].StartPos != starts[4] || out.corrupt[0].EndPos != int64(len(bad)) ||
		out.corrupt[0].FirstOffset != 12 || out.corrupt[0].EndOffset != 15 {
		t.Fatalf("sealed: torn %+v corrupt %+v", out.torn, out.corrupt)
	}
}

func TestScanIndexProblems(t *testing.T) {
	var data []byte
	for i := 0; i < 200; i++ {
		data = appendBatch(t, data, int64(i*2), 2, codec.CodecNone)
	}
	good := rawScan(data, 0, maxOffset, false).index
	if len(good) < 5 {
		t.Fatalf("only %d index entries", len(good))
	}
	check := func(name string, disk []indexEntry, want string) {
		t.Helper()
		out := scanSegment(scanInput{path: "seg", r: bytes.NewReader(data), size: int64(len(data)), limit: maxOffset,
			interval: 4096, lastIndexed: -1, disk: disk})
		if !strings.Contains(out.indexProblem, want) {
			t.Errorf("%s: problem %q, want %q", name, out.indexProblem, want)
		}
	}
	check("short", good[:len(good)-2], "no entry")
	check("wrong offset", append(append([]indexEntry(nil), good[:2]...), indexEntry{good[2].pos, good[2].offset + 1}), "says offset")
	check("not a boundary", append(append(append([]indexEntry(nil), good[:2]...), indexEntry{good[1].pos + 1, good[1].offset + 1}), good[2:]...), "not a batch boundary")
	check("past the end", append(append([]indexEntry(nil), good...), indexEntry{int64(len(data)) + 10, 9999}), "past the last valid batch")
}

// TestScanLongGarbage: a long damaged region full of bytes that look like
// the start of a header is passed in one quick pass, and the valid batch
// after it is found.
func TestScanLongGarbage(t *testing.T) {
	var data []byte
	data = appendBatch(t, data, 0, 2, codec.CodecNone)
	garbage := bytes.Repeat([]byte{codec.Magic, codec.Version}, 2<<20) // 4 MiB
	data = append(data, garbage...)
	first := int64(len(data)) - int64(len(garbage))
	data = appendBatch(t, data, 2, 3, codec.CodecZstd)
	out := rawScan(data, 0, maxOffset, false)
	if len(out.corrupt) != 1 || out.corrupt[0].StartPos != first || out.corrupt[0].EndPos != first+int64(len(garbage)) || out.next != 5 {
		t.Fatalf("corrupt %+v next %d", out.corrupt, out.next)
	}
}
