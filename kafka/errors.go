package kafka

import "errors"

// Errors of the listener, matched with errors.Is.
var (
	// ErrServerClosed is returned by Serve after Close.
	ErrServerClosed = errors.New("kafka: server closed")

	// Framing: a connection that sends one of these is closed.
	ErrRequestTooLarge = errors.New("kafka: request larger than the request size limit")
	ErrBadFrame        = errors.New("kafka: malformed request")
	ErrUnknownKey      = errors.New("kafka: unknown or unserved API key")

	// Record batches.
	ErrCorruptBatch = errors.New("kafka: corrupt record batch")
	ErrBadCRC       = errors.New("kafka: record batch CRC mismatch")
	ErrUnsupported  = errors.New("kafka: unsupported record batch feature")
	ErrTooLarge     = errors.New("kafka: records larger than the limit")
)
