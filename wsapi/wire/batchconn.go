package wire

import (
	"net"
	"sync"
)

// MaxWriteBatch bounds the bytes a BatchConn gathers before it writes them
// to the socket in one system call.
const MaxWriteBatch = 256 << 10

// BatchConn is a net.Conn whose writes go straight through, except between
// Hold and Flush, when they are gathered and written together by Flush. A
// websocket's one writer (the server's write pump, the client's) holds
// while it writes the messages it found queued together, so that they cost
// one system call (and one wake-up of the peer) instead of one each.
// Everything else the connection writes (HTTP before the upgrade, the
// library's control frames) goes straight through outside a hold, and
// within one waits at most for the Flush that ends it.
type BatchConn struct {
	net.Conn

	mu   sync.Mutex // guards held and buf, and orders writes to Conn
	held bool
	buf  []byte // gathered writes, in order
}

// NewBatchConn wraps c.
func NewBatchConn(c net.Conn) *BatchConn { return &BatchConn{Conn: c} }

// maxKeptBatch is the largest gathering buffer a connection keeps between
// holds (an idle connection should not pin a large one).
const maxKeptBatch = 32 << 10

// directWrite is the size from which a write within a hold is not
// gathered: what was gathered is written, then p itself without a copy
// (the body of a large push, which a gathering buffer would only copy and
// grow for).
const directWrite = 32 << 10

// Write writes p, or gathers a copy of it while the connection is held.
func (b *BatchConn) Write(p []byte) (int, error) {
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
	if len(b.buf)+len(p) > MaxWriteBatch && len(b.buf) > 0 {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Hold starts gathering writes.
func (b *BatchConn) Hold() {
	b.mu.Lock()
	b.held = true
	b.mu.Unlock()
}

// Flush writes what was gathered in one write and ends the hold.
func (b *BatchConn) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = false
	err := b.flushLocked()
	if cap(b.buf) > maxKeptBatch {
		b.buf = nil
	}
	return err
}

func (b *BatchConn) flushLocked() error {
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(b.buf)
	b.buf = b.buf[:0]
	return err
}

// CloseWrite half-closes the connection when the underlying one can (the
// HTTP server uses it to end a refused request cleanly).
func (b *BatchConn) CloseWrite() error {
	if cw, ok := b.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
