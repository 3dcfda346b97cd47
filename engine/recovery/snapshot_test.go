package recovery

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := Snapshot{LEO: 1234, ActiveBase: 1000, ActiveSize: 9876, ActiveNext: 1234}
	if err := WriteSnapshot(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("read %+v, wrote %+v", got, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, SnapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != SnapshotLen || b[0] != 0x53 || b[1] != 1 {
		t.Fatalf("file image % x", b)
	}
	// Overwrite leaves exactly one file and no temp behind.
	want2 := Snapshot{LEO: 2000, ActiveBase: 2000, ActiveSize: 0, ActiveNext: 2000}
	if err := WriteSnapshot(dir, want2); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != SnapshotFile {
		t.Fatalf("dir holds %v", ents)
	}
	if got, _ := ReadSnapshot(dir); got != want2 {
		t.Fatalf("read %+v after overwrite", got)
	}
}

func TestSnapshotMissing(t *testing.T) {
	_, err := ReadSnapshot(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestDecodeSnapshotRejects(t *testing.T) {
	good, err := EncodeSnapshot(Snapshot{LEO: 50, ActiveBase: 40, ActiveSize: 700, ActiveNext: 50})
	if err != nil {
		t.Fatal(err)
	}
	// reseal recomputes the CRC so that the value checks, not the CRC, fire.
	reseal := func(b []byte) []byte {
		c := append([]byte(nil), b...)
		putCRC(c)
		return c
	}
	mut := func(f func(b []byte)) []byte {
		c := append([]byte(nil), good...)
		f(c)
		return c
	}
	cases := map[string][]byte{
		"empty":        nil,
		"short":        good[:39],
		"long":         append(append([]byte(nil), good...), 0),
		"magic":        mut(func(b []byte) { b[0] = 0x54 }),
		"version":      mut(func(b []byte) { b[1] = 2 }),
		"reserved":     mut(func(b []byte) { b[3] = 1 }),
		"crc":          mut(func(b []byte) { b[4] ^= 0x80 }),
		"body bit":     mut(func(b []byte) { b[20] ^= 0x01 }),
		"next != leo":  reseal(mut(func(b []byte) { b[39] = 51 })),
		"base > leo":   reseal(mut(func(b []byte) { b[23] = 60 })),
		"negative leo": reseal(mut(func(b []byte) { b[8] = 0x80; b[32] = 0x80 })),
		"size 0, leo past base": reseal(mut(func(b []byte) {
			copy(b[24:32], make([]byte, 8))
		})),
	}
	for name, b := range cases {
		if _, err := DecodeSnapshot(b); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%s: err = %v, want ErrBadSnapshot", name, err)
		}
	}
	if _, err := DecodeSnapshot(good); err != nil {
		t.Fatalf("good: %v", err)
	}
}

func TestEncodeSnapshotRefusesInvalid(t *testing.T) {
	for _, s := range []Snapshot{
		{LEO: 5, ActiveBase: 0, ActiveSize: 10, ActiveNext: 4},
		{LEO: -1, ActiveNext: -1},
		{LEO: 5, ActiveBase: 6, ActiveSize: 1, ActiveNext: 5},
	} {
		if _, err := EncodeSnapshot(s); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("%+v: err = %v", s, err)
		}
		if err := WriteSnapshot(t.TempDir(), s); !errors.Is(err, ErrBadSnapshot) {
			t.Errorf("write %+v: err = %v", s, err)
		}
	}
}

func TestHWMRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadHWM(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: err = %v", err)
	}
	for _, v := range []int64{0, 1, 1 << 40} {
		if err := WriteHWM(dir, v); err != nil {
			t.Fatal(err)
		}
		got, err := ReadHWM(dir)
		if err != nil || got != v {
			t.Fatalf("ReadHWM = %d, %v; want %d", got, err, v)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, HWMFile))
	if !bytes.Equal(b, []byte{0, 0, 1, 0, 0, 0, 0, 0}) {
		t.Fatalf("file image % x", b)
	}
	if err := WriteHWM(dir, -3); !errors.Is(err, ErrBadHWM) {
		t.Fatalf("negative: err = %v", err)
	}
	for name, img := range map[string][]byte{
		"empty": {}, "short": {0, 0, 0, 1}, "long": make([]byte, 9), "negative": {0xff, 0, 0, 0, 0, 0, 0, 1},
	} {
		if err := os.WriteFile(filepath.Join(dir, HWMFile), img, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadHWM(dir); !errors.Is(err, ErrBadHWM) {
			t.Errorf("%s: err = %v, want ErrBadHWM", name, err)
		}
	}
}

// putCRC recomputes the checksum of a snapshot image in place.
func putCRC(b []byte) {
	if len(b) != SnapshotLen {
		return
	}
	c := crc32c(b[snapOffLEO:])
	b[4], b[5], b[6], b[7] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
}
