package wsclient

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"

	"github.com/pulselog/pulse/wsapi/wire"
)

// The client writes its data frames itself (RFC 6455 section 5.2), into
// one buffer per system call: each frame's header and its masked payload,
// in one pass over the payload. The websocket library still reads every
// frame and writes the control frames (ping replies, the close), each in
// one write of its own, so that frames never interleave.

// maxFrameHeader is the longest header of a client frame: 2 bytes, an
// 8-byte length, the 4-byte mask key.
const maxFrameHeader = 14

// appendFrame appends a final (unfragmented) client frame of opcode op
// (1 text, 2 binary) carrying payload, masked with a fresh key.
func appendFrame(b []byte, op int, payload []byte) []byte {
	b = wire.AppendFrameHeader(b, byte(op), len(payload), true)
	key := rand.Uint32()
	b = binary.LittleEndian.AppendUint32(b, key)
	start := len(b)
	b = append(b, payload...)
	maskBytes(b[start:], key)
	return b
}

// maskBytes XORs p with the mask key, whose first byte is key's low byte
// (the byte order appendFrame writes it in), eight bytes at a time.
func maskBytes(p []byte, key uint32) {
	k8 := uint64(key) | uint64(key)<<32
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^k8)
	}
	// The tail starts at a multiple of 8, so at key byte 0.
	for j := 0; i < len(p); i, j = i+1, j+1 {
		p[i] ^= byte(bits.RotateLeft32(key, -8*j))
	}
}
