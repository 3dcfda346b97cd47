package wire

import (
	"io"

	"github.com/gorilla/websocket"
)

// ReadMessage is ws.ReadMessage with the buffer sized from a hint (the
// size of the connection's previous messages), so that a producer's
// similar-sized batches are read without growing a buffer from scratch each
// time. The read limit applies as with ReadMessage.
func ReadMessage(ws *websocket.Conn, hint int) (int, []byte, error) {
	typ, r, err := ws.NextReader()
	if err != nil {
		return typ, nil, err
	}
	b := make([]byte, 0, hint)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return typ, b, nil
		}
		if err != nil {
			return typ, nil, err
		}
	}
}
