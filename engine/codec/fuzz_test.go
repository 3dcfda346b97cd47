package codec

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden batches in testdata/codec")

// goldenDir holds encoded batches: the seed corpus of the fuzz targets and a
// check that the format does not drift.
const goldenDir = "../../testdata/codec"

// goldenBatches are the batches kept in goldenDir, by file name.
func goldenBatches() map[string]struct {
	base int64
	recs []Record
	opts EncodeOptions
} {
	type g = struct {
		base int64
		recs []Record
		opts EncodeOptions
	}
	shapes := []Record{
		{Key: nil, Value: []byte(`{"hello":"world"}`), Timestamp: 1_764_000_000_000},
		{Key: []byte{}, Value: []byte("empty key"), Timestamp: 1_764_000_000_001},
		{Key: []byte("user-1"), Value: nil, Timestamp: 1_764_000_000_002},
		{Key: []byte("user-2"), Value: []byte{}, Timestamp: 1_764_000_000_002},
		{Key: []byte("user-3"), Value: []byte("v"), Timestamp: 1_764_000_000_010, Headers: []Header{
			{Key: "trace", Value: []byte("abc123")}, {Key: "empty", Value: []byte{}}, {Key: "null", Value: nil}}},
	}
	json := make([]Record, 20)
	for i := range json {
		json[i] = Record{Key: []byte{'k', byte('a' + i%5)}, Value: jsonRecord(i, 200), Timestamp: 1_764_000_000_000 + int64(i)}
	}
	sparse := make([]Record, len(shapes))
	copy(sparse, shapes)
	for i := range sparse {
		sparse[i].Offset = 500 + int64(i*i*3)
	}
	return map[string]g{
		"shapes-none.batch":  {42, shapes, EncodeOptions{Codec: CodecNone}},
		"shapes-zstd.batch":  {42, shapes, EncodeOptions{Codec: CodecZstd}},
		"json-none.batch":    {0, json, EncodeOptions{Codec: CodecNone}},
		"json-zstd.batch":    {1 << 33, json, EncodeOptions{Codec: CodecZstd}},
		"sparse-none.batch":  {500, sparse, EncodeOptions{Codec: CodecNone, Sparse: true}},
		"sparse-zstd.batch":  {499, sparse, EncodeOptions{Codec: CodecZstd, Sparse: true}},
		"single-empty.batch": {7, []Record{{}}, EncodeOptions{}},
	}
}

// TestGolden decodes the stored batches (written by -update) and checks they
// hold the expected records; codec-none batches must also be byte-identical
// to what the encoder writes today.
func TestGolden(t *testing.T) {
	for name, g := range goldenBatches() {
		enc := mustAppend(t, g.base, g.recs, g.opts)
		path := filepath.Join(goldenDir, name)
		if *update {
			if err := os.WriteFile(path, enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		stored, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
		}
		batch, err := DecodeBatch(stored)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := g.recs
		if !g.opts.Sparse {
			want = withOffsets(g.recs, g.base, 0)
		}
		if err := recordsEqual(want, batch.Records); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g.opts.Codec == CodecNone && !bytes.Equal(enc, stored) {
			t.Fatalf("%s: the encoder no longer writes the stored bytes", name)
		}
	}
}

// goldenFiles returns the stored batches for seeding fuzz targets.
func goldenFiles(f *testing.F) [][]byte {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.batch"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed batches in %s: %v", goldenDir, err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// isCodecError reports whether err is one of the decode sentinels.
func isCodecError(err error) bool {
	return errors.Is(err, ErrTorn) || errors.Is(err, ErrChecksum) || errors.Is(err, ErrCorrupt)
}

// reencode encodes decoded records again and checks they decode the same.
func reencode(t *testing.T, h BatchHeader, recs []Record, c Codec) {
	t.Helper()
	b, err := AppendBatch(nil, h.BaseOffset, recs, EncodeOptions{Codec: c, Sparse: h.Sparse()})
	if err != nil {
		t.Fatalf("re-encoding decoded records: %v", err)
	}
	again, err := DecodeBatch(b)
	if err != nil {
		t.Fatalf("decoding re-encoded records: %v", err)
	}
	if err := recordsEqual(recs, again.Records); err != nil {
		t.Fatalf("round trip through the encoder: %v", err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	for _, b := range goldenFiles(f) {
		f.Add(b)
	}
	text, err := AppendBatch(nil, 7, []Record{{Value: []byte("42"), Attributes: AttrTextValue, Timestamp: 1}, {Value: []byte("42"), Timestamp: 2}}, EncodeOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(text)
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(b []byte) {
			batch, err := DecodeBatch(b)
			if err != nil {
				if !isCodecError(err) {
					t.Fatalf("error matching no sentinel: %v", err)
				}
				return
			}
			reencode(t, batch.Header, batch.Records, batch.Header.Codec())
		}
		check(data)
		// Again with a correct CRC, so the fuzzer reaches the records.
		if len(data) >= HeaderLen {
			b := bytes.Clone(data)
			fixCRC(b)
			check(b)
		}
	})
}

func FuzzDecodeRecords(f *testing.F) {
	for _, b := range goldenFiles(f) {
		h, err := VerifyBatch(b)
		if err != nil {
			f.Fatal(err)
		}
		sec, err := recordsSection(b, &h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sec, h.BaseOffset, h.RecordCount, h.FirstTimestamp, h.LastTimestamp, h.Sparse())
	}
	f.Fuzz(func(t *testing.T, sec []byte, base int64, count uint32, first, last int64, sparse bool) {
		h := BatchHeader{Magic: Magic, Version: Version, BaseOffset: base, RecordCount: count, FirstTimestamp: first, LastTimestamp: last}
		if sparse {
			h.Flags |= FlagSparse
		}
		// RecordFields (hex views) walks the same bytes; it must never
		// panic, and agree with the decoder on well-formed sections.
		walked, fieldsErr := 0, error(nil)
		for p := 0; p < len(sec); walked++ {
			_, n, err := RecordFields(sec[p:])
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("RecordFields: error matching no sentinel: %v", err)
				}
				fieldsErr = err
				break
			}
			p += n
		}
		recs, err := DecodeRecords(sec, h, nil)
		if err == nil && (fieldsErr != nil || walked != len(recs)) {
			t.Fatalf("DecodeRecords found %d records, RecordFields %d (%v)", len(recs), walked, fieldsErr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error matching no sentinel: %v", err)
			}
			return
		}
		if len(recs) != int(count) {
			t.Fatalf("%d records decoded, header says %d", len(recs), count)
		}
		reencode(t, h, recs, CodecNone)
		reencode(t, h, recs, CodecZstd)
	})
}
