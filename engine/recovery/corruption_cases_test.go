package recovery

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// indexed reports whether the fixture's index has an entry at batch i of s.
func indexed(s *fixSeg, i int) bool {
	idx := indexFor(s)
	for j := 0; j+8 <= len(idx); j += 8 {
		if int64(binary.BigEndian.Uint32(idx[j+4:])) == s.starts[i] {
			return true
		}
	}
	return false
}

// pick returns the first batch index >= from of s that is not indexed and
// whose codec is c.
func pick(t *testing.T, s *fixSeg, from int, c codec.Codec) int {
	t.Helper()
	for i := from; i < len(s.starts)-1; i++ {
		h, _ := codec.ParseHeader(s.data[s.starts[i]:])
		if !indexed(s, i) && h.Codec() == c {
			return i
		}
	}
	t.Fatalf("no unindexed %v batch in segment %d from %d", c, s.base, from)
	return 0
}

func TestCorruptionSuite(t *testing.T) {
	f := defaultFixture(t)
	s0, s1, s2 := f.segs[0], f.segs[1], f.segs[2]
	kNone := pick(t, s2, 2, codec.CodecNone)
	kZstd := pick(t, s2, 1, codec.CodecZstd)
	k0 := pick(t, s0, 3, codec.CodecZstd)
	k1 := pick(t, s1, 5, codec.CodecNone)
	last := len(s2.starts) - 1
	full := int64(len(s2.data))

	rng := func(s *fixSeg, i int) [2]int64 { return [2]int64{s.bases[i], s.ends[i]} }
	cr := func(s *fixSeg, i int) CorruptRange {
		return CorruptRange{Segment: s.name() + ".log", StartPos: s.starts[i], EndPos: s.starts[i] + int64(batchSize(s, i)),
			FirstOffset: s.bases[i], EndOffset: s.ends[i]}
	}
	flip := func(name string, pos int64, mask byte) func(map[string][]byte) {
		return func(m map[string][]byte) { m[name][pos] ^= mask }
	}
	clean := expect{path: PathFullScan, leo: 250, hwm: 250, persisted: 250, note: "no snapshot"}
	with := func(e expect, mod func(*expect)) expect { mod(&e); return e }

	cases := []struct {
		name     string
		snapshot bool
		opts     Options
		damage   func(m map[string][]byte)
		e        expect
		readErrs int // batches whose damage only a reader can find
	}{
		{name: "clean with snapshot", snapshot: true,
			e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250}},
		{name: "clean, snapshot missing", e: clean},

		// Mid-file damage in the active segment: reported, never truncated.
		{name: "header bit flip (base offset)", damage: flip(s2.name()+".log", s2.starts[kNone]+10, 0x04),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s2, kNone)}; e.lost = [][2]int64{rng(s2, kNone)} })},
		{name: "header bit flip (batch length)", damage: flip(s2.name()+".log", s2.starts[kNone]+16, 0x40),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s2, kNone)}; e.lost = [][2]int64{rng(s2, kNone)} })},
		{name: "header bit flip (magic)", damage: flip(s2.name()+".log", s2.starts[kZstd], 0x80),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s2, kZstd)}; e.lost = [][2]int64{rng(s2, kZstd)} })},
		{name: "crc bit flip", damage: flip(s2.name()+".log", s2.starts[kZstd]+6, 0x01),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s2, kZstd)}; e.lost = [][2]int64{rng(s2, kZstd)} })},
		{name: "record body bit flip, codec none", damage: flip(s2.name()+".log", s2.starts[kNone]+codec.HeaderLen+30, 0x02),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s2, kNone)}; e.lost = [][2]int64{rng(s2, kNone)} })},
		{name: "record body bit flip, codec zstd", damage: flip(s2.name()+".log", s2.starts[kZstd]+codec.HeaderLen+12, 0x10),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s2, kZstd)}; e.lost = [][2]int64{rng(s2, kZstd)} })},
		{name: "two damaged batches and a torn tail",
			damage: func(m map[string][]byte) {
				m[s2.name()+".log"][s2.starts[kNone]+codec.HeaderLen+1] ^= 1
				m[s2.name()+".log"][s2.starts[kZstd]+20] ^= 1
				m[s2.name()+".log"] = append(m[s2.name()+".log"], s2.data[:30]...)
			},
			e: with(clean, func(e *expect) {
				a, b := min(kNone, kZstd), max(kNone, kZstd)
				e.corrupt = []CorruptRange{cr(s2, a), cr(s2, b)}
				if b == a+1 { // resync finds the first valid batch: one range
					e.corrupt = []CorruptRange{cr(s2, a)}
					e.corrupt[0].EndPos, e.corrupt[0].EndOffset = s2.starts[b+1], s2.ends[b]
				}
				e.lost = [][2]int64{rng(s2, a), rng(s2, b)}
				e.truncated = []Truncation{{Segment: s2.name() + ".log", Position: full, Bytes: 30}}
			})},

		// The last batch of the active segment, below the persisted HWM:
		// acknowledged, so corruption (kept, skipped, counted), never a torn
		// tail; above it, a torn tail, truncated.
		{name: "bit flip in the last batch", damage: flip(s2.name()+".log", s2.starts[last]+codec.HeaderLen+2, 0x08),
			e: with(clean, func(e *expect) {
				e.corrupt = []CorruptRange{cr(s2, last)}
				e.lost = [][2]int64{rng(s2, last)}
			})},
		{name: "bit flip in the last batch (record count)", damage: flip(s2.name()+".log", s2.starts[last]+36+3, 0x01),
			e: with(clean, func(e *expect) {
				e.corrupt = []CorruptRange{cr(s2, last)}
				e.lost = [][2]int64{rng(s2, last)}
			})},
		{name: "bit flip in the last batch, above the persisted hwm", damage: func(m map[string][]byte) {
			flip(s2.name()+".log", s2.starts[last]+codec.HeaderLen+2, 0x08)(m)
			m[HWMFile], _ = EncodeHWM(245)
		}, e: with(clean, func(e *expect) {
			e.leo, e.hwm, e.persisted = 245, 245, 245
			e.truncated = []Truncation{{Segment: s2.name() + ".log", Position: s2.starts[last], Bytes: full - s2.starts[last]}}
			e.lost = [][2]int64{rng(s2, last)}
		})},
		{name: "partial header appended", damage: func(m map[string][]byte) {
			m[s2.name()+".log"] = append(m[s2.name()+".log"], codec.Magic, codec.Version, 0, 1)
		}, e: with(clean, func(e *expect) { e.truncated = []Truncation{{Segment: s2.name() + ".log", Position: full, Bytes: 4}} })},
		{name: "partial batch appended, snapshot", snapshot: true, damage: func(m map[string][]byte) {
			b := appendBatch(t, nil, 250, 3, codec.CodecZstd)
			m[s2.name()+".log"] = append(m[s2.name()+".log"], b[:len(b)-1]...)
		}, e: expect{path: PathDelta, leo: 250, hwm: 250, persisted: 250,
			truncated: []Truncation{{Segment: s2.name() + ".log", Position: full, Bytes: int64(len(appendBatch(t, nil, 250, 3, codec.CodecZstd))) - 1}}}},

		// Sealed segments: corruption is never truncated, the end comes from
		// the next segment's name.
		{name: "sealed segment body bit flip", damage: flip(s0.name()+".log", s0.starts[k0]+codec.HeaderLen+8, 0x01),
			e: with(clean, func(e *expect) { e.corrupt = []CorruptRange{cr(s0, k0)}; e.lost = [][2]int64{rng(s0, k0)} })},
		{name: "sealed segment, last batch damaged", damage: flip(s1.name()+".log", int64(len(s1.data))-3, 0x01),
			e: with(clean, func(e *expect) {
				n := len(s1.starts) - 1
				e.corrupt = []CorruptRange{cr(s1, n)}
				e.lost = [][2]int64{rng(s1, n)}
				if indexed(s1, n) { // the entry points into the damage
					e.rebuilt = []string{s1.name() + ".index"}
				}
			})},
		{name: "sealed segment truncated", damage: func(m map[string][]byte) {
			m[s1.name()+".log"] = m[s1.name()+".log"][:len(s1.data)-10]
		}, e: with(clean, func(e *expect) {
			n := len(s1.starts) - 1
			e.corrupt = []CorruptRange{{Segment: s1.name() + ".log", StartPos: s1.starts[n], EndPos: int64(len(s1.data)) - 10, FirstOffset: s1.bases[n], EndOffset: 200}}
			e.lost = [][2]int64{rng(s1, n)}
			if indexed(s1, n) {
				e.rebuilt = []string{s1.name() + ".index"}
			}
		})},
		{name: "sealed segment header flip at an index entry, snapshot", snapshot: true,
			damage: flip(s1.name()+".log", 12, 0x01), // base offset of batch 0, always indexed
			e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250,
				corrupt: []CorruptRange{cr(s1, 0)}, lost: [][2]int64{rng(s1, 0)},
				rebuilt: []string{s1.name() + ".index"}, note: "segment scanned"}},
		{name: "sealed segment body flip, snapshot: found at read", snapshot: true,
			damage:   flip(s1.name()+".log", s1.starts[k1]+codec.HeaderLen+40, 0x01),
			e:        expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250, lost: [][2]int64{rng(s1, k1)}},
			readErrs: 1},

		// Indexes.
		{name: "index truncated mid-entry", damage: func(m map[string][]byte) {
			m[s0.name()+".index"] = m[s0.name()+".index"][:len(m[s0.name()+".index"])-3]
		}, e: with(clean, func(e *expect) { e.rebuilt = []string{s0.name() + ".index"} })},
		{name: "index truncated mid-entry, snapshot", snapshot: true, damage: func(m map[string][]byte) {
			m[s1.name()+".index"] = m[s1.name()+".index"][:len(m[s1.name()+".index"])-5]
		}, e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250, rebuilt: []string{s1.name() + ".index"}, note: "partial entry"}},
		{name: "index short by two entries", damage: func(m map[string][]byte) {
			m[s0.name()+".index"] = m[s0.name()+".index"][:len(m[s0.name()+".index"])-16]
		}, e: with(clean, func(e *expect) { e.rebuilt = []string{s0.name() + ".index"} })},
		{name: "index short by two entries, snapshot", snapshot: true, damage: func(m map[string][]byte) {
			m[s0.name()+".index"] = m[s0.name()+".index"][:len(m[s0.name()+".index"])-16]
		}, e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250, rebuilt: []string{s0.name() + ".index"}, note: "index is short"}},
		{name: "index deleted", damage: func(m map[string][]byte) { delete(m, s1.name()+".index") },
			e: with(clean, func(e *expect) { e.rebuilt = []string{s1.name() + ".index"} })},
		{name: "active index deleted, snapshot", snapshot: true, damage: func(m map[string][]byte) { delete(m, s2.name()+".index") },
			e: expect{path: PathDelta, leo: 250, hwm: 250, persisted: 250, rebuilt: []string{s2.name() + ".index"}, note: "index file missing"}},
		{name: "active index with a partial entry, snapshot", snapshot: true, damage: func(m map[string][]byte) {
			m[s2.name()+".index"] = append(m[s2.name()+".index"], 0, 0, 0)
		}, e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250, rebuilt: []string{s2.name() + ".index"}, note: "partial entry"}},
		{name: "active index short, snapshot", snapshot: true, damage: func(m map[string][]byte) {
			m[s2.name()+".index"] = m[s2.name()+".index"][:8]
		}, e: expect{path: PathDelta, leo: 250, hwm: 250, persisted: 250, rebuilt: []string{s2.name() + ".index"}, note: "scanned from the start"}},
		{name: "index with random bytes appended", damage: func(m map[string][]byte) {
			m[s0.name()+".index"] = append(m[s0.name()+".index"], 0x9c, 0x11, 0x3a, 0x07, 0xee, 0x42, 0x00, 0x5d)
		}, e: with(clean, func(e *expect) { e.rebuilt = []string{s0.name() + ".index"} })},
		{name: "index with random bytes appended, snapshot", snapshot: true, damage: func(m map[string][]byte) {
			m[s1.name()+".index"] = append(m[s1.name()+".index"], 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x10, 0x5d)
		}, e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250, rebuilt: []string{s1.name() + ".index"}}},
		{name: "index entry pointing at the wrong batch", damage: func(m map[string][]byte) {
			binary.BigEndian.PutUint32(m[s2.name()+".index"][8:], uint32(s2.bases[1]-s2.base))
		}, e: with(clean, func(e *expect) { e.rebuilt = []string{s2.name() + ".index"} })},

		// Snapshots.
		{name: "snapshot garbage", damage: func(m map[string][]byte) { m[SnapshotFile] = []byte("not a snapshot at all") },
			e: with(clean, func(e *expect) { e.note = "snapshot unreadable" })},
		{name: "snapshot ahead of the log", damage: func(m map[string][]byte) {
			m[SnapshotFile] = f.snapshot(t, s2, full+200, 260)
		}, e: with(clean, func(e *expect) {
			// Its end was acknowledged: a lost range, never handed out again.
			e.note, e.leo, e.hwm, e.gaps = "ahead of the log", 260, 260, [][2]int64{{250, 260}}
		})},
		{name: "snapshot behind the log", damage: func(m map[string][]byte) {
			m[SnapshotFile] = f.snapshot(t, s2, s2.starts[6], s2.bases[6])
		}, e: expect{path: PathDelta, leo: 250, hwm: 250, persisted: 250}},
		{name: "snapshot behind, mid-batch", damage: func(m map[string][]byte) {
			m[SnapshotFile] = f.snapshot(t, s2, s2.starts[6]+1, s2.bases[6])
		}, e: expect{path: PathDelta, leo: 250, hwm: 250, persisted: 250, note: "scanned from the start"}},
		{name: "snapshot with the wrong log end", damage: func(m map[string][]byte) {
			m[SnapshotFile] = f.snapshot(t, s2, full, 251)
		}, e: expect{path: PathDelta, leo: 251, hwm: 251, persisted: 250, gaps: [][2]int64{{250, 251}}, note: "the checkpointed bytes end at offset 250, the snapshot says 251"}},
		{name: "snapshot of an older active segment", damage: func(m map[string][]byte) {
			m[SnapshotFile] = f.snapshot(t, s1, int64(len(s1.data)), 200)
		}, e: with(clean, func(e *expect) { e.note = "names active segment 100" })},

		// The persisted high-watermark.
		{name: "hwm ahead", damage: func(m map[string][]byte) { m[HWMFile], _ = EncodeHWM(300) },
			e: with(clean, func(e *expect) { e.persisted, e.leo, e.hwm, e.gaps = 300, 300, 300, [][2]int64{{250, 300}} })},
		{name: "hwm behind, expose", damage: func(m map[string][]byte) { m[HWMFile], _ = EncodeHWM(230) },
			e: with(clean, func(e *expect) { e.persisted, e.hidden = 230, 20 })},
		{name: "hwm behind, hide", opts: Options{HiddenTail: HiddenTailHide}, damage: func(m map[string][]byte) { m[HWMFile], _ = EncodeHWM(230) },
			e: with(clean, func(e *expect) { e.persisted, e.hidden, e.hwm = 230, 20, 230 })},
		{name: "hwm behind, hide, snapshot", snapshot: true, opts: Options{HiddenTail: HiddenTailHide}, damage: func(m map[string][]byte) { m[HWMFile], _ = EncodeHWM(7) },
			e: expect{path: PathSnapshot, leo: 250, hwm: 7, persisted: 7, hidden: 243}},
		{name: "hwm garbage", damage: func(m map[string][]byte) { m[HWMFile] = []byte{1, 2, 3, 4, 5} },
			e: with(clean, func(e *expect) { e.persisted, e.hidden = -1, 250; e.note = "hwm file unreadable" })},
		{name: "hwm missing", damage: func(m map[string][]byte) { delete(m, HWMFile) },
			e: with(clean, func(e *expect) { e.persisted, e.hidden = -1, 250; e.note = "no hwm file" })},

		// Temp files of interrupted atomic writes and compactions.
		{name: "orphan temp files", snapshot: true, damage: func(m map[string][]byte) {
			m[".tmp-compact-00000000000000000100.log"] = s1.data[:100]
			m[".tmp-hwm-12345"] = []byte{0, 0}
		}, e: expect{path: PathSnapshot, leo: 250, hwm: 250, persisted: 250,
			temps: []string{".tmp-compact-00000000000000000100.log", ".tmp-hwm-12345"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			m := f.files(t, c.snapshot)
			if c.damage != nil {
				c.damage(m)
			}
			writeFiles(t, dir, m)
			o := c.opts
			o.IndexIntervalBytes = testInterval
			e := c.e
			if c.readErrs > 0 {
				checkFoundAtRead(t, dir, f, o, e, c.readErrs)
				return
			}
			res := recoverAndCheck(t, dir, f, o, e)
			reopen(t, dir, o, res)
		})
	}
}

// checkFoundAtRead: damage the open does not look for (inside data a valid
// snapshot vouches for) must be found by a reader's CRC check, never read
// back as a wrong record.
func checkFoundAtRead(t *testing.T, dir string, f *fixture, o Options, e expect, n int) {
	t.Helper()
	res, err := Run(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Segments {
		defer s.Close()
	}
	checkReport(t, "run", &res.Report, res, e)
	got, readErrs := readBack(t, dir, nil)
	if len(readErrs) != n {
		t.Fatalf("%d read errors, want %d: %v", len(readErrs), n, readErrs)
	}
	for o, w := range f.want {
		r, ok := got[o]
		inLost := false
		for _, l := range e.lost {
			inLost = inLost || (o >= l[0] && o < l[1])
		}
		if ok == inLost || (ok && !sameRecord(r, w)) {
			t.Fatalf("offset %d: read %v (expected lost: %v)", o, ok, inLost)
		}
	}
}

func batchSize(s *fixSeg, i int) int {
	h, _ := codec.ParseHeader(s.data[s.starts[i]:])
	return int(h.Size())
}

// TestTornTailEveryByte cuts the active segment at every byte of its last
// two batches, with and without a snapshot: the log always recovers to the
// last whole batch before the cut, and a snapshot never changes the answer.
// Every cut costs real fsyncs, so the two snapshot variants take every
// third byte (and both sides of every boundary) unless PULSE_LONG=1.
func TestTornTailEveryByte(t *testing.T) {
	// Small last batches keep the number of cuts (and runs) modest.
	f := newFixture(t, segSpec{base: 0, batches: []int{5, 5, 5, 5}}, segSpec{base: 20, batches: []int{5, 5, 5, 5, 5, 1, 1, 1}})
	s1 := f.active()
	n := len(s1.starts)
	from := s1.starts[n-2]
	pristine := f.files(t, false)
	idx := indexFor(s1)
	lastEntry := int64(binary.BigEndian.Uint32(idx[len(idx)-4:]))
	opts := Options{IndexIntervalBytes: testInterval}
	for _, snap := range []string{"none", "full", "behind"} {
		for cut := from; cut < int64(len(s1.data)); cut++ {
			nearBoundary := false
			for _, p := range s1.starts[n-2:] {
				nearBoundary = nearBoundary || (cut >= p-1 && cut <= p+1)
			}
			if snap != "none" && !longTests() && cut%3 != 0 && !nearBoundary {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", snap, cut), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				m := map[string][]byte{}
				for k, v := range pristine {
					m[k] = bytes.Clone(v)
				}
				m[s1.name()+".log"] = m[s1.name()+".log"][:cut]
				i := n - 2 // the batch the cut falls in
				if cut >= s1.starts[n-1] {
					i = n - 1
				}
				// The last two batches were never acknowledged: the
				// persisted HWM stops before them.
				acked := s1.bases[n-2]
				m[HWMFile], _ = EncodeHWM(acked)
				e := expect{path: PathFullScan, leo: s1.bases[i], hwm: s1.bases[i], persisted: acked,
					hidden: s1.bases[i] - acked, lost: [][2]int64{{s1.bases[i], f.leo}}}
				if cut > s1.starts[i] {
					e.truncated = []Truncation{{Segment: s1.name() + ".log", Position: s1.starts[i], Bytes: cut - s1.starts[i]}}
				} else if lastEntry >= cut {
					// A cut on a boundary leaves an index entry pointing at nothing.
					e.rebuilt = []string{s1.name() + ".index"}
				}
				switch snap {
				case "full":
					// Checkpointed after the last batch, so every batch was
					// fsynced and verified: a cut there is damage, not a
					// torn write. Nothing is truncated; the log end stays at
					// the checkpoint and what is gone is reported.
					m[SnapshotFile] = f.snapshot(t, s1, int64(len(s1.data)), f.leo)
					e.leo, e.hwm = f.leo, f.leo
					if cut > s1.starts[i] {
						e.truncated = nil
						e.corrupt = []CorruptRange{{Segment: s1.name() + ".log", StartPos: s1.starts[i], EndPos: cut, FirstOffset: s1.bases[i], EndOffset: f.leo}}
						e.hidden = f.leo - acked
					} else {
						e.gaps = [][2]int64{{s1.bases[i], f.leo}}
					}
				case "behind":
					m[SnapshotFile] = f.snapshot(t, s1, s1.starts[n-3], s1.bases[n-3])
					e.path = PathDelta
				}
				writeFiles(t, dir, m)
				res := recoverAndCheck(t, dir, f, opts, e)
				if cut == from || cut == s1.starts[n-1]+1 {
					reopen(t, dir, opts, res)
				}
			})
		}
	}
}

// TestTempFilesOnly: a directory holding only a temp file is a new log.
func TestNewPartition(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".tmp-snapshot-1"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := Run(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if ro.Report.Path != PathNew || len(ro.Segments) != 0 || len(ro.Report.TempFilesRemoved) != 1 {
		t.Fatalf("read-only: %+v", ro.Report)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("read-only run changed the directory: %v", ents)
	}
	res, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Segments[0].Close()
	if res.Report.Path != PathNew || res.LEO != 0 || res.HWM != 0 || len(res.Segments) != 1 || res.Segments[0].Base() != 0 || res.Report.NeedsWork() != true {
		t.Fatalf("%+v", res.Report)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-snapshot-1")); !os.IsNotExist(err) {
		t.Fatalf("temp file left: %v", err)
	}
	// A missing directory is created; read-only, it is an error.
	if _, err := Run(filepath.Join(dir, "nope"), Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only run on a missing dir: no error")
	}
	if _, err := Run(dir, Options{HiddenTail: "sometimes"}); err == nil {
		t.Fatal("bad policy accepted")
	}
}

// TestNewPartitionKeepsOffsets: segments gone but the hwm says offsets were
// handed out: the new log starts past them so no offset is reused.
func TestNewPartitionKeepsOffsets(t *testing.T) {
	dir := t.TempDir()
	if err := WriteHWM(dir, 77); err != nil {
		t.Fatal(err)
	}
	res, err := Run(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Segments[0].Close()
	if res.LEO != 77 || res.HWM != 77 || res.LogStart != 77 || res.Segments[0].Base() != 77 {
		t.Fatalf("leo %d hwm %d start %d", res.LEO, res.HWM, res.LogStart)
	}
}

// TestSparseSegments: compacted sealed segments are sparse; their end comes
// from the next segment's name, and both paths accept them.
func TestSparseSegments(t *testing.T) {
	f := &fixture{want: map[int64]codec.Record{}}
	s0 := &fixSeg{base: 0}
	for _, offs := range [][]int64{{0, 3, 4}, {9, 11}, {20, 30, 31, 39}} {
		s0.starts = append(s0.starts, int64(len(s0.data)))
		s0.bases = append(s0.bases, offs[0])
		s0.ends = append(s0.ends, offs[len(offs)-1]+1)
		s0.data = appendSparse(t, s0.data, offs, codec.CodecZstd)
		for _, o := range offs {
			f.want[o] = testRecords(o, 1)[0]
		}
	}
	rest := newFixture(t, segSpec{base: 50, batches: []int{5, 5, 5}, zstd: true})
	for o, r := range rest.want {
		f.want[o] = r
	}
	f.segs = []*fixSeg{s0, rest.segs[0]}
	f.leo = 65
	for _, snap := range []bool{false, true} {
		dir := t.TempDir()
		writeFiles(t, dir, f.files(t, snap))
		e := expect{path: PathFullScan, leo: 65, hwm: 65, persisted: 65, note: "no snapshot"}
		if snap {
			e = expect{path: PathSnapshot, leo: 65, hwm: 65, persisted: 65}
		}
		res := recoverAndCheck(t, dir, f, Options{IndexIntervalBytes: testInterval}, e)
		reopen(t, dir, Options{IndexIntervalBytes: testInterval}, res)
	}
}

// TestCompactionSwapCrash: a crash between compaction's data rename and its
// index rename leaves a compacted (sparse) .log under the old index. The
// snapshot path must notice the index no longer matches (every entry is
// checked), scan that segment and rebuild its index; the full scan must get
// the same log.
func TestCompactionSwapCrash(t *testing.T) {
	orig := newFixture(t, segSpec{base: 0, batches: []int{5, 5, 5, 5, 5, 5, 5, 5}}, segSpec{base: 40, batches: []int{4, 4}})
	// The compacted segment keeps every third offset of [0, 40).
	comp := &fixture{want: map[int64]codec.Record{}, leo: orig.leo}
	cs := &fixSeg{base: 0}
	var keep []int64
	for o := int64(0); o < 40; o += 3 {
		keep = append(keep, o)
	}
	for i := 0; i < len(keep); i += 4 {
		offs := keep[i:min(i+4, len(keep))]
		cs.starts = append(cs.starts, int64(len(cs.data)))
		cs.bases = append(cs.bases, offs[0])
		cs.ends = append(cs.ends, offs[len(offs)-1]+1)
		cs.data = appendSparse(t, cs.data, offs, codec.CodecZstd)
		for _, o := range offs {
			comp.want[o] = testRecords(o, 1)[0]
		}
	}
	for o, r := range orig.want {
		if o >= 40 {
			comp.want[o] = r
		}
	}
	comp.segs = []*fixSeg{cs, orig.segs[1]}
	for _, snap := range []bool{true, false} {
		dir := t.TempDir()
		m := orig.files(t, snap)
		m[cs.name()+".log"] = bytes.Clone(cs.data) // renamed in; the old index stays
		writeFiles(t, dir, m)
		e := expect{path: PathFullScan, leo: orig.leo, hwm: orig.leo, persisted: orig.leo, rebuilt: []string{cs.name() + ".index"}}
		if snap {
			e.path, e.note = PathSnapshot, "segment scanned"
		}
		opts := Options{IndexIntervalBytes: testInterval}
		res := recoverAndCheck(t, dir, comp, opts, e)
		reopen(t, dir, opts, res)
	}
}

// TestStaleSnapshotReplaced: a snapshot the recovery could not use is
// replaced by one of the recovered log (so the next open is fast and cannot
// line up with a stale checkpoint), or removed when the active segment holds
// a corrupt range (so the next open reports it again).
func TestStaleSnapshotReplaced(t *testing.T) {
	f := defaultFixture(t)
	s2 := f.active()
	opts := Options{IndexIntervalBytes: testInterval}

	// Torn tail past the persisted HWM under a snapshot recovery cannot use.
	dir := t.TempDir()
	m := f.files(t, true)
	m[s2.name()+".log"] = m[s2.name()+".log"][:len(s2.data)-10]
	m[HWMFile], _ = EncodeHWM(245)
	m[SnapshotFile] = []byte("garbage")
	writeFiles(t, dir, m)
	if res := runClosed(t, dir, opts); res.Report.Path != PathFullScan || res.LEO != 245 {
		t.Fatalf("first open:\n%s", strings.Join(res.Report.Lines(), "\n"))
	}
	snap, err := ReadSnapshot(dir)
	if err != nil || snap != (Snapshot{LEO: 245, ActiveBase: 200, ActiveSize: s2.starts[len(s2.starts)-1], ActiveNext: 245}) {
		t.Fatalf("snapshot %+v (%v)", snap, err)
	}
	if res := runClosed(t, dir, opts); res.Report.Path != PathSnapshot || res.Report.NeedsWork() || res.LEO != 245 {
		t.Fatalf("second open:\n%s", strings.Join(res.Report.Lines(), "\n"))
	}

	// A corrupt range in the active segment: the snapshot goes away.
	dir = t.TempDir()
	m = f.files(t, false)
	m[SnapshotFile] = []byte("garbage")
	m[s2.name()+".log"][s2.starts[3]+30] ^= 1
	writeFiles(t, dir, m)
	for i := 0; i < 2; i++ {
		if res := runClosed(t, dir, opts); res.Report.Path != PathFullScan || len(res.Report.Corrupt) != 1 {
			t.Fatalf("open %d:\n%s", i, strings.Join(res.Report.Lines(), "\n"))
		}
		if _, err := ReadSnapshot(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("snapshot still there: %v", err)
		}
	}
}
