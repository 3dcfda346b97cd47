package wire

import (
	"fmt"

	"github.com/pulselog/pulse/engine"
)

// Error codes carried in {"error":{"code":..,"message":..}} replies. They are
// part of the protocol (docs/websocket.md lists them) and never change meaning.
const (
	CodeInvalidJSON         = "invalid_json"           // the frame is not a JSON object
	CodeInvalidRequest      = "invalid_request"        // a field is missing or has a bad value
	CodeUnknownOp           = "unknown_op"             // "op" names no operation
	CodeInvalidTopic        = "invalid_topic"          // topic name breaks the naming rule
	CodeTopicNotFound       = "topic_not_found"        // no such topic (and auto-create is off, or not a produce)
	CodeTopicExists         = "topic_exists"           // create_topic on an existing topic
	CodeInvalidConfig       = "invalid_config"         // create_topic with a bad configuration
	CodePartitionOutOfRange = "partition_out_of_range" // partition >= the topic's partition count, or < 0
	CodeOffsetOutOfRange    = "offset_out_of_range"    // offset before the log start or past the log end
	CodeRecordTooLarge      = "record_too_large"       // a record exceeds the record size limit
	CodeTooManyTopics       = "too_many_topics"        // creating the topic would pass the data dir's topic or partition cap
	CodeUnknownSubscription = "unknown_subscription"   // unsubscribe/commit naming no live subscription
	CodeRateLimited         = "rate_limited"           // too many produce requests awaiting their ack
	CodeShuttingDown        = "shutting_down"          // the server is stopping and takes no new requests
	CodeInternal            = "internal"               // anything else: the message says what failed
)

// Error codes of the consumer operations (docs/websocket.md).
const (
	CodeConsumerNotFound = "consumer_not_found" // delete_consumer of a consumer without a cursor (on the topic named)
	CodeConsumerActive   = "consumer_active"    // delete_consumer of a Kafka group with live members (Kafka's NON_EMPTY_GROUP)
)

// Error is an error reply of the protocol. The client returns it for every
// request the server refused; Code is one of the Code* constants.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Stored is set by the client for a produce that failed after some of
	// its records were stored (docs/websocket.md, "produce"): one element
	// per record of the request, the ack of a stored record, nil for a
	// record that was not stored.
	Stored []*engine.Ack `json:"-"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds a protocol error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
