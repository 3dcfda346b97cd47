package segment

import (
	"encoding/binary"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// benchBatch is a ~size-byte codec-none batch of 1 KiB records at base.
func benchBatch(b *testing.B, base int64, size int) ([]byte, codec.BatchHeader) {
	n := max(size/1050, 1)
	return batch(b, base, n, min(1024, size), codec.CodecNone)
}

// BenchmarkAppend measures appends of 1 MiB batches without fsync.
func BenchmarkAppend(b *testing.B) {
	s, err := Create(b.TempDir(), 0, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data, h := benchBatch(b, 0, 1<<20)
	b.SetBytes(int64(len(data)))
	next := int64(0)
	for b.Loop() {
		setBase(data, &h, next)
		if _, err := s.Append(data, h); err != nil {
			b.Fatal(err)
		}
		next += int64(h.RecordCount)
		if s.Size() > 256<<20 {
			b.StopTimer()
			s.Truncate(0)
			next = 0
			b.StartTimer()
		}
	}
}

// BenchmarkAppendSync measures a 4 KiB append followed by Sync: the
// segment's commit rate.
func BenchmarkAppendSync(b *testing.B) {
	s, err := Create(b.TempDir(), 0, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data, h := benchBatch(b, 0, 4096)
	b.SetBytes(int64(len(data)))
	next := int64(0)
	for b.Loop() {
		setBase(data, &h, next)
		if _, err := s.Append(data, h); err != nil {
			b.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			b.Fatal(err)
		}
		next += int64(h.RecordCount)
	}
}

// BenchmarkReadDecode measures sequential ReadBatch + DecodeBatchInto over
// a 64 MiB segment of 1 MiB batches (page cache).
func BenchmarkReadDecode(b *testing.B) {
	s, err := Create(b.TempDir(), 0, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	next := int64(0)
	for s.Size() < 64<<20 {
		data, h := benchBatch(b, next, 1<<20)
		if _, err := s.Append(data, h); err != nil {
			b.Fatal(err)
		}
		next += int64(h.RecordCount)
	}
	var buf []byte
	var recs []codec.Record
	b.SetBytes(s.Size())
	for b.Loop() {
		for pos := int64(0); pos < s.Size(); {
			raw, h, err := s.ReadBatch(pos, buf)
			if err != nil {
				b.Fatal(err)
			}
			batch, err := codec.DecodeBatchInto(raw, recs)
			if err != nil {
				b.Fatal(err)
			}
			buf, recs = raw, batch.Records
			pos += h.Size()
		}
	}
}

// setBase rewrites the base offset of a batch in place (its CRC becomes
// wrong, which appends do not check).
func setBase(data []byte, h *codec.BatchHeader, base int64) {
	binary.BigEndian.PutUint64(data[8:], uint64(base))
	h.BaseOffset = base
}
