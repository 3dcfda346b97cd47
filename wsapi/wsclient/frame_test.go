package wsclient

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/pulselog/pulse/wsapi/internal/wiretest"
)

// TestFramesReadByTheLibrary sends frames of every length class of the
// frame header (7-bit, 16-bit and 64-bit lengths, and their edges), text
// and binary, many in flight at once, to a server that reads them with
// gorilla/websocket and answers each with its type, length and CRC: every
// frame must arrive whole, in order, and unchanged.
func TestFramesReadByTheLibrary(t *testing.T) {
	url := wiretest.ServeWS(t, func(ws *websocket.Conn) {
		ws.SetReadLimit(1 << 20)
		for {
			typ, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			// The payload starts with its id and a space.
			id, _, _ := bytes.Cut(msg, []byte(" "))
			reply := fmt.Sprintf(`{"id":%s,"partition":%d,"offset":%d,"timestamp":%d}`, id, len(msg), crc32.ChecksumIEEE(msg), typ)
			if err := ws.WriteMessage(websocket.TextMessage, []byte(reply)); err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, url, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	var sizes []int
	for _, n := range []int{0, 1, 7, 8, 9, 124, 125, 126, 127, 65535, 65536, 65537, 200000} {
		sizes = append(sizes, n, n+3)
	}
	for range 200 {
		sizes = append(sizes, rng.IntN(3000))
	}
	type sent struct {
		p    *Pending
		n    int
		crc  uint32
		typ  int
		size int
	}
	var all []sent
	for i, size := range sizes {
		typ := websocket.TextMessage
		if i%3 == 1 {
			typ = websocket.BinaryMessage
		}
		var frame []byte
		p, err := c.startFrame(nil, typ, nil, func(id int64) []byte {
			frame = strconv.AppendInt(nil, id, 10)
			frame = append(frame, ' ')
			for len(frame) < size {
				frame = append(frame, byte('a'+rng.IntN(26)))
			}
			return frame
		})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sent{p: p, n: len(frame), crc: crc32.ChecksumIEEE(frame), typ: typ, size: size})
	}
	for i, s := range all {
		acks, err := s.p.Wait(ctx)
		if err != nil {
			t.Fatalf("frame %d (%d bytes): %v", i, s.size, err)
		}
		a := acks[0]
		if a.Partition != s.n || uint32(a.Offset) != s.crc || int(a.Timestamp) != s.typ {
			t.Fatalf("frame %d: the server read type %d, %d bytes, crc %x; sent type %d, %d bytes, crc %x", i, a.Timestamp, a.Partition, a.Offset, s.typ, s.n, s.crc)
		}
	}
}

// TestMaskBytes checks the word-at-a-time masking against the definition
// (byte i XOR key byte i mod 4) at every length and offset around a word.
func TestMaskBytes(t *testing.T) {
	key := uint32(0xa1b2c3d4)
	kb := [4]byte{0xd4, 0xc3, 0xb2, 0xa1}
	for n := range 40 {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i * 7)
		}
		got := bytes.Clone(p)
		maskBytes(got, key)
		for i := range p {
			if got[i] != p[i]^kb[i%4] {
				t.Fatalf("length %d, byte %d: got %#x, want %#x", n, i, got[i], p[i]^kb[i%4])
			}
		}
	}
}
