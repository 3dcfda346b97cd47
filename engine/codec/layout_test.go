package codec

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestHeaderFields(t *testing.T) {
	b := mustAppend(t, 77, []Record{{Value: []byte("v"), Timestamp: 5}}, EncodeOptions{Codec: CodecNone})
	h, _ := ParseHeader(b)
	end := 0
	values := map[string]uint64{}
	for _, f := range HeaderFields() {
		if f.Offset != end {
			t.Fatalf("%s at %d, previous field ended at %d", f.Name, f.Offset, end)
		}
		end += f.Len
		var v uint64
		for _, c := range b[f.Offset : f.Offset+f.Len] {
			v = v<<8 | uint64(c)
		}
		values[f.Name] = v
	}
	if end != HeaderLen {
		t.Fatalf("fields cover %d bytes, want %d", end, HeaderLen)
	}
	if values["baseOffset"] != 77 || values["recordCount"] != 1 || values["crc32c"] != uint64(h.CRC) || values["batchLen"] != uint64(h.BatchLen) || values["lastTimestamp"] != 5 {
		t.Fatalf("fields read %v", values)
	}
}

func TestRecordFields(t *testing.T) {
	recs := []Record{
		{Key: []byte("key"), Value: []byte("value"), Timestamp: 1, Headers: []Header{{Key: "h", Value: []byte("hv")}, {Key: "n", Value: nil}}},
		{Key: nil, Value: nil, Timestamp: 1},
	}
	b := mustAppend(t, 0, withOffsets(recs, 0, 1), EncodeOptions{})
	sec := b[HeaderLen:]
	fields, n, err := RecordFields(sec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"length", "attributes", "timestampDelta", "offsetDelta", "keyLength", "key", "valueLength", "value", "headerCount",
		"header[0].keyLength", "header[0].key", "header[0].valueLength", "header[0].value", "header[1].keyLength", "header[1].key", "header[1].valueLength"}
	end := 0
	for i, f := range fields {
		if i >= len(want) || f.Name != want[i] || f.Offset != end {
			t.Fatalf("field %d: %+v (previous ended at %d), want %q", i, f, end, want[i])
		}
		end += f.Len
	}
	if len(fields) != len(want) || end != n {
		t.Fatalf("%d fields covering %d bytes, record is %d", len(fields), end, n)
	}
	if f := fields[5]; string(sec[f.Offset:f.Offset+f.Len]) != "key" {
		t.Fatalf("key field holds %q", sec[f.Offset:f.Offset+f.Len])
	}
	second, n2, err := RecordFields(sec[n:])
	if err != nil || n+n2 != len(sec) || len(second) != 7 {
		t.Fatalf("second record: %d fields, %d bytes, %v", len(second), n2, err)
	}
	bad := append([]byte(nil), sec[:n]...)
	binary.BigEndian.PutUint32(bad[fields[4].Offset:], 1000)
	if _, _, err := RecordFields(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("overrunning key: %v", err)
	}
	if _, _, err := RecordFields(sec[:3]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("3 bytes: %v", err)
	}
}

// TestEncodedSize: the sizes of a batch's records add up to its records
// section as stored (codec none).
func TestEncodedSize(t *testing.T) {
	recs := withOffsets([]Record{
		{Key: []byte("key"), Value: []byte("value"), Headers: []Header{{Key: "h", Value: []byte("hv")}, {Key: "n"}}},
		{},
		{Key: []byte{}, Value: []byte{}},
	}, 0, 1)
	b := mustAppend(t, 0, recs, EncodeOptions{})
	n := 0
	for i := range recs {
		n += EncodedSize(&recs[i])
	}
	if n != len(b)-HeaderLen {
		t.Fatalf("EncodedSize adds up to %d, the records section is %d bytes", n, len(b)-HeaderLen)
	}
}

// TestViewBatch annotates a good batch, then the same with damage: every
// field in place with its value, the bad ones named, the records listed.
func TestViewBatch(t *testing.T) {
	recs := withOffsets([]Record{{Key: []byte("k"), Value: []byte("v1")}, {Key: nil, Value: nil}}, 0, 9)
	b := mustAppend(t, 40, recs, EncodeOptions{Codec: CodecZstd})
	fields, torn := ViewHeader(b, int64(len(b)))
	if torn != "" || len(fields) != len(HeaderFields()) {
		t.Fatalf("torn %q, %d fields", torn, len(fields))
	}
	for _, f := range fields {
		if !f.Present || f.Bad != "" {
			t.Errorf("field %+v", f)
		}
		switch f.Name {
		case "baseOffset":
			if f.Value != 40 {
				t.Errorf("baseOffset %d", f.Value)
			}
		case "flags":
			if f.Desc != "0x0001 codec zstd" {
				t.Errorf("flags %q", f.Desc)
			}
		}
	}
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] ^= 1
	bad[offMagic] = 7
	problems := HeaderProblems(bad, int64(len(bad)))
	if problems["magic"] == "" || len(problems) != 1 {
		t.Errorf("bad magic: %v", problems)
	}
	bad[offMagic] = Magic
	if p := HeaderProblems(bad, int64(len(bad))); p["crc32c"] == "" || len(p) != 1 {
		t.Errorf("bad CRC: %v", p)
	}
	if p := HeaderProblems(b, int64(len(b))-1); p["batchLen"] == "" {
		t.Errorf("batch overrunning the file: %v", p)
	}
	if fields, torn := ViewHeader(b[:20], -1); torn == "" || fields[6].Present || !fields[5].Present {
		t.Errorf("20 bytes: torn %q, %+v", torn, fields)
	}

	sec, err := DecompressPrefix(b[HeaderLen:], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	v := ViewRecords(sec, 10, 1<<20)
	if len(v.Records) != 2 || v.BadErr != "" || v.More != 0 {
		t.Fatalf("records view %+v", v)
	}
	if r := v.Records[0]; string(r.Key) != "k" || string(r.Value) != "v1" || r.OffsetDelta != 0 || r.KeyNull || r.ValueNull {
		t.Errorf("record 0: %+v", r)
	}
	if r := v.Records[1]; !r.KeyNull || !r.ValueNull || r.OffsetDelta != 1 || r.Start != v.Records[0].Len {
		t.Errorf("record 1: %+v", r)
	}
	if v := ViewRecords(sec, 1, 1<<20); len(v.Records) != 1 || v.More != len(sec)-v.Records[0].Len {
		t.Errorf("one record at most: %+v", v)
	}
	if v := ViewRecords(sec[:len(sec)-1], 10, 1<<20); len(v.Records) != 1 || v.BadIndex != 1 || v.BadAt != v.Records[0].Len || v.BadErr == "" {
		t.Errorf("cut second record: %+v", v)
	}
	if out, err := DecompressPrefix(b[HeaderLen:], 3); err != nil || len(out) != 3 {
		t.Errorf("3-byte prefix: %d bytes, %v", len(out), err)
	}
	if _, err := DecompressPrefix([]byte("not zstd at all"), 100); err == nil {
		t.Errorf("garbage decompressed")
	}
}

// FuzzViewRecords: any bytes annotate without a panic; the records tile
// the section from its start, and what follows is either counted as not
// shown or named as the record that does not parse.
func FuzzViewRecords(f *testing.F) {
	for _, b := range goldenFiles(f) {
		if len(b) > HeaderLen {
			f.Add(b[HeaderLen:])
		}
	}
	f.Fuzz(func(t *testing.T, sec []byte) {
		v := ViewRecords(sec, 16, 4096)
		q := 0
		for _, r := range v.Records {
			if r.Start != q || r.Len < minRecordLen {
				t.Fatalf("record at %d (%d bytes), want one at %d", r.Start, r.Len, q)
			}
			q += r.Len
		}
		switch {
		case v.BadErr != "":
			if v.BadAt != q || v.More != 0 {
				t.Fatalf("bad record at %d, records end at %d, more %d", v.BadAt, q, v.More)
			}
		case q+v.More != len(sec):
			t.Fatalf("records end at %d, %d more, section is %d bytes", q, v.More, len(sec))
		}
		fields, _ := ViewHeader(sec, int64(len(sec)))
		if len(fields) != len(HeaderFields()) {
			t.Fatalf("%d header fields", len(fields))
		}
	})
}
