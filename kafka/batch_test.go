package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// message encodes one message v0 or v1 (offset, size, crc, magic,
// attributes, [timestamp], key, value).
func message(magic, attrs byte, key, value []byte) []byte {
	body := []byte{magic, attrs}
	if magic == 1 {
		body = binary.BigEndian.AppendUint64(body, 1234)
	}
	for _, f := range [][]byte{key, value} {
		if f == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
			continue
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(f)))
		body = append(body, f...)
	}
	m := binary.BigEndian.AppendUint64(nil, 0)
	m = binary.BigEndian.AppendUint32(m, uint32(4+len(body)))
	m = binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(body))
	return append(m, body...)
}

// TestMessageSets decodes plain and gzip-wrapped message sets v0/v1 and
// refuses every truncation and a bad CRC.
func TestMessageSets(t *testing.T) {
	first := message(0, 0, []byte("k"), []byte("v"))
	plain := append(bytes.Clone(first), message(1, 0, nil, []byte("w"))...)
	recs, err := decodeBatches(plain, 1<<20)
	if err != nil || len(recs) != 1 || len(recs[0].Records) != 2 || string(recs[0].Records[0].Key) != "k" || recs[0].Records[1].Key != nil || string(recs[0].Records[1].Value) != "w" {
		t.Fatalf("plain message set: %+v %v", recs, err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	wrapped := message(1, codecGzip, nil, z.Bytes())
	recs, err = decodeBatches(wrapped, 1<<20)
	if err != nil || len(recs[0].Records) != 2 || string(recs[0].Records[1].Value) != "w" {
		t.Fatalf("gzip message set: %+v %v", recs, err)
	}
	for n := 1; n < len(plain); n++ {
		if n == len(first) {
			continue // a whole message set of one message
		}
		if _, err := decodeBatches(plain[:n], 1<<20); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("message set cut at %d of %d bytes: %v", n, len(plain), err)
		}
	}
	bad := bytes.Clone(plain)
	bad[len(bad)-1] ^= 1
	if _, err := decodeBatches(bad, 1<<20); !errors.Is(err, ErrBadCRC) {
		t.Fatalf("bad CRC: %v", err)
	}
	// A gzip bomb past the limit is refused, not decompressed whole.
	var bomb bytes.Buffer
	bw := gzip.NewWriter(&bomb)
	bw.Write(make([]byte, 4<<20))
	bw.Close()
	if _, err := decodeBatches(message(1, codecGzip, nil, bomb.Bytes()), 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("gzip of 4 MiB with a 1 MiB limit: %v", err)
	}
}

// TestBatchPrefixes: every truncated prefix of a batch v2 is refused with
// ErrCorruptBatch, and every flipped bit with an error (the CRC catches
// what the framing does not).
func TestBatchPrefixes(t *testing.T) {
	b := producerBatch(seedRecords(), 9, 0, 0)
	if _, err := decodeBatches(b, 1<<20); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(b); n++ {
		if _, err := decodeBatches(b[:n], 1<<20); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("batch cut at %d of %d bytes: %v", n, len(b), err)
		}
	}
	for i := offMagic; i < len(b); i++ { // what follows baseOffset and batchLength
		for bit := range 8 {
			bad := bytes.Clone(b)
			bad[i] ^= 1 << bit
			if _, err := decodeBatches(bad, 1<<20); err == nil {
				t.Fatalf("bit %d of byte %d flipped: accepted", bit, i)
			}
		}
	}
}
