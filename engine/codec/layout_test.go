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
