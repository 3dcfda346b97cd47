package segment

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// batch encodes n records starting at base (value size valueLen) and
// returns the bytes and parsed header.
func batch(t testing.TB, base int64, n, valueLen int, c codec.Codec) ([]byte, codec.BatchHeader) {
	t.Helper()
	b, h, err := encodeBatch(base, n, valueLen, c)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

func encodeBatch(base int64, n, valueLen int, c codec.Codec) ([]byte, codec.BatchHeader, error) {
	recs := make([]codec.Record, n)
	for i := range recs {
		v := make([]byte, valueLen)
		for j := range v {
			v[j] = byte(base + int64(i) + int64(j))
		}
		recs[i] = codec.Record{Key: []byte(fmt.Sprint(base + int64(i))), Value: v, Timestamp: 1_764_000_000_000 + base}
	}
	b, err := codec.AppendBatch(nil, base, recs, codec.EncodeOptions{Codec: c})
	if err != nil {
		return nil, codec.BatchHeader{}, err
	}
	h, err := codec.ParseHeader(b)
	return b, h, err
}

// written is one appended batch.
type written struct {
	pos  int64
	h    codec.BatchHeader
	data []byte
}

// fill appends count batches of varying size to s starting at offset next,
// returning them and the next offset.
func fill(t testing.TB, s *Segment, next int64, count int) ([]written, int64) {
	t.Helper()
	var out []written
	for i := 0; i < count; i++ {
		n := 1 + (i*7)%13
		b, h := batch(t, next, n, 50+(i*131)%900, codec.Codec(i%2))
		pos, err := s.Append(b, h)
		if err != nil {
			t.Fatalf("append batch %d at offset %d: %v", i, next, err)
		}
		out = append(out, written{pos: pos, h: h, data: b})
		next += int64(n)
	}
	return out, next
}

// dirState hashes every file in dir, for "nothing changed" checks.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := e.Info()
		m[e.Name()] = fmt.Sprintf("%x %v %v", sha256.Sum256(b), fi.Mode(), fi.ModTime().UnixNano())
	}
	return m
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// scanSeg walks the batches of s from position from to its size with Reader
// at LevelCRC, calling fn with each one's position, header and bytes. It
// stops at the first damaged frame, returning a *codec.CorruptError with its
// position, or at the first error fn returns, which it returns as it is.
func scanSeg(s *Segment, from int64, fn func(pos int64, h codec.BatchHeader, raw []byte) error) error {
	if from < 0 {
		return fmt.Errorf("segment %s: scan from negative position %d", s.Path(), from)
	}
	rd := NewReader(s, s.Size(), ReaderOptions{Level: LevelCRC, Start: from, Next: s.Base()})
	for {
		fr, ok := rd.Next()
		if !ok {
			return nil
		}
		if !fr.OK() {
			off := int64(-1)
			if fr.HeaderOK {
				off = fr.Header.BaseOffset
			}
			return s.corrupt(fr.Position, off, fr.Err)
		}
		if err := fn(fr.Position, fr.Header, fr.Bytes); err != nil {
			return err
		}
	}
}
