// Package wsapi is the server of Pulse's websocket API (docs/websocket.md).
//
// A Server serves a Backend (*engine.Engine satisfies it) on three
// endpoints: GET /v1/ws, a multiplexed JSON protocol (produce, subscribe,
// unsubscribe, commit, topics, describe, create_topic, delete_topic), and
// GET /v1/topics/{topic}/produce and /tail, one record per frame. The same
// listener serves plain HTTP for curl and browsers (docs/http.md): POST and
// GET /v1/topics/{topic}/records (http_records.go), Server-Sent Events at
// GET /v1/topics/{topic}/events (sse.go), and Options.Metrics at
// GET /metrics. Every endpoint passes the same admission (admit,
// admitBrowser in server.go).
//
// Each connection has one read pump (the goroutine serving the request),
// which decodes and validates requests, and one write pump, the
// connection's only writer, fed by a bounded queue. A worker executes and
// answers every request of the connection in the order it was read (so
// replies come in request order), merging produces already waiting for the
// same partition into one engine call, and never running a failed call
// again. Each subscription runs one goroutine per partition, parked on the
// engine's NotifyC channel between reads; it reads only after reserving
// room for the push in the connection's byte budget (Options.SendBytes), so
// a client that does not read leaves its backlog on disk, and is closed
// with 1013 once no room came for Options.SlowConsumerWait. A subscription
// made with "format":"binary" sends binary pushes instead of JSON ones
// (pushbin.go), under the same rules.
//
// Handshakes are checked before the upgrade: the Host header (DNS
// rebinding), the token when one is configured, and the browser Origin
// (cross-site websocket hijacking). Serve refuses a non-loopback listener
// without a token.
//
// The Go client is package wsapi/wsclient, which imports nothing of this
// package. What both sides share is package wsapi/wire: the messages and
// error codes, the subscribe position grammar, the binary frame's records
// and the binary push,
// the strict JSON reader (this package's request fast path, fastjson.go,
// reads with it) and the writers of the acks and records the client parses.
// This package turns wire types into engine types and back (wire.go:
// toRecord, engineConfig, wireTopic; alter.go: applyAlter).
package wsapi
