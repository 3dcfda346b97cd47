// Package kafka serves the Kafka wire protocol on top of a Pulse engine, so
// that existing Kafka clients (kcat, franz-go, kafkajs, Sarama, librdkafka,
// kafka-python) produce to and consume from Pulse unchanged.
//
// Requests and responses are encoded with franz-go's kmsg. Each connection
// is served by one goroutine that reads a size-prefixed request, answers it
// and reads the next, so responses leave in request order as Kafka requires.
// Record batches v2 (and the v0/v1 message sets of old producers) are
// translated into engine records; fetched records are returned as
// uncompressed batches v2 whose timestamps are Pulse's commit times,
// flagged LogAppendTime.
//
// Pulse is the only broker (node 0) and the leader of every partition; its
// advertised address is the listen address (on a listener on every
// interface, the address each connection reached). Consumer groups are coordinated
// in memory by a Coordinator; their committed offsets are Pulse consumer
// cursors in meta.db, the same ones the websocket API's consumers use.
//
// docs/kafka.md lists the served API keys and versions, the error mapping
// and what differs from Kafka.
package kafka
