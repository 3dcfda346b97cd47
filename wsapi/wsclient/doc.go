// Package wsclient is the Go client of Pulse's websocket API
// (docs/websocket.md), used by the pulse commands, the bench and
// kafka/cluster's mirror.
//
// Dial, then Produce / ProduceAsync / ProduceBytes (binary frames),
// Subscribe, Commit, Topics, Describe, CreateTopic, AlterTopic,
// DeleteTopic, Consumers and DeleteConsumer. A Client is safe for
// concurrent use: requests are matched to replies by id, and pushes are
// routed to their Subscription. Requests are queued for one write pump,
// which writes the frames it finds queued together in one system call (a
// caller with many requests in flight sends them in few writes; a frame
// of 32 KiB or more is written by its caller, with what is queued before
// it); each caller's requests leave in the order it made them.
//
// The messages it sends and reads are package wire's (wire.RecordIn,
// wire.TopicConfig, wire.TopicInfo; a refused request returns a
// *wire.Error). Its fast parsers of the server's acks, pushes and records
// (client_json.go) read exactly the forms wire's writers produce, with
// wire's strict JSON reader, and hand anything else to encoding/json.
// Subscribe asks for value_lens, so that a JSON push's object and array
// values are found by the lengths it gives (checked against the push's
// bytes), not scanned.
// It imports nothing of the server (package wsapi).
package wsclient
