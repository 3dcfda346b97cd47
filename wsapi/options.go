package wsapi

import (
	"log/slog"
	"net/http"
	"time"
)

// Timing of every connection, as in gorilla/websocket's chat example.
const (
	// writeWait is the time allowed to write one message to the peer.
	writeWait = 10 * time.Second
	// pongWait is the default of Options.PongWait: the time allowed to
	// read the next pong (or any message). Pings go out at 9/10 of it
	// (54 s by default).
	pongWait = 60 * time.Second
	// maxMessageSize is the default limit of one incoming message (ReadLimit).
	maxMessageSize = 1 << 20
	// slowConsumerWait is the default of Options.SlowConsumerWait.
	slowConsumerWait = 5 * time.Second
	// closeGrace is how long a connection waits for the peer's close reply
	// after sending its own close frame.
	closeGrace = time.Second
)

// Options configure a Server. DefaultOptions documents every default.
type Options struct {
	// Token, when set, must be presented by every client as
	// "Authorization: Bearer <token>" or "?token=<token>". Serve refuses to
	// run on a non-loopback listener without one.
	Token string

	// AllowOrigins lists extra browser origins ("http://myapp.test:8080", or
	// "*" for any) accepted on top of http(s)://localhost, 127.0.0.1 and
	// [::1] on any port. Requests without an Origin header (non-browser
	// clients) are always accepted; the origin "null" never is.
	AllowOrigins []string

	// AllowHosts lists extra Host header names (without port) accepted on
	// top of localhost, 127.0.0.1 and [::1] (DNS rebinding protection).
	AllowHosts []string

	// AutoCreate creates a topic with engine.DefaultTopicConfig on the first
	// produce to it. Default true.
	AutoCreate bool

	// ReadLimit is the largest message accepted from a client; a larger one
	// closes the connection with 1009. Default 1 MiB.
	ReadLimit int64

	// MaxRecordBytes bounds one record (key + value + headers); a larger one
	// is refused with record_too_large. Default 1 MiB.
	MaxRecordBytes int

	// MaxConns caps concurrent websocket connections; one more is closed
	// with 1013 and a reason. Default 256.
	MaxConns int

	// MaxInflight caps the requests of one connection (produces and every
	// other op) that wait for their reply; one more is refused with
	// rate_limited. Default 1024.
	MaxInflight int

	// SendQueue is the number of messages (replies and pushes) queued for
	// one connection's writer. Default 16.
	SendQueue int

	// PushRecords and PushBytes bound one subscription push (one engine
	// read). Default 500 records, 256 KiB of record bytes. A read is also
	// at most SendBytes/4 of record bytes, so that a push (its JSON is cut
	// at twice the bytes read) leaves room for a second one in SendBytes.
	PushRecords int
	PushBytes   int

	// SendBytes bounds the bytes of pushes one connection holds: queued
	// for its writer or being built. A subscription reads from the engine
	// only once it has reserved room for the push within this budget, so a
	// client that stops reading costs the server at most this much,
	// whatever its backlog and however many subscriptions it has (a single
	// record larger than the budget still travels, alone). Replies are
	// counted too but never wait for room. Default 512 KiB.
	SendBytes int64

	// SlowConsumerWait is how long a reply or push may wait for room (in
	// a full send queue, or in SendBytes) before the connection is closed
	// with 1013 ("try again later"). Default 5s.
	SlowConsumerWait time.Duration

	// PongWait is how long a connection may stay silent (no message, no
	// pong) before the server takes the peer for gone and closes it with
	// 1001; the server pings at 9/10 of it. Default 60 s.
	PongWait time.Duration

	// Metrics, when set, is served at GET /metrics on the same listener,
	// behind the same Host and token checks (pulse serve mounts the
	// Prometheus registry of package metrics there).
	Metrics http.Handler

	// Logger receives one line per refused handshake and per connection
	// closed for a reason other than the client's. Nil discards.
	Logger *slog.Logger
}

// DefaultOptions returns the options `pulse serve` runs with.
func DefaultOptions() Options {
	return Options{
		AutoCreate:       true,
		ReadLimit:        maxMessageSize,
		MaxRecordBytes:   1 << 20,
		MaxConns:         256,
		MaxInflight:      1024,
		SendQueue:        16,
		PushRecords:      500,
		PushBytes:        256 << 10,
		SendBytes:        512 << 10,
		SlowConsumerWait: slowConsumerWait,
		PongWait:         pongWait,
	}
}

// withDefaults fills zero fields (except booleans) with their defaults.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.ReadLimit <= 0 {
		o.ReadLimit = d.ReadLimit
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = d.MaxRecordBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = d.MaxConns
	}
	if o.MaxInflight <= 0 {
		o.MaxInflight = d.MaxInflight
	}
	if o.SendQueue <= 0 {
		o.SendQueue = d.SendQueue
	}
	if o.PushRecords <= 0 {
		o.PushRecords = d.PushRecords
	}
	if o.PushBytes <= 0 {
		o.PushBytes = d.PushBytes
	}
	if o.SendBytes <= 0 {
		o.SendBytes = d.SendBytes
	}
	if o.PongWait <= 0 {
		o.PongWait = d.PongWait
	}
	if o.SlowConsumerWait <= 0 {
		o.SlowConsumerWait = d.SlowConsumerWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
