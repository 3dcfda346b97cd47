package wire

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// TestBatchConnKeepsOrder: within a hold, small writes are gathered and a
// large one goes out without being gathered; the peer reads every byte in
// the order written.
func TestBatchConnKeepsOrder(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	bc := NewBatchConn(raw)
	var want []byte
	write := func(p []byte) {
		t.Helper()
		if n, err := bc.Write(p); err != nil || n != len(p) {
			t.Fatalf("write of %d bytes: %d, %v", len(p), n, err)
		}
		want = append(want, p...)
	}
	bc.Hold()
	write([]byte("small-1"))
	write(bytes.Repeat([]byte("L"), directWrite+5))
	write([]byte("small-2"))
	write(bytes.Repeat([]byte("M"), 3*directWrite))
	write([]byte("small-3"))
	if len(bc.buf) != len("small-3") {
		t.Fatalf("gathered %d bytes after the last large write, want only small-3's", len(bc.buf))
	}
	if err := bc.Flush(); err != nil {
		t.Fatal(err)
	}
	write([]byte("after"))
	raw.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("peer read %d bytes, want the %d written in order", len(b), len(want))
	}
}
