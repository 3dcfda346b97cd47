package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var codecs = []Codec{CodecNone, CodecZstd}

// shapes is every record shape the format distinguishes.
func shapes() map[string][]Record {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	many := make([]Record, 5000)
	for i := range many {
		many[i] = Record{Key: []byte{byte(i), byte(i >> 8)}, Value: jsonRecord(i, 100), Timestamp: 1_700_000_000_000 + int64(i/10)}
	}
	return map[string][]Record{
		"null key":     {{Key: nil, Value: []byte("v"), Timestamp: 1000}},
		"empty key":    {{Key: []byte{}, Value: []byte("v"), Timestamp: 1000}},
		"tombstone":    {{Key: []byte("k"), Value: nil, Timestamp: 1000}},
		"empty value":  {{Key: []byte("k"), Value: []byte{}, Timestamp: 1000}},
		"null and nil": {{Timestamp: 5}},
		"headers": {{Key: []byte("k"), Value: []byte("v"), Timestamp: 1000, Headers: []Header{
			{Key: "content-type", Value: []byte("application/json")},
			{Key: "empty", Value: []byte{}},
			{Key: "null", Value: nil},
			{Key: "", Value: []byte("empty key")},
		}}, {Key: []byte("k2"), Timestamp: 1001}, {Timestamp: 1002, Headers: []Header{{Key: "x", Value: []byte("y")}}}},
		"1 MiB value":  {{Key: []byte("big"), Value: big, Timestamp: 1000}},
		"many records": many,
		"timestamps":   {{Timestamp: -5}, {Timestamp: 1<<31 - 1 - 5}, {Timestamp: -5 - 1<<31}, {Timestamp: 0}},
		"text values": {{Value: []byte("42"), Attributes: AttrTextValue, Timestamp: 1000},
			{Value: []byte("42"), Timestamp: 1000}, {Value: []byte("null"), Attributes: AttrTextValue, Timestamp: 1001}},
	}
}

func TestRoundTrip(t *testing.T) {
	for name, recs := range shapes() {
		for _, c := range codecs {
			for _, sparse := range []bool{false, true} {
				t.Run(name+"/"+c.String()+map[bool]string{false: "", true: "/sparse"}[sparse], func(t *testing.T) {
					const base = 1 << 40
					want := withOffsets(recs, base, 0)
					if sparse {
						for i := range want {
							want[i].Offset = base + 3 + int64(i)*7
						}
					}
					prefix := []byte("prefix")
					b, err := AppendBatch(prefix, base, want, EncodeOptions{Codec: c, Sparse: sparse})
					if err != nil {
						t.Fatal(err)
					}
					if string(b[:len(prefix)]) != "prefix" {
						t.Fatal("AppendBatch changed the bytes before the batch")
					}
					b = b[len(prefix):]
					batch, err := DecodeBatch(b)
					if err != nil {
						t.Fatal(err)
					}
					h := batch.Header
					if h.BaseOffset != base || h.RecordCount != uint32(len(want)) || h.Codec() != c || h.Sparse() != sparse ||
						h.Size() != int64(len(b)) || h.FirstTimestamp != want[0].Timestamp || h.LastTimestamp != want[len(want)-1].Timestamp {
						t.Fatalf("header %+v does not describe the batch", h)
					}
					if err := recordsEqual(want, batch.Records); err != nil {
						t.Fatal(err)
					}
					last, err := LastOffset(b)
					if err != nil || last != want[len(want)-1].Offset {
						t.Fatalf("LastOffset = %d, %v; want %d", last, err, want[len(want)-1].Offset)
					}
					raw, err := RawLen(b)
					if err != nil {
						t.Fatal(err)
					}
					var wantRaw int64
					for i := range want {
						wantRaw += recLenSize + recordBody(&want[i])
					}
					if raw != wantRaw {
						t.Fatalf("RawLen = %d, want %d", raw, wantRaw)
					}
				})
			}
		}
	}
}

// TestDecodeAliases checks the documented zero-copy contract: with codec none
// keys and values point into the batch buffer.
func TestDecodeAliases(t *testing.T) {
	b := mustAppend(t, 0, []Record{{Key: []byte("key"), Value: []byte("value"), Timestamp: 1}}, EncodeOptions{})
	batch, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	v := batch.Records[0].Value
	copy(b[bytes.Index(b, []byte("value")):], "VALUE")
	if string(v) != "VALUE" {
		t.Fatalf("value %q does not alias the batch buffer", v)
	}
	if cap(v) != len(v) {
		t.Fatalf("value capacity %d exceeds its length %d: an append would overwrite the batch", cap(v), len(v))
	}
}

func TestDecodeBatchIntoReuses(t *testing.T) {
	b1 := mustAppend(t, 10, withOffsets(make([]Record, 3), 10, 1), EncodeOptions{})
	b2 := mustAppend(t, 20, []Record{{Key: []byte("a"), Timestamp: 1, Headers: []Header{{Key: "h", Value: []byte("v")}}}}, EncodeOptions{Codec: CodecZstd})
	buf := make([]Record, 0, 8)
	batch, err := DecodeBatchInto(b1, buf)
	if err != nil || len(batch.Records) != 3 || &batch.Records[0] != &buf[:1][0] {
		t.Fatalf("DecodeBatchInto did not decode into the given slice: %v", err)
	}
	batch, err = DecodeBatchInto(b2, batch.Records)
	if err != nil || len(batch.Records) != 1 || batch.Records[0].Offset != 20 || batch.Records[0].Headers[0].Key != "h" {
		t.Fatalf("second decode: %+v, %v", batch.Records, err)
	}
}

func TestDecodeAllocations(t *testing.T) {
	recs := make([]Record, 100)
	for i := range recs {
		recs[i] = Record{Key: []byte("k"), Value: jsonRecord(i, 1024), Timestamp: int64(i)}
	}
	b := mustAppend(t, 0, recs, EncodeOptions{})
	dst := make([]Record, 0, 100)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := DecodeBatchInto(b, dst); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("decoding 100 header-less records into a reused slice allocated %v times, want 0", allocs)
	}
}

func TestTruncatedPrefixes(t *testing.T) {
	recs := shapes()["headers"]
	for _, c := range codecs {
		b := mustAppend(t, 7, withOffsets(recs, 7, 0), EncodeOptions{Codec: c})
		for n := 0; n < len(b); n++ {
			for name, fn := range map[string]func([]byte) error{
				"DecodeBatch": func(p []byte) error { _, err := DecodeBatch(p); return err },
				"VerifyBatch": func(p []byte) error { _, err := VerifyBatch(p); return err },
				"LastOffset":  func(p []byte) error { _, err := LastOffset(p); return err },
			} {
				err := fn(bytes.Clone(b[:n]))
				if !errors.Is(err, ErrTorn) {
					t.Fatalf("%s: %s of a %d-byte prefix of a %d-byte batch: %v, want ErrTorn", c, name, n, len(b), err)
				}
				if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrChecksum) {
					t.Fatalf("%s: prefix %d: %v is also reported as corrupt", c, n, err)
				}
			}
			if n < HeaderLen {
				if _, err := ParseHeader(b[:n]); !errors.Is(err, ErrTorn) {
					t.Fatalf("ParseHeader of %d bytes: %v, want ErrTorn", n, err)
				}
			}
		}
		if _, err := DecodeBatch(append(bytes.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: batch with a trailing byte: %v, want ErrCorrupt", c, err)
		}
	}
}

func TestBitFlips(t *testing.T) {
	recs := shapes()["headers"]
	for _, c := range codecs {
		orig := mustAppend(t, 1000, withOffsets(recs, 1000, 0), EncodeOptions{Codec: c})
		for i := range orig {
			for bit := 0; bit < 8; bit++ {
				b := bytes.Clone(orig)
				b[i] ^= 1 << bit
				batch, err := DecodeBatch(b)
				inBatchLen := i >= offBatchLen && i < offBatchLen+4
				switch {
				case err == nil:
					// The flags are outside the CRC; setting the sparse
					// bit on a contiguous batch changes nothing decoded.
					if i != offFlags+1 || 1<<bit != FlagSparse {
						t.Fatalf("%s: flipping bit %d of byte %d went unnoticed", c, bit, i)
					}
					if err := recordsEqual(withOffsets(recs, 1000, 0), batch.Records); err != nil {
						t.Fatalf("%s: sparse-bit flip decoded different records: %v", c, err)
					}
				case errors.Is(err, ErrChecksum), errors.Is(err, ErrCorrupt):
				case inBatchLen && errors.Is(err, ErrTorn):
				default:
					t.Fatalf("%s: flipping bit %d of byte %d: %v, want ErrChecksum or ErrCorrupt", c, bit, i, err)
				}
			}
		}
	}
}

func TestBadHeader(t *testing.T) {
	orig := mustAppend(t, 0, []Record{{Value: []byte("v"), Timestamp: 1}}, EncodeOptions{})
	cases := map[string]struct {
		mutate func(b []byte)
		want   []error
		text   string
	}{
		"magic":            {func(b []byte) { b[offMagic] = 0x02 }, []error{ErrCorrupt}, "magic"},
		"version":          {func(b []byte) { b[offVersion] = 0x02 }, []error{ErrCorrupt}, "version"},
		"unknown flag bit": {func(b []byte) { binary.BigEndian.PutUint16(b[offFlags:], 0x0010) }, []error{ErrCorrupt}, "flag"},
		"high flag bit":    {func(b []byte) { binary.BigEndian.PutUint16(b[offFlags:], 0x8000) }, []error{ErrCorrupt}, "flag"},
		"unknown codec":    {func(b []byte) { binary.BigEndian.PutUint16(b[offFlags:], 0x0002) }, []error{ErrCorrupt}, "codec 2"},
		"batchLen bound": {func(b []byte) { binary.BigEndian.PutUint32(b[offBatchLen:], MaxBatchBytes+1) },
			[]error{ErrCorrupt, ErrTooLarge}, "batchLen"},
		"zero records":     {func(b []byte) { binary.BigEndian.PutUint32(b[offRecordCount:], 0) }, []error{ErrCorrupt}, "recordCount"},
		"too many records": {func(b []byte) { binary.BigEndian.PutUint32(b[offRecordCount:], 2) }, []error{ErrCorrupt}, "cannot fit"},
		"negative base":    {func(b []byte) { binary.BigEndian.PutUint64(b[offBaseOffset:], 1<<63) }, []error{ErrCorrupt}, "negative"},
		"offset overflow":  {func(b []byte) { binary.BigEndian.PutUint64(b[offBaseOffset:], 1<<63-1) }, []error{ErrCorrupt}, "overflows"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := bytes.Clone(orig)
			tc.mutate(b)
			fixCRC(b)
			_, err := ParseHeader(b)
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Fatalf("ParseHeader: %v, want %v", err, want)
				}
			}
			if _, err := DecodeBatch(b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("DecodeBatch: %v, want ErrCorrupt mentioning %q", err, tc.text)
			}
		})
	}
}

// recordField returns the position in a codec-none batch of record i's
// body field at bodyOff.
func recordField(t *testing.T, b []byte, i, bodyOff int) int {
	t.Helper()
	p := HeaderLen
	for ; i > 0; i-- {
		p += recLenSize + int(binary.BigEndian.Uint32(b[p:]))
	}
	return p + recLenSize + bodyOff
}

// TestStructuralChecks corrupts records and then recomputes the CRC, so the
// decoder's structural checks are what must catch each case.
func TestStructuralChecks(t *testing.T) {
	recs := withOffsets([]Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Value: []byte("2")}, {Key: []byte("c"), Value: []byte("3")}}, 0, 100)
	plain := mustAppend(t, 0, recs, EncodeOptions{})
	sparseRecs := withOffsets(recs, 0, 100)
	for i := range sparseRecs {
		sparseRecs[i].Offset = int64(10 * i)
	}
	sparse := mustAppend(t, 0, sparseRecs, EncodeOptions{Sparse: true})
	put := func(b []byte, rec, field int, v uint32) {
		binary.BigEndian.PutUint32(b[recordField(t, b, rec, field):], v)
	}
	cases := []struct {
		name   string
		batch  []byte
		mutate func(b []byte)
		text   string
	}{
		{"offsetDelta = recordCount", plain, func(b []byte) { put(b, 2, bodyOffDelta, 3) }, "offsetDelta 3 out of range"},
		{"offsetDelta huge", plain, func(b []byte) { put(b, 1, bodyOffDelta, 1<<31) }, "out of range"},
		{"offsetDelta repeated", plain, func(b []byte) { put(b, 1, bodyOffDelta, 0) }, "not above previous"},
		{"sparse offsetDelta 1<<31", sparse, func(b []byte) { put(b, 2, bodyOffDelta, 1<<31) }, "sparse bound"},
		{"sparse offsetDelta decreasing", sparse, func(b []byte) { put(b, 2, bodyOffDelta, 5) }, "not above previous"},
		{"contiguous flag on sparse batch", sparse, func(b []byte) { binary.BigEndian.PutUint16(b[offFlags:], 0) }, "out of range"},
		{"attributes", plain, func(b []byte) { b[recordField(t, b, 1, bodyAttr)] = 0x04 }, "attributes"},
		{"key length overrun", plain, func(b []byte) { put(b, 0, bodyKeyLen, 1000) }, "overruns"},
		{"record length too short", plain, func(b []byte) { put(b, 0, -recLenSize, 3) }, "length 3 out of range"},
		{"record length overrun", plain, func(b []byte) { put(b, 2, -recLenSize, 1000) }, "out of range"},
		{"first timestampDelta", plain, func(b []byte) { put(b, 0, bodyTSDelta, 1) }, "timestampDelta"},
		{"last timestamp", plain, func(b []byte) { binary.BigEndian.PutUint64(b[offLastTS:], 7) }, "last record timestamp"},
		{"header count", plain, func(b []byte) {
			binary.BigEndian.PutUint32(b[recordField(t, b, 1, 0)-recLenSize+recLenSize+recFixedBody+2-countFieldSize:], 1)
		}, "headers cannot fit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(tc.batch)
			tc.mutate(b)
			fixCRC(b)
			_, err := DecodeBatch(b)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("DecodeBatch: %v, want ErrCorrupt mentioning %q", err, tc.text)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	cases := map[string]struct {
		base int64
		recs []Record
		opts EncodeOptions
		want error
	}{
		"no records":          {0, nil, EncodeOptions{}, ErrInvalidBatch},
		"negative base":       {-1, []Record{{}}, EncodeOptions{}, ErrInvalidBatch},
		"unknown codec":       {0, []Record{{}}, EncodeOptions{Codec: 5}, ErrInvalidBatch},
		"timestamp too far":   {0, []Record{{Timestamp: 0}, {Timestamp: 1 << 31}}, EncodeOptions{}, ErrInvalidBatch},
		"timestamp overflow":  {0, []Record{{Timestamp: -1 << 63}, {Timestamp: 1<<63 - 1}}, EncodeOptions{}, ErrInvalidBatch},
		"sparse below base":   {10, []Record{{Offset: 9}}, EncodeOptions{Sparse: true}, ErrInvalidBatch},
		"sparse not rising":   {10, []Record{{Offset: 12}, {Offset: 12}}, EncodeOptions{Sparse: true}, ErrInvalidBatch},
		"sparse delta 1<<31":  {0, []Record{{Offset: 1 << 31}}, EncodeOptions{Sparse: true}, ErrInvalidBatch},
		"offset overflow":     {1<<63 - 1, []Record{{}, {}}, EncodeOptions{}, ErrInvalidBatch},
		"section over 256MiB": {0, []Record{{Value: make([]byte, MaxBatchBytes)}}, EncodeOptions{}, ErrTooLarge},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := AppendBatch(dst, tc.base, tc.recs, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("AppendBatch: %v, want %v", err, tc.want)
			}
			if string(out) != "keep" {
				t.Fatalf("AppendBatch changed dst on error: %q", out)
			}
		})
	}
}

// zstdBatch wraps a hand-made records section in a codec-zstd batch with a
// correct CRC.
func zstdBatch(section []byte, count uint32) []byte {
	b := make([]byte, HeaderLen, HeaderLen+len(section))
	h := BatchHeader{Magic: Magic, Version: Version, Flags: uint16(CodecZstd), BatchLen: uint32(len(section)), RecordCount: count}
	putHeader(b, &h)
	b = append(b, section...)
	fixCRC(b)
	return b
}

// frame builds a zstd frame header (single segment, 8-byte content size when
// fcs >= 0, none otherwise) followed by one last block.
func frame(fcs int64, block []byte) []byte {
	b := []byte{0x28, 0xB5, 0x2F, 0xFD}
	if fcs >= 0 {
		b = append(b, 3<<6|1<<5)
		b = binary.LittleEndian.AppendUint64(b, uint64(fcs))
	} else {
		b = append(b, 0, 0x58) // no content size, 1 MiB window
	}
	return append(b, block...)
}

// rawBlock is a last raw block holding data; rleBlock a last RLE block of n copies of c.
func rawBlock(data []byte) []byte {
	v := uint32(len(data))<<3 | 0<<1 | 1
	return append([]byte{byte(v), byte(v >> 8), byte(v >> 16)}, data...)
}

func rleBlock(c byte, n int) []byte {
	v := uint32(n)<<3 | 1<<1 | 1
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), c}
}

func TestZstdLimits(t *testing.T) {
	recs := mustAppend(t, 0, []Record{{Value: []byte("v")}}, EncodeOptions{})[HeaderLen:]
	cases := map[string]struct {
		section []byte
		want    []error
		text    string
	}{
		"declared size over bound":  {frame(MaxBatchBytes+1, rawBlock(recs)), []error{ErrCorrupt, ErrTooLarge}, "declares"},
		"declared 1 TiB":            {frame(1<<40, rleBlock('x', 1<<20)), []error{ErrCorrupt, ErrTooLarge}, "declares"},
		"no declared size":          {frame(-1, rawBlock(recs)), []error{ErrCorrupt}, "content size"},
		"declared less than actual": {frame(int64(len(recs)), rleBlock(0, 1<<20)), []error{ErrCorrupt}, "zstd"},
		"declared more than actual": {frame(int64(len(recs))+100, rawBlock(recs)), []error{ErrCorrupt}, "zstd"},
		"not zstd":                  {[]byte("this is not a zstd frame at all, no magic"), []error{ErrCorrupt}, "zstd frame header"},
		"trailing garbage":          {append(frame(int64(len(recs)), rawBlock(recs)), 1, 2, 3, 4, 5, 6, 7, 8, 9), []error{ErrCorrupt}, "zstd"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeBatch(zstdBatch(tc.section, 1))
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Fatalf("DecodeBatch: %v, want %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("DecodeBatch: %v, want a message mentioning %q", err, tc.text)
			}
		})
	}
	// The well-formed hand-made frame decodes, so the cases above fail for
	// the reason they name.
	if _, err := DecodeBatch(zstdBatch(frame(int64(len(recs)), rawBlock(recs)), 1)); err != nil {
		t.Fatalf("hand-made frame: %v", err)
	}
}

func TestEncodedZstdDeclaresSize(t *testing.T) {
	for _, n := range []int{1, 10, 300, 5000} {
		recs := make([]Record, n)
		for i := range recs {
			recs[i].Value = []byte("x")
		}
		b := mustAppend(t, 0, recs, EncodeOptions{Codec: CodecZstd})
		var fh zstd.Header
		if err := fh.Decode(b[HeaderLen:]); err != nil || !fh.HasFCS || fh.FrameContentSize != uint64(n*(minRecordLen+1)) {
			t.Fatalf("%d records: frame header %+v, %v; want content size %d", n, fh, err, n*(minRecordLen+1))
		}
	}
}

func TestCorruptError(t *testing.T) {
	_, cause := VerifyBatch(make([]byte, 10))
	err := error(&CorruptError{Path: "/data/p0/00000000000000000000.log", Position: 4096, Offset: 17, Err: cause})
	msg := err.Error()
	for _, want := range []string{"00000000000000000000.log", "byte position 4096", "offset 17", "torn"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not mention %q", msg, want)
		}
	}
	var ce *CorruptError
	if !errors.Is(err, ErrTorn) || !errors.As(err, &ce) || ce.Position != 4096 {
		t.Fatalf("errors.Is/As do not see through %v", err)
	}
	if msg := (&CorruptError{Path: "f", Position: 1, Offset: -1, Err: cause}).Error(); strings.Contains(msg, "offset") {
		t.Errorf("unknown offset printed: %q", msg)
	}
}

func TestCodecParse(t *testing.T) {
	for s, want := range map[string]Codec{"": CodecZstd, "zstd": CodecZstd, "none": CodecNone} {
		if c, ok := ParseCodec(s); !ok || c != want {
			t.Errorf("ParseCodec(%q) = %v, %v", s, c, ok)
		}
	}
	if _, ok := ParseCodec("gzip"); ok {
		t.Error("ParseCodec accepted gzip")
	}
}

// TestZstdBeyondWindow round-trips a records section larger than the
// encoder's window, which single-segment frames must still handle.
func TestZstdBeyondWindow(t *testing.T) {
	recs := make([]Record, 24)
	for i := range recs {
		v := make([]byte, 1<<20)
		for j := range v {
			v[j] = byte((j*7 + i) ^ (j >> 9))
		}
		recs[i] = Record{Key: []byte{byte(i)}, Value: v, Timestamp: int64(i)}
	}
	want := withOffsets(recs, 0, 0)
	b := mustAppend(t, 0, want, EncodeOptions{Codec: CodecZstd})
	batch, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordsEqual(want, batch.Records); err != nil {
		t.Fatal(err)
	}
}

// TestProducerStamp: a batch's producer stamp is written at bytes 40–51,
// covered by the CRC, and decoded back; the zero stamp writes zeros.
func TestProducerStamp(t *testing.T) {
	recs := []Record{{Value: []byte("a"), Timestamp: 5}, {Value: []byte("b"), Timestamp: 5}}
	for _, c := range []Codec{CodecNone, CodecZstd} {
		st := ProducerStamp{ID: 0xFEDCBA98, Epoch: 32767, BaseSequence: 1<<31 - 2}
		b, err := AppendBatch(nil, 10, recs, EncodeOptions{Codec: c, Producer: st})
		if err != nil {
			t.Fatal(err)
		}
		if got := b[offProducerID:headerLen]; !bytes.Equal(got, []byte{0xFE, 0xDC, 0xBA, 0x98, 0, 0, 0x7F, 0xFF, 0x7F, 0xFF, 0xFF, 0xFE}) {
			t.Fatalf("codec %v: stamp bytes % x", c, got)
		}
		d, err := DecodeBatch(b)
		if err != nil || d.Header.Producer() != st || len(d.Records) != 2 {
			t.Fatalf("codec %v: decoded %+v, %v", c, d.Header, err)
		}
		b[offBaseSequence+3] ^= 1
		if _, err := DecodeBatch(b); !errors.Is(err, ErrChecksum) {
			t.Fatalf("codec %v: a flipped stamp bit: %v, want ErrChecksum", c, err)
		}
		plain, _ := AppendBatch(nil, 10, recs, EncodeOptions{Codec: c})
		if got := plain[offProducerID:headerLen]; !bytes.Equal(got, make([]byte, 12)) {
			t.Fatalf("codec %v: unstamped batch has stamp bytes % x", c, got)
		}
	}
}

// TestZstdSectionIsNoneSection: a zstd batch's records section is one
// single-segment frame that declares its content size and inflates, with a
// stock zstd decoder, to exactly the records section codec none writes for
// the same records; the frame carries a checksum, and a batch whose frame
// checksum is wrong (its CRC fixed up) is refused as corrupt.
func TestZstdSectionIsNoneSection(t *testing.T) {
	recs := make([]Record, 200)
	for i := range recs {
		recs[i] = Record{Key: []byte{byte(i)}, Value: jsonRecord(i, 700), Timestamp: 7}
	}
	b := mustAppend(t, 40, recs, EncodeOptions{Codec: CodecZstd})
	plain := mustAppend(t, 40, recs, EncodeOptions{})
	var fh zstd.Header
	if err := fh.Decode(b[HeaderLen:]); err != nil || !fh.SingleSegment || !fh.HasFCS || !fh.HasCheckSum {
		t.Fatalf("frame header %+v, %v: want single segment, content size, checksum", fh, err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	section, err := dec.DecodeAll(b[HeaderLen:], nil)
	if err != nil || !bytes.Equal(section, plain[HeaderLen:]) {
		t.Fatalf("stock decoder: %d bytes, %v; want the %d bytes of the codec none section", len(section), err, len(plain)-HeaderLen)
	}
	batch, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordsEqual(withOffsets(recs, 40, 0), batch.Records); err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] ^= 0xFF // the frame's checksum: its last 4 bytes
	fixCRC(bad)
	if _, err := DecodeBatch(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("frame with a wrong checksum: %v, want ErrCorrupt", err)
	}
}
