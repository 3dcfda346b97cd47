package meta

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addTopicSeeds adds every testdata/topic-*.json as a (key, value) pair.
func addTopicSeeds(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "topic-*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no topic seeds in testdata: %v", err)
	}
	for _, name := range files {
		v, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		v = bytes.TrimSpace(v)
		t, err := decodeTopic(topicNameOf(v), v)
		if err != nil {
			f.Fatalf("seed %s does not decode: %v", name, err)
		}
		f.Add([]byte(t.Name), v)
	}
	f.Add([]byte("x"), []byte(`{"name":"x","partitions":1,"config":null,"state":"active"}`))
	f.Add([]byte("x"), []byte(`{"name":"x","partitions":1e9,"config":{},"state":"active"}`))
	f.Add([]byte("x"), []byte(`[]`))
}

// topicNameOf extracts the name field of a seed so the key matches.
func topicNameOf(v []byte) []byte {
	const field = `"name":"`
	i := bytes.Index(v, []byte(field))
	if i < 0 {
		return nil
	}
	rest := v[i+len(field):]
	return rest[:bytes.IndexByte(rest, '"')]
}

// FuzzDecodeTopic: any bytes under any key decode to a valid topic or a
// CorruptError naming the key, never a panic; what decodes re-encodes to a
// record that decodes to the same bytes again.
func FuzzDecodeTopic(f *testing.F) {
	addTopicSeeds(f)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		tp, err := decodeTopic(key, value)
		if err != nil {
			ce, ok := err.(*CorruptError)
			if !ok || ce.Bucket != BucketTopics || ce.Key != string(key) {
				t.Fatalf("error %v does not name topics/%q", err, key)
			}
			return
		}
		if tp.Name != string(key) || ValidateTopicName(tp.Name) != nil || tp.Partitions < 1 || tp.Partitions > MaxPartitions {
			t.Fatalf("accepted invalid topic %+v under %q", tp, key)
		}
		enc, err := encodeTopic(tp)
		if err != nil {
			t.Fatalf("decoded topic does not encode: %v", err)
		}
		tp2, err := decodeTopic(key, enc)
		if err != nil {
			t.Fatalf("re-encoded topic does not decode: %v\n%s", err, enc)
		}
		enc2, _ := encodeTopic(tp2)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip changed the record:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzDecodeCursor: cursor keys and values decode only from their canonical
// form, so what decodes re-encodes to the same bytes.
func FuzzDecodeCursor(f *testing.F) {
	seeds, err := os.ReadFile(filepath.Join("testdata", "cursor-keys.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, k := range strings.Split(strings.TrimSpace(string(seeds)), "\n") {
		f.Add([]byte(k), encodeInt64(42))
	}
	f.Add([]byte("c/t/0"), []byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("c/t/0"), []byte{1, 2, 3})
	f.Add([]byte("c/t/0"), encodeCursorValue(7, "commit metadata"))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c, err := decodeCursor(key, value)
		if err != nil {
			ce, ok := err.(*CorruptError)
			if !ok || ce.Bucket != BucketCursors || ce.Key != string(key) {
				t.Fatalf("error %v does not name cursors/%q", err, key)
			}
			return
		}
		if c.Offset < 0 {
			t.Fatalf("negative offset accepted: %+v", c)
		}
		if k := cursorKey(c.Consumer, c.Topic, c.Partition); !bytes.Equal(k, key) {
			t.Fatalf("key %q decodes to %+v, which encodes as %q", key, c, k)
		}
		off, md, err := decodeCursorValue(value)
		if err != nil || off != c.Offset {
			t.Fatalf("value %x: the cursor decodes to offset %d, the value alone to %d, %v", value, c.Offset, off, err)
		}
		if v := encodeCursorValue(off, md); !bytes.Equal(v, value) {
			t.Fatalf("value %x decodes to %d, %q, which encodes as %x", value, off, md, v)
		}
	})
}

// FuzzDecodePartition: partition records must agree with their key.
func FuzzDecodePartition(f *testing.F) {
	f.Add([]byte("orders/0"), []byte(`{"topic":"orders","partition":0,"created_at":"2026-11-29T14:48:32Z"}`))
	f.Add([]byte("orders/12"), []byte(`{"topic":"orders","partition":12}`))
	f.Add([]byte("orders/012"), []byte(`{"topic":"orders","partition":12}`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		p, err := decodePartition(key, value)
		if err != nil {
			ce, ok := err.(*CorruptError)
			if !ok || ce.Bucket != BucketPartitions || ce.Key != string(key) {
				t.Fatalf("error %v does not name partitions/%q", err, key)
			}
			return
		}
		if k := partitionKey(p.Topic, p.Partition); !bytes.Equal(k, key) {
			t.Fatalf("key %q decodes to %+v, which encodes as %q", key, p, k)
		}
	})
}
