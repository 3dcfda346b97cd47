package wsclient

import "errors"

// Errors returned by the client, matched with errors.Is. A request the
// server refused returns a *wire.Error carrying the protocol's code.
var (
	// ErrNotRunning is returned by Dial when nothing listens at the address.
	ErrNotRunning = errors.New("no pulse running")
	// ErrClientClosed is returned by client calls after the connection ended.
	ErrClientClosed = errors.New("connection closed")
)
