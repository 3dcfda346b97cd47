package recovery

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeManifest: any bytes decode to a valid manifest or an
// ErrBadManifest error, and a decoded manifest round-trips exactly.
func FuzzDecodeManifest(f *testing.F) {
	good, err := EncodeManifest(Manifest{Segments: []int64{0, 70, 140}, Retired: []int64{5}, Gaps: []Gap{{FirstOffset: 10, EndOffset: 20, Reason: "gone"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte("{}\ncrc32c 00000000\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(b)
		if err != nil {
			if !errors.Is(err, ErrBadManifest) {
				t.Fatalf("error %v does not match ErrBadManifest", err)
			}
			return
		}
		again, err := EncodeManifest(m)
		if err != nil {
			t.Fatalf("a decoded manifest does not encode: %v", err)
		}
		m2, err := DecodeManifest(again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip: %+v -> %+v (%v)", m, m2, err)
		}
	})
}

func TestManifestRejectsDamage(t *testing.T) {
	good, err := EncodeManifest(Manifest{Segments: []int64{0, 70}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeManifest(good); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		b := append([]byte(nil), good...)
		b[i] ^= 0x20
		if _, err := DecodeManifest(b); !errors.Is(err, ErrBadManifest) {
			t.Fatalf("flip at %d accepted (%v)", i, err)
		}
	}
	for _, m := range []Manifest{{}, {Segments: []int64{5, 5}}, {Segments: []int64{-1}}, {Segments: []int64{0}, Gaps: []Gap{{FirstOffset: 3, EndOffset: 3}}}} {
		if _, err := EncodeManifest(m); !errors.Is(err, ErrBadManifest) {
			t.Fatalf("%+v encoded (%v)", m, err)
		}
	}
}
