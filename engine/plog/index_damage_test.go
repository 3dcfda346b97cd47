package plog

import (
	"encoding/binary"
	"fmt"
	"maps"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// TestReadThroughDamagedIndexEntry damages one index entry between the first
// and the last of a sealed segment of a cleanly closed log. The snapshot fast
// path checks only those two entries against the data, so the open is clean;
// a read that starts at the damaged entry must notice it and still return
// every record from every offset, skipping nothing.
func TestReadThroughDamagedIndexEntry(t *testing.T) {
	o := testOptions()
	o.Codec = codec.CodecNone
	src := t.TempDir()
	l := openLog(t, src, o)
	acks := ackBook{}
	for i := range 600 {
		r := codec.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("value %d %0200d", i, i))}
		acks[mustAppend(t, l, r)] = r
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	pristine := readDirFiles(t, src)
	idx := segment.Name(0) + ".index"
	entries, err := segment.DecodeIndex(pristine[idx])
	if err != nil || len(entries) < 5 {
		t.Fatalf("index of segment 0: %d entries (%v), want at least 5", len(entries), err)
	}
	if bases, err := segment.List(src); err != nil || len(bases) < 2 {
		t.Fatalf("fixture: segments %v (%v), want segment 0 sealed", bases, err)
	}
	k := len(entries) / 2
	// The batch after the one at entry k, still before entry k+1.
	data := pristine[segment.Name(0)+".log"]
	h, err := codec.ParseHeader(data[entries[k].RelPosition:])
	if err != nil {
		t.Fatal(err)
	}
	second := entries[k].RelPosition + uint32(h.Size())
	if second >= entries[k+1].RelPosition {
		t.Fatalf("fixture: one batch between entries %d and %d", k, k+1)
	}
	put := func(b []byte, i int, e segment.IndexEntry) {
		binary.BigEndian.PutUint32(b[i*segment.IndexEntryLen:], e.RelOffset)
		binary.BigEndian.PutUint32(b[i*segment.IndexEntryLen+4:], e.RelPosition)
	}
	cases := []struct {
		name string
		e    segment.IndexEntry
	}{
		// Reads of the offsets from here would start at the next entry's
		// batch and skip the ones between.
		{"offset lowered", segment.IndexEntry{RelOffset: entries[k-1].RelOffset + 1, RelPosition: entries[k].RelPosition}},
		{"position of a later batch", segment.IndexEntry{RelOffset: entries[k].RelOffset, RelPosition: second}},
		{"position inside a batch", segment.IndexEntry{RelOffset: entries[k].RelOffset, RelPosition: entries[k].RelPosition + 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := maps.Clone(pristine)
			b := append([]byte(nil), pristine[idx]...)
			put(b, k, c.e)
			files[idx] = b
			dir := copyDir(t, files)
			// Every offset around the damaged entry as a starting point, each
			// on a freshly opened log that has cached no position yet.
			for from := int64(entries[k-1].RelOffset); from <= int64(entries[k+1].RelOffset); from++ {
				l := openLog(t, dir, o)
				rep := l.Report()
				if rep.Path != recovery.PathSnapshot || rep.NeedsWork() {
					l.Close()
					t.Fatalf("open was not the clean snapshot path:\n%s", linesOf(rep))
				}
				r, err := l.Read(from, 3, 1<<20)
				if err == nil && (r.Skipped != 0 || len(r.Records) == 0 || r.Records[0].Offset != from) {
					first := int64(-1)
					if len(r.Records) > 0 {
						first = r.Records[0].Offset
					}
					err = fmt.Errorf("%d records from offset %d, %d skipped", len(r.Records), first, r.Skipped)
				}
				if err == nil {
					err = sameRecord(r.Records[0], acks[from])
				}
				if cerr := l.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatalf("read from %d: %v", from, err)
				}
			}
			l := openLog(t, dir, o)
			defer l.Close()
			checkAgainstAcks(t, l, acks, c.name)
		})
	}
}
