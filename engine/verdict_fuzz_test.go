package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/internal/layout"
)

// FuzzOneVerdict holds every consumer of segment bytes to one verdict on
// the same bytes: the file check pulse verify and pulse dump print
// (recovery.CheckSegmentFile), the frame browser (SegmentFrames), recovery
// at open (its report), and the read path (Read from offset 0). It names
// the one deliberate difference (engine/codec/doc.go): a batch whose CRC
// matches but whose records do not decode is kept by recovery, which
// checks CRCs, and skipped by reads, which decode, as a counted gap. The bytes
// are the only segment of a partition whose persisted HWM is 0 (nothing
// acknowledged, so recovery may truncate a torn tail and exposes the rest).
// An input costs two opens of a data dir (tens of ms), so fuzz it with a
// short minimization: go test ./engine -fuzz FuzzOneVerdict
// -fuzzminimizetime 2x (the default minimizes each new input for a minute).
func FuzzOneVerdict(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "recovery", "segments", "*.log"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Batches at offsets 0, 3, 6 of each codec; then the same with a copy
	// of the first batch after them (header and CRC fine, offsets not), and
	// with the copy between the second and the third.
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		var file []byte
		var batches [][]byte
		for i := int64(0); i < 3; i++ {
			b, err := codec.AppendBatch(nil, 3*i, verdictRecords(3*i, 3), codec.EncodeOptions{Codec: c})
			if err != nil {
				f.Fatal(err)
			}
			batches = append(batches, b)
			file = append(file, b...)
		}
		f.Add(file)
		f.Add(append(bytes.Clone(file), batches[0]...))
		mid := append(append(append(bytes.Clone(batches[0]), batches[1]...), batches[0]...), batches[2]...)
		f.Add(mid)
	}
	f.Add(malformedFile(f))
	f.Fuzz(checkOneVerdict)
}

// checkOneVerdict is FuzzOneVerdict's check of one segment file's bytes.
func checkOneVerdict(t *testing.T, data []byte) {
	// Past damage every position holding a plausible header costs a CRC
	// check of the batch it claims: a file of such headers costs
	// quadratic time, so inputs stay small.
	if len(data) > 64<<10 {
		return
	}
	dir, part := dirWithSegment(t, data)
	path := filepath.Join(part, layout.LogFile(0))
	if err := recovery.WriteHWM(part, 0); err != nil {
		t.Fatal(err)
	}

	// pulse verify / dump.
	var want []int64 // positions of the batches accepted
	var wantRecs []codec.Record
	var undecodable []int64 // positions of accepted batches whose records do not decode
	check, err := recovery.CheckSegmentFile(path, recovery.CheckOptions{Visit: func(fr recovery.Frame) error {
		if fr.Err == "" {
			want = append(want, fr.Position)
			b, err := codec.DecodeBatch(fr.Bytes)
			if err != nil {
				if !errors.Is(err, codec.ErrCorrupt) {
					return fmt.Errorf("batch at %d accepted, but it does not decode: %w", fr.Position, err)
				}
				undecodable = append(undecodable, fr.Position)
				return nil
			}
			for _, r := range b.Records {
				r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
				wantRecs = append(wantRecs, r)
			}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}

	e, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	// The frame browser. The engine is open, and recovery has cut a torn
	// tail: the browser sees the file as recovered, the bytes it kept.
	pg, err := e.SegmentFrames("t", 0, 0, 0, -1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, fr := range pg.Frames {
		if !fr.Damaged {
			got = append(got, fr.Pos)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("frame browser accepts batches at %v, pulse verify at %v", got, want)
	}
	var damaged []int64
	for _, fr := range pg.Frames {
		if fr.Damaged {
			damaged = append(damaged, fr.Pos)
		}
	}
	var corrupt []int64
	for _, c := range check.Corrupt {
		corrupt = append(corrupt, c.StartPos)
	}
	if fmt.Sprint(damaged) != fmt.Sprint(corrupt) {
		t.Fatalf("frame browser: damaged regions at %v; pulse verify: corrupt ranges at %v (torn %+v)", damaged, corrupt, check.Torn)
	}

	// Recovery at open.
	reps := e.RecoveryReports()
	if len(reps) != 1 {
		t.Fatalf("%d recovery reports", len(reps))
	}
	rep := reps[0]
	if fmt.Sprint(rep.Corrupt) != fmt.Sprint(check.Corrupt) {
		t.Fatalf("recovery reports corrupt ranges %+v, pulse verify %+v", rep.Corrupt, check.Corrupt)
	}
	switch {
	case check.Torn == nil && len(rep.Truncations) != 0:
		t.Fatalf("recovery truncated %+v, pulse verify saw no torn tail", rep.Truncations)
	case check.Torn != nil && (len(rep.Truncations) != 1 || rep.Truncations[0] != *check.Torn):
		t.Fatalf("recovery truncated %+v, pulse verify saw the torn tail %+v", rep.Truncations, *check.Torn)
	}

	// The read path.
	var recs []Record
	var skipped int64
	for from := int64(0); ; {
		res, err := e.Read("t", 0, from, 0, 0)
		if err != nil {
			t.Fatalf("read from %d: %v", from, err)
		}
		recs = append(recs, res.Records...)
		skipped += res.Skipped
		if res.Next >= res.HWM || (len(res.Records) == 0 && res.Skipped == 0) {
			if res.Next < res.HWM {
				t.Fatalf("read stuck at %d below the hwm %d", res.Next, res.HWM)
			}
			break
		}
		from = res.Next
	}
	if len(recs) != len(wantRecs) {
		t.Fatalf("read %d records, the accepted batches hold %d", len(recs), len(wantRecs))
	}
	for i := range recs {
		if recs[i].Offset != wantRecs[i].Offset || !bytes.Equal(recs[i].Value, wantRecs[i].Value) || !bytes.Equal(recs[i].Key, wantRecs[i].Key) {
			t.Fatalf("record %d: read offset %d %q, accepted batch holds offset %d %q", i, recs[i].Offset, recs[i].Value, wantRecs[i].Offset, wantRecs[i].Value)
		}
	}
	var lost int64
	for _, c := range check.Corrupt {
		lost += c.EndOffset - c.FirstOffset
	}
	switch {
	case len(undecodable) == 0 && skipped != lost:
		t.Fatalf("read skipped %d offsets, the corrupt ranges hold %d", skipped, lost)
	case len(undecodable) > 0 && skipped <= lost:
		t.Fatalf("read skipped %d offsets, the corrupt ranges hold %d, and batches at %v that do not decode were not counted", skipped, lost, undecodable)
	}
}

// malformedBatch is a batch of 3 records at base whose first record's
// length field overruns the records section, with its CRC computed again
// over the damaged bytes: the CRC matches, the records do not decode.
func malformedBatch(t testing.TB, base int64) []byte {
	b, err := codec.AppendBatch(nil, base, verdictRecords(base, 3), codec.EncodeOptions{Codec: codec.CodecNone})
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[codec.HeaderLen:], 0x00ffffff)
	binary.BigEndian.PutUint32(b[4:8], crc32.Checksum(b[8:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// malformedFile is batches at offsets 0 and 6 with a malformedBatch at 3
// between them.
func malformedFile(t testing.TB) []byte {
	var file []byte
	for _, base := range []int64{0, 3, 6} {
		if base == 3 {
			file = append(file, malformedBatch(t, base)...)
			continue
		}
		b, err := codec.AppendBatch(nil, base, verdictRecords(base, 3), codec.EncodeOptions{Codec: codec.CodecNone})
		if err != nil {
			t.Fatal(err)
		}
		file = append(file, b...)
	}
	return file
}

// The one deliberate difference between recovery and reads: a batch whose
// CRC matches but whose records do not decode is kept by recovery (nothing
// with a good CRC is cut) and skipped by reads as a counted gap, which makes
// the partition degraded.
func TestReadSkipsBatchWithGoodCRCAndMalformedRecords(t *testing.T) {
	data := malformedFile(t)
	if _, err := codec.VerifyBatch(malformedBatch(t, 3)); err != nil {
		t.Fatalf("the malformed batch's CRC does not match: %v", err)
	}
	if _, err := codec.DecodeBatch(malformedBatch(t, 3)); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("the malformed batch decodes: %v", err)
	}
	checkOneVerdict(t, data)

	dir, part := dirWithSegment(t, data)
	// All nine offsets were acknowledged.
	if err := recovery.WriteHWM(part, 9); err != nil {
		t.Fatal(err)
	}
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if rep := e.RecoveryReports()[0]; len(rep.Corrupt) != 0 || len(rep.Truncations) != 0 {
		t.Fatalf("recovery reports corrupt %+v, truncations %+v: it checks CRCs, which match", rep.Corrupt, rep.Truncations)
	}
	var offsets []int64
	var skipped int64
	for from := int64(0); from < 9; {
		res, err := e.Read("t", 0, from, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			offsets = append(offsets, r.Offset)
		}
		skipped += res.Skipped
		if res.Next <= from {
			t.Fatalf("read from %d stuck at %d", from, res.Next)
		}
		from = res.Next
	}
	if fmt.Sprint(offsets) != "[0 1 2 6 7 8]" || skipped != 3 {
		t.Fatalf("read offsets %v, skipped %d; want [0 1 2 6 7 8], 3 skipped", offsets, skipped)
	}
	info, err := e.Describe("t")
	if err != nil {
		t.Fatal(err)
	}
	if p := info.Partitions[0]; !p.Degraded || p.SkippedRecords != 3 || p.HWM != 9 {
		t.Fatalf("partition after the read: degraded %v, %d skipped, hwm %d; want degraded, 3, 9", p.Degraded, p.SkippedRecords, p.HWM)
	}
}

// dirWithSegment is a data dir whose topic "t" has one partition whose only
// segment holds data, with neither index nor snapshot: it returns the data
// dir and the partition's directory.
func dirWithSegment(t *testing.T, data []byte) (dir, part string) {
	t.Helper()
	dir = t.TempDir()
	e, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("t", DefaultTopicConfig()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	part = layout.PartitionDir(dir, "t", 0)
	if err := os.WriteFile(filepath.Join(part, layout.LogFile(0)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{layout.IndexFile(0), layout.SnapshotFile} {
		if err := os.Remove(filepath.Join(part, name)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return dir, part
}

func verdictRecords(base int64, n int) []codec.Record {
	recs := make([]codec.Record, n)
	for i := range recs {
		recs[i] = codec.Record{Timestamp: 1_700_000_000_000, Key: []byte(fmt.Sprintf("k%d", base+int64(i))), Value: []byte(fmt.Sprintf(`{"n":%d}`, base+int64(i)))}
	}
	return recs
}
