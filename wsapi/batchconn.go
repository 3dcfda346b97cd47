package wsapi

import (
	"net"

	"github.com/pulselog/pulse/wsapi/wire"
)

// batchListener wraps the connections Serve accepts in wire.BatchConn, so
// that a websocket's write pump can hand several queued messages to the
// kernel in one write instead of one write (and one wake-up of the peer)
// each.
type batchListener struct{ net.Listener }

func (l batchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wire.NewBatchConn(c), nil
}
