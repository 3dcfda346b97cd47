package wire

import "encoding/binary"

// Websocket opcodes of the data frames Pulse writes itself (RFC 6455
// section 5.2).
const (
	OpText   = 1
	OpBinary = 2
)

// AppendFrameHeader appends the header of a final (unfragmented) websocket
// frame of opcode op carrying n payload bytes (RFC 6455 section 5.2): the
// 7-bit, 16-bit or 64-bit length form, with the mask bit set when masked
// (a client's frame; the caller then appends the 4-byte mask key and the
// masked payload). The server writes the replies of merged produce
// requests with it, the Go client every data frame.
func AppendFrameHeader(b []byte, op byte, n int, masked bool) []byte {
	b = append(b, 0x80|op)
	var m byte
	if masked {
		m = 0x80
	}
	switch {
	case n < 126:
		return append(b, m|byte(n))
	case n <= 0xFFFF:
		return append(b, m|126, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint64(append(b, m|127), uint64(n))
}
