package plog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// TestDamageCasesKeepEveryPromise damages a closed log the ways real disks
// and real mistakes do, and reopens it twice: no acked record is lost
// silently (each reads back as itself or is counted as skipped in a
// reported range), no offset is handed out twice, the report names the
// damage, describe would say degraded, and files Pulse did not write are
// left byte for byte as they were.
func TestDamageCasesKeepEveryPromise(t *testing.T) {
	type built struct {
		dir   string
		segs  []SegmentInfo
		end   int64
		acks  ackBook
		stray string // a file the damage placed, which must stay as it is
		// fillTo, when set, is the offset the first reopen appends up to
		// (past the stray's name) before the usual record.
		fillTo int64
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, b *built)
		// names is a substring the report must hold.
		names string
	}{
		{"last batch record count flipped", func(t *testing.T, b *built) {
			p := b.segs[len(b.segs)-1].Path
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var last int64
			for pos := int64(0); pos < int64(len(data)); {
				h, err := codec.ParseHeader(data[pos:])
				if err != nil {
					t.Fatal(err)
				}
				last = pos
				pos += h.Size()
			}
			data[last+36+3] ^= 0x01
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "CORRUPT"},
		{"active segment deleted", func(t *testing.T, b *built) {
			a := b.segs[len(b.segs)-1]
			removeSegment(t, a.Path)
		}, "MISSING"},
		{"first segment deleted", func(t *testing.T, b *built) {
			removeSegment(t, b.segs[0].Path)
		}, "MISSING"},
		{"sealed segment deleted from the middle", func(t *testing.T, b *built) {
			removeSegment(t, b.segs[1].Path)
		}, "MISSING"},
		{"sealed segment renamed", func(t *testing.T, b *built) {
			s := b.segs[1]
			to := filepath.Join(b.dir, segment.Name(s.Base+7)+".log")
			if err := os.Rename(s.Path, to); err != nil {
				t.Fatal(err)
			}
			b.stray = to
		}, "STRAY"},
		{"stray copy of a valid segment after the active one", func(t *testing.T, b *built) {
			data, err := os.ReadFile(b.segs[0].Path)
			if err != nil {
				t.Fatal(err)
			}
			b.stray = filepath.Join(b.dir, segment.Name(b.end+1000)+".log")
			if err := os.WriteFile(b.stray, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "STRAY"},
		{"stray file named for the next roll", func(t *testing.T, b *built) {
			// 66 records of this size fill a segment: the next roll is at
			// the next multiple of 66, where a later round's appends land.
			next := (b.end/66 + 1) * 66
			b.stray = filepath.Join(b.dir, segment.Name(next)+".log")
			if err := os.WriteFile(b.stray, []byte("not pulse"), 0o644); err != nil {
				t.Fatal(err)
			}
			b.fillTo = next + 10
		}, "STRAY"},
		{"stray empty segment after the active one", func(t *testing.T, b *built) {
			b.stray = filepath.Join(b.dir, segment.Name(b.end+2000)+".log")
			if err := os.WriteFile(b.stray, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "STRAY"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions()
			o.Codec = codec.CodecNone
			b := &built{dir: t.TempDir(), acks: ackBook{}}
			l := openLog(t, b.dir, o)
			for i := range 300 {
				r := codec.Record{Key: []byte(fmt.Sprint(i)), Value: bytes.Repeat([]byte{byte(i)}, 900)}
				b.acks[mustAppend(t, l, r)] = r
			}
			b.end = l.LEO()
			segs, err := l.Segments()
			if err != nil {
				t.Fatal(err)
			}
			b.segs = segs
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if len(segs) < 4 {
				t.Fatalf("want at least 4 segments, have %d", len(segs))
			}
			c.damage(t, b)
			var strayBytes []byte
			if b.stray != "" {
				strayBytes, _ = os.ReadFile(b.stray)
			}
			for round := range 2 {
				where := fmt.Sprintf("open %d", round+1)
				l := openLog(t, b.dir, o)
				rep := l.Report()
				text := linesOf(rep)
				// Later opens report a missing segment as the lost range
				// the manifest now records.
				named := strings.Contains(text, c.names) || (round > 0 && c.names == "MISSING" && strings.Contains(text, "LOST"))
				if !l.Degraded() || !named {
					l.Close()
					t.Fatalf("%s: degraded %v, report does not name the damage (%s):\n%s", where, l.Degraded(), c.names, text)
				}
				if len(rep.Truncations) > 0 || l.LEO() < b.end {
					l.Close()
					t.Fatalf("%s: truncated acked data or moved the end back (leo %d < %d):\n%s", where, l.LEO(), b.end, text)
				}
				checkAgainstAcks(t, l, b.acks, where)
				for round == 0 && l.LEO() < b.fillTo {
					r := codec.Record{Key: []byte("fill"), Value: bytes.Repeat([]byte{'f'}, 900)}
					b.acks[mustAppend(t, l, r)] = r
				}
				r := codec.Record{Value: []byte(fmt.Sprintf("after round %d", round))}
				off := mustAppend(t, l, r)
				if _, used := b.acks[off]; used || off < b.end {
					l.Close()
					t.Fatalf("%s: offset %d handed out again", where, off)
				}
				b.acks[off] = r
				b.end = l.LEO()
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if b.stray != "" {
					now, err := os.ReadFile(b.stray)
					if err != nil || !bytes.Equal(now, strayBytes) {
						t.Fatalf("%s: the stray file %s was changed or removed (%v)", where, b.stray, err)
					}
				}
			}
		})
	}
}

func removeSegment(t *testing.T, logPath string) {
	t.Helper()
	for _, p := range []string{logPath, logPath[:len(logPath)-len(".log")] + ".index"} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}
