package recovery

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/segment"
)

// TestBitFlipSweep flips one random bit of a sealed segment's .log (or,
// one time in ten, .index) file per iteration and recovers: every flip must
// be detected at open (a corrupt range or a rebuilt index) or at read (a
// batch that fails its CRC or decode), never read back as a wrong record,
// and never cost a truncation of the valid data after it. With a snapshot,
// a flip in an index entry other than a segment's first and last is left to
// the read that uses the entry (the fast path reads only those two headers). 1,000 flips by
// default, 10,000 with PULSE_LONG=1; PULSE_SEED=n replays a run.
//
// Recovery runs read-only (the corruption suite shows the read-only report
// is the real one), except every 25th iteration, which recovers for real
// and checks that no .log byte changed.
func TestBitFlipSweep(t *testing.T) {
	iters := 1000
	if longTests() {
		iters = 10000
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PULSE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PULSE_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("bit-flip sweep: %d flips, PULSE_SEED=%d", iters, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	f := newFixture(t,
		segSpec{base: 0, batches: []int{3, 1, 4, 1, 5, 9, 2, 6}},
		segSpec{base: 31, batches: []int{5, 3, 5, 8, 9, 7}},
		segSpec{base: 68, batches: []int{2, 2, 2, 2, 2, 2, 2}, zstd: true},
		segSpec{base: 82, batches: []int{4, 4}},
	)
	sealed := f.segs[:3]
	var detectedOpen, detectedRead, harmless, leftToReads int
	for _, withSnap := range []bool{false, true} {
		pristine := f.files(t, withSnap)
		dir := t.TempDir()
		writeFiles(t, dir, pristine)
		dirty := false // a real run may have rewritten index or hwm files
		prev := ""     // the file damaged by the previous iteration
		for i := 0; i < iters/2; i++ {
			s := sealed[rng.IntN(len(sealed))]
			name := s.name() + ".log"
			if rng.IntN(10) == 0 {
				name = s.name() + ".index"
			}
			orig := pristine[name]
			pos := rng.IntN(len(orig))
			mask := byte(1) << rng.IntN(8)
			damaged := bytes.Clone(orig)
			damaged[pos] ^= mask
			if dirty {
				writeFiles(t, dir, pristine)
				dirty = false
			} else if prev != "" {
				if err := os.WriteFile(filepath.Join(dir, prev), pristine[prev], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			prev = name
			if err := os.WriteFile(filepath.Join(dir, name), damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			real := i%25 == 0
			res, err := Run(dir, Options{IndexIntervalBytes: testInterval, ReadOnly: !real})
			if err != nil {
				t.Fatalf("seed %d flip %s@%d^%02x: %v", seed, name, pos, mask, err)
			}
			for _, sg := range res.Segments {
				sg.Close()
			}
			rep := &res.Report
			where := func() string {
				return "seed " + strconv.FormatUint(seed, 10) + " flip " + name + "@" + strconv.Itoa(pos) + "^" + strconv.Itoa(int(mask)) +
					"\n" + strings.Join(rep.Lines(), "\n")
			}
			if len(rep.Truncations) > 0 || res.LEO != f.leo || res.HWM > res.LEO {
				t.Fatalf("%s\ntruncated or moved the log end (leo %d, want %d)", where(), res.LEO, f.leo)
			}
			if real {
				dirty = true
				img := dirImage(t, dir)
				for n, b := range img {
					want := pristine[n]
					if n == name {
						want = damaged
					}
					if strings.HasSuffix(n, ".log") && !bytes.Equal(b, want) {
						t.Fatalf("%s\nrecovery changed %s", where(), n)
					}
				}
			}
			got, readErrs := readBack(t, dir, rep.Corrupt)
			badSegs := map[string]bool{}
			for _, e := range readErrs {
				badSegs[e[:strings.Index(e, "@")]] = true
			}
			for o, w := range f.want {
				r, ok := got[o]
				if ok {
					if !sameRecord(r, w) {
						t.Fatalf("%s\noffset %d read back wrong", where(), o)
					}
					continue
				}
				covered := false
				for _, c := range rep.Corrupt {
					covered = covered || (o >= c.FirstOffset && o < c.EndOffset)
				}
				for _, sg := range f.segs {
					if o >= sg.base && o < sg.ends[len(sg.ends)-1] && badSegs[sg.name()+".log"] {
						covered = true
					}
				}
				if !covered {
					t.Fatalf("%s\noffset %d silently lost", where(), o)
				}
			}
			openFound := len(rep.Corrupt) > 0 || len(rep.IndexesRebuilt) > 0
			switch {
			case openFound:
				detectedOpen++
			case len(readErrs) > 0:
				detectedRead++
			case strings.HasSuffix(name, ".log") && isSparseFlagBit(s, pos, mask):
				// Marking a contiguous batch sparse changes no record.
				harmless++
			case withSnap && strings.HasSuffix(name, ".index") && pos/segment.IndexEntryLen > 0 && pos/segment.IndexEntryLen < len(orig)/segment.IndexEntryLen-1:
				// The fast path checks the first and the last entry against
				// the data; an entry between them is checked by the read
				// that uses it (engine/plog's TestReadThroughDamagedIndexEntry).
				leftToReads++
			default:
				t.Fatalf("%s\nflip not detected", where())
			}
		}
	}
	t.Logf("detected at open %d, at read %d, harmless sparse-flag flips %d, index entries left to reads %d", detectedOpen, detectedRead, harmless, leftToReads)
}

// isSparseFlagBit reports whether pos^mask is the sparse flag of a batch
// header of s.
func isSparseFlagBit(s *fixSeg, pos int, mask byte) bool {
	for _, p := range s.starts {
		if int64(pos) == p+3 && mask == codec.FlagSparse {
			return true
		}
	}
	return false
}
