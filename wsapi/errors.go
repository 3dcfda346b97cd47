package wsapi

import (
	"context"
	"errors"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// Errors returned by the server, matched with errors.Is. The protocol's
// error replies and their codes are package wire's.
var (
	// ErrTokenRequired is returned by Serve when the listener is not on a
	// loopback address and Options.Token is empty.
	ErrTokenRequired = errors.New("a token is required when listening on a non-loopback address")
	// ErrServerClosed is returned by Serve after Shutdown or Close.
	ErrServerClosed = errors.New("websocket server closed")
)

// toError maps an engine error to the protocol error sent to the client.
// Sentinels of package engine are matched with errors.Is; anything unknown is
// CodeInternal with the error's text.
func toError(err error) *wire.Error {
	var pe *wire.Error
	if errors.As(err, &pe) {
		return pe
	}
	code := wire.CodeInternal
	switch {
	case errors.Is(err, engine.ErrInvalidTopic):
		code = wire.CodeInvalidTopic
	case errors.Is(err, engine.ErrTopicNotFound):
		code = wire.CodeTopicNotFound
	case errors.Is(err, engine.ErrTopicExists):
		code = wire.CodeTopicExists
	case errors.Is(err, engine.ErrInvalidConfig):
		code = wire.CodeInvalidConfig
	case errors.Is(err, engine.ErrPartitionOutOfRange):
		code = wire.CodePartitionOutOfRange
	case errors.Is(err, engine.ErrOffsetOutOfRange):
		code = wire.CodeOffsetOutOfRange
	case errors.Is(err, engine.ErrRecordTooLarge):
		code = wire.CodeRecordTooLarge
	case errors.Is(err, engine.ErrTooManyTopics):
		code = wire.CodeTooManyTopics
	case errors.Is(err, engine.ErrConsumerNotFound):
		code = wire.CodeConsumerNotFound
	case errors.Is(err, engine.ErrConsumerActive):
		code = wire.CodeConsumerActive
	case errors.Is(err, engine.ErrInvalidConsumer):
		code = wire.CodeInvalidRequest // a bad name in the request
	case errors.Is(err, context.Canceled), errors.Is(err, ErrServerClosed):
		code = wire.CodeShuttingDown
	}
	return &wire.Error{Code: code, Message: err.Error()}
}
