package segment

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine/codec"
)

// TestSimulation runs a seeded random workload of appends, syncs,
// truncations, reopens and index rebuilds against a model of the segment,
// checking after every step that the segment agrees with it. The seed is in
// every failure message; PULSE_SEED reruns one, PULSE_LONG=1 runs longer.
func TestSimulation(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("PULSE_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("PULSE_SEED: %v", err)
		}
	}
	t.Logf("seed %d (rerun with PULSE_SEED=%d)", seed, seed)
	runs, steps := 3, 150
	if os.Getenv("PULSE_LONG") == "1" {
		runs, steps = 40, 1500
	}
	for r := 0; r < runs; r++ {
		simulate(t, seed+uint64(r), steps)
	}
}

func simulate(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	dir := t.TempDir()
	const base = 5000
	opts := Options{IndexIntervalBytes: 1 + rng.IntN(8192)}
	s, err := Create(dir, base, opts)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	defer func() { s.Close() }()
	var model []written // the batches the segment must hold, in order
	next := int64(base)
	fail := func(step int, op string, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d step %d (%s): "+format, append([]any{seed, step, op}, args...)...)
	}
	for step := 0; step < steps; step++ {
		var op string
		switch p := rng.IntN(100); {
		case p < 60:
			op = "append"
			b, h, err := encodeBatch(next, 1+rng.IntN(20), rng.IntN(600), codec.Codec(rng.IntN(2)))
			if err != nil {
				fail(step, op, "%v", err)
			}
			pos, err := s.Append(b, h)
			if err != nil {
				fail(step, op, "%v", err)
			}
			model = append(model, written{pos: pos, h: h, data: b})
			next += int64(h.RecordCount)
		case p < 75:
			op = "sync"
			if err := s.Sync(); err != nil {
				fail(step, op, "%v", err)
			}
			if b, _ := os.ReadFile(s.IndexPath()); !bytes.Equal(b, EncodeIndex(s.Index())) {
				fail(step, op, ".index file differs from the index after Sync")
			}
		case p < 83:
			op = "truncate"
			k := rng.IntN(len(model) + 1)
			to := s.Size()
			if k < len(model) {
				to = model[k].pos
				next = model[k].h.BaseOffset
			}
			if err := s.Truncate(to); err != nil {
				fail(step, op, "%v", err)
			}
			model = model[:k]
		case p < 92:
			op = "reopen"
			if rng.IntN(2) == 0 {
				if err := s.Sync(); err != nil {
					fail(step, op, "%v", err)
				}
			}
			if err := s.Close(); err != nil {
				fail(step, op, "%v", err)
			}
			if s, err = Open(dir, base, opts); err != nil {
				fail(step, op, "%v", err)
			}
		default:
			op = "set index"
			var idx []IndexEntry
			interval := int64(1 + rng.IntN(8192))
			for _, w := range model {
				if len(idx) == 0 || w.pos-int64(idx[len(idx)-1].RelPosition) >= interval {
					idx = append(idx, IndexEntry{uint32(w.h.BaseOffset - base), uint32(w.pos)})
				}
			}
			if err := s.SetIndex(idx); err != nil {
				fail(step, op, "%v", err)
			}
		}
		// The segment agrees with the model.
		var size int64
		if n := len(model); n > 0 {
			size = model[n-1].pos + model[n-1].h.Size()
		}
		if s.Size() != size {
			fail(step, op, "Size %d, model %d", s.Size(), size)
		}
		if fi, err := os.Stat(s.Path()); err != nil || fi.Size() != size {
			fail(step, op, ".log file size %v, model %d (%v)", fi.Size(), size, err)
		}
		idx := s.Index()
		if len(model) > 0 && (len(idx) == 0 || idx[0].RelPosition != 0) {
			fail(step, op, "first batch not indexed: %v", idx)
		}
		if err := ValidateIndex(idx, max(size, 1)); err != nil {
			fail(step, op, "%v", err)
		}
		for _, e := range idx {
			i, found := slices.BinarySearchFunc(model, int64(e.RelPosition), func(w written, pos int64) int { return int(w.pos - pos) })
			if !found || model[i].h.BaseOffset != base+int64(e.RelOffset) {
				fail(step, op, "index entry %+v is not a batch of the model", e)
			}
		}
		if len(model) > 0 {
			w := model[rng.IntN(len(model))]
			off := w.h.BaseOffset + rng.Int64N(int64(w.h.RecordCount))
			pos := s.Lookup(off)
			for {
				raw, h, err := s.ReadBatch(pos, nil)
				if err != nil {
					fail(step, op, "forward from Lookup(%d): %v", off, err)
				}
				if h.BaseOffset > off {
					fail(step, op, "Lookup(%d) = %d passed the batch", off, s.Lookup(off))
				}
				if h.BaseOffset == w.h.BaseOffset {
					if pos != w.pos || !bytes.Equal(raw, w.data) {
						fail(step, op, "batch at offset %d read back different", off)
					}
					break
				}
				pos += h.Size()
			}
		}
		if _, _, err := s.ReadBatch(size, nil); !errors.Is(err, codec.ErrTorn) {
			fail(step, op, "ReadBatch at the end: %v", err)
		}
	}
	n := 0
	if err := scanSeg(s, 0, func(pos int64, h codec.BatchHeader, raw []byte) error {
		if pos != model[n].pos || !bytes.Equal(raw, model[n].data) {
			t.Fatalf("seed %d: Scan batch %d differs", seed, n)
		}
		n++
		return nil
	}); err != nil || n != len(model) {
		t.Fatalf("seed %d: final Scan: %v after %d of %d batches", seed, err, n, len(model))
	}
}
