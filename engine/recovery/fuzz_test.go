package recovery

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// seedFiles adds every file of testdata/recovery/<sub> as a fuzz seed.
func seedFiles(f *testing.F, sub string) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "recovery", sub, "*"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeSnapshot: any bytes either decode into a snapshot that
// re-encodes to the same bytes, or fail with ErrBadSnapshot.
func FuzzDecodeSnapshot(f *testing.F) {
	seedFiles(f, "snapshot")
	good, _ := EncodeSnapshot(Snapshot{LEO: 10, ActiveBase: 4, ActiveSize: 300, ActiveNext: 10})
	f.Add(good)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapshot(b)
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error %v does not match ErrBadSnapshot", err)
			}
			return
		}
		again, err := EncodeSnapshot(s)
		if err != nil {
			t.Fatalf("decoded %+v does not re-encode: %v", s, err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed bytes:\n% x\n% x", b, again)
		}
	})
}

// FuzzDecodeHWM: any bytes either decode into a non-negative value that
// re-encodes to the same bytes, or fail with ErrBadHWM.
func FuzzDecodeHWM(f *testing.F) {
	seedFiles(f, "hwm")
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 42})
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeHWM(b)
		if err != nil {
			if !errors.Is(err, ErrBadHWM) {
				t.Fatalf("error %v does not match ErrBadHWM", err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("decoded negative %d", v)
		}
		again, _ := EncodeHWM(v)
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed bytes")
		}
	})
}
