package wsapi

import (
	"net"
	"sync"
)

// maxWriteBatch bounds the bytes a connection's write pump gathers before
// it writes them to the socket in one system call.
const maxWriteBatch = 256 << 10

// batchListener wraps the connections Serve accepts in batchConn, so that a
// websocket's write pump can hand several queued messages to the kernel in
// one write instead of one write (and one wake-up of the peer) each.
type batchListener struct{ net.Listener }

func (l batchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &batchConn{Conn: c}, nil
}

// batchConn is a net.Conn whose writes go straight through, except between
// hold and flush, when they are gathered and written together by flush. Only
// the write pump of a websocket holds; everything else the connection
// writes (HTTP responses before the upgrade, the library's control frames)
// goes straight through outside a hold, and within one waits at most for
// the flush that ends it.
type batchConn struct {
	net.Conn

	mu   sync.Mutex // guards held and buf, and orders writes to Conn
	held bool
	buf  []byte // gathered writes, in order
}

// maxKeptBatch is the largest gathering buffer a connection keeps between
// holds (an idle connection should not pin a large one).
const maxKeptBatch = 32 << 10

// directWrite is the size from which a write within a hold is not
// gathered: what was gathered is written, then p itself without a copy
// (the body of a large push, which a gathering buffer would only copy and
// grow for).
const directWrite = 32 << 10

// Write writes p, or gathers a copy of it while the connection is held.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.held {
		return b.Conn.Write(p)
	}
	if len(p) >= directWrite {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
		return b.Conn.Write(p)
	}
	if len(b.buf)+len(p) > maxWriteBatch && len(b.buf) > 0 {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// hold starts gathering writes.
func (b *batchConn) hold() {
	b.mu.Lock()
	b.held = true
	b.mu.Unlock()
}

// flush writes what was gathered in one write and ends the hold.
func (b *batchConn) flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = false
	err := b.flushLocked()
	if cap(b.buf) > maxKeptBatch {
		b.buf = nil
	}
	return err
}

func (b *batchConn) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// CloseWrite half-closes the connection when the underlying one can (the
// HTTP server uses it to end a refused request cleanly).
func (b *batchConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
