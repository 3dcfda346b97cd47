package wsapi

import (
	"context"
	"errors"
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

// Errors returned by the server and the client, matched with errors.Is.
var (
	// ErrTokenRequired is returned by Serve when the listener is not on a
	// loopback address and Options.Token is empty.
	ErrTokenRequired = errors.New("a token is required when listening on a non-loopback address")
	// ErrServerClosed is returned by Serve after Shutdown or Close.
	ErrServerClosed = errors.New("websocket server closed")
	// ErrNotRunning is returned by Dial when nothing listens at the address.
	ErrNotRunning = errors.New("no pulse running")
	// ErrClientClosed is returned by client calls after the connection ended.
	ErrClientClosed = errors.New("connection closed")
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

// errorf builds a protocol error with a formatted message.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// toError maps an engine error to the protocol error sent to the client.
// Sentinels of package engine are matched with errors.Is; anything unknown is
// CodeInternal with the error's text.
func toError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	code := CodeInternal
	switch {
	case errors.Is(err, engine.ErrInvalidTopic):
		code = CodeInvalidTopic
	case errors.Is(err, engine.ErrTopicNotFound):
		code = CodeTopicNotFound
	case errors.Is(err, engine.ErrTopicExists):
		code = CodeTopicExists
	case errors.Is(err, engine.ErrInvalidConfig):
		code = CodeInvalidConfig
	case errors.Is(err, engine.ErrPartitionOutOfRange):
		code = CodePartitionOutOfRange
	case errors.Is(err, engine.ErrOffsetOutOfRange):
		code = CodeOffsetOutOfRange
	case errors.Is(err, engine.ErrRecordTooLarge):
		code = CodeRecordTooLarge
	case errors.Is(err, engine.ErrTooManyTopics):
		code = CodeTooManyTopics
	case errors.Is(err, context.Canceled), errors.Is(err, ErrServerClosed):
		code = CodeShuttingDown
	}
	return &Error{Code: code, Message: err.Error()}
}
