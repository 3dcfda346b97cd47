package plog

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// ackBook is every ack a test was ever given: offset -> record.
type ackBook map[int64]codec.Record

// checkAgainstAcks reads all of l and compares with every ack ever given:
// each record read must be the acked record at its offset, and every acked
// offset not read must lie in a range the log counted as skipped (a
// reported corrupt range or gap). It returns the records read.
func checkAgainstAcks(t *testing.T, l *Log, acks ackBook, where string) map[int64]codec.Record {
	t.Helper()
	got := map[int64]codec.Record{}
	var skipped int64
	from := int64(0)
	for {
		r, err := l.Read(from, 100, 64<<10)
		if err != nil {
			t.Fatalf("%s: read from %d: %v", where, from, err)
		}
		skipped += r.Skipped
		if len(r.Records) == 0 {
			break
		}
		for _, rec := range r.Records {
			if _, dup := got[rec.Offset]; dup {
				t.Fatalf("%s: offset %d read twice", where, rec.Offset)
			}
			got[rec.Offset] = rec
		}
		from = r.Next
	}
	rep := l.Report()
	lost := func(o int64) bool {
		for _, c := range l.CorruptRanges() {
			if o >= c.FirstOffset && o < c.EndOffset {
				return true
			}
		}
		for _, g := range l.Gaps() {
			if o >= g.FirstOffset && o < g.EndOffset {
				return true
			}
		}
		return false
	}
	var missing int64
	for _, o := range slices.Sorted(maps.Keys(acks)) {
		want := acks[o]
		rec, ok := got[o]
		if !ok {
			if !lost(o) {
				t.Fatalf("%s: acked offset %d silently lost\n%s", where, o, linesOf(rep))
			}
			missing++
			continue
		}
		if err := sameRecord(rec, want); err != nil {
			t.Fatalf("%s: offset %d read back as another record: %v", where, o, err)
		}
	}
	for o := range got {
		if _, ok := acks[o]; !ok {
			t.Fatalf("%s: offset %d read but never acked", where, o)
		}
	}
	if skipped < missing {
		t.Fatalf("%s: %d acked records not delivered, reads counted %d skipped\n%s", where, missing, skipped, linesOf(rep))
	}
	return got
}

func linesOf(rep recovery.Report) string {
	var b bytes.Buffer
	for _, s := range rep.Lines() {
		b.WriteString(s + "\n")
	}
	return b.String()
}

func copyDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readDirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestAckedTailBitFlipsNeverTruncate flips one bit in every byte of the last
// two batches (headers and bodies) of the active segment of a cleanly closed
// log, whose persisted HWM covers them, and reopens it twice: recovery must
// never truncate (everything was acknowledged), the log end must stay at or
// past the persisted HWM, every acked record must read back as itself or sit
// in a counted range, and a record appended after the damage must get a new
// offset and survive the next restart.
func TestAckedTailBitFlipsNeverTruncate(t *testing.T) {
	for _, c := range []codec.Codec{codec.CodecNone, codec.CodecZstd} {
		t.Run(c.String(), func(t *testing.T) {
			o := testOptions()
			o.Codec = c
			src := t.TempDir()
			l := openLog(t, src, o)
			acks := ackBook{}
			for i := range 6 {
				recs := []codec.Record{
					{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("value-%d-a", i))},
					{Value: []byte(fmt.Sprintf("value-%d-b", i))},
				}
				base := mustAppend(t, l, recs...)
				for j, r := range recs {
					acks[base+int64(j)] = r
				}
			}
			end := l.LEO()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			pristine := readDirFiles(t, src)
			if h, err := recovery.ReadHWM(src); err != nil || h != end {
				t.Fatalf("persisted hwm %d (%v), want %d", h, err, end)
			}
			name := segment.Name(0) + ".log"
			data := pristine[name]
			var starts []int64
			for pos := int64(0); pos < int64(len(data)); {
				h, err := codec.ParseHeader(data[pos:])
				if err != nil {
					t.Fatal(err)
				}
				starts = append(starts, pos)
				pos += h.Size()
			}
			from := starts[len(starts)-2]
			// One bit per byte (a different one each byte); every bit of
			// every byte with PULSE_LONG=1.
			type flipAt struct {
				p    int64
				mask byte
			}
			var flips []flipAt
			for p := from; p < int64(len(data)); p++ {
				if os.Getenv("PULSE_LONG") != "" {
					for b := range 8 {
						flips = append(flips, flipAt{p, 1 << b})
					}
				} else {
					flips = append(flips, flipAt{p, 1 << (p % 8)})
				}
			}
			for _, fl := range flips {
				p, mask := fl.p, fl.mask
				files := maps.Clone(pristine)
				damaged := bytes.Clone(data)
				damaged[p] ^= mask
				files[name] = damaged
				dir := copyDir(t, files)
				where := fmt.Sprintf("flip %s@%d^%02x", name, p, mask)

				l := openLog(t, dir, o)
				rep := l.Report()
				if len(rep.Truncations) > 0 || l.LEO() < end {
					l.Close()
					t.Fatalf("%s: truncated acked data (leo %d, persisted hwm %d)\n%s", where, l.LEO(), end, linesOf(rep))
				}
				checkAgainstAcks(t, l, acks, where+" open 1")
				rec := codec.Record{Value: []byte("after the damage")}
				off := mustAppend(t, l, rec)
				if off < end {
					l.Close()
					t.Fatalf("%s: new record got offset %d, already acked below %d", where, off, end)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				all := maps.Clone(acks)
				all[off] = rec
				l = openLog(t, dir, o)
				if rep := l.Report(); len(rep.Truncations) > 0 {
					l.Close()
					t.Fatalf("%s: second open truncated\n%s", where, linesOf(rep))
				}
				got := checkAgainstAcks(t, l, all, where+" open 2")
				if _, ok := got[off]; !ok {
					l.Close()
					t.Fatalf("%s: the record appended after the damage (offset %d) is gone", where, off)
				}
				l.Close()
				os.RemoveAll(dir)
			}
		})
	}
}
