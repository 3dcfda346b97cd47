package kafka

import (
	"context"
	"log/slog"
	"time"

	"github.com/pulselog/pulse/engine"
)

// Options configure a Server. DefaultOptions documents every default.
type Options struct {
	// AutoCreate creates a missing topic (engine.DefaultTopicConfig) when a
	// Metadata request allows it or a Produce names it, as Kafka's
	// auto.create.topics.enable.
	AutoCreate bool // default true

	// MaxRequestBytes bounds one request frame; a larger one closes the
	// connection before its body is read (Kafka's socket.request.max.bytes).
	MaxRequestBytes int // default 100 MiB

	// MaxRecordsBytes bounds the decompressed records of one batch.
	MaxRecordsBytes int // default 64 MiB

	// MaxConns bounds concurrent connections; further ones are closed at
	// accept.
	MaxConns int // default 1024

	// Advertise is the host:port announced in Metadata and FindCoordinator;
	// empty means the listener's own address (127.0.0.1 and its port for a
	// listener on every interface, whose own address no client can dial).
	Advertise string

	// IdleTimeout closes a connection that sends nothing for this long
	// (Kafka's connections.max.idle.ms); FrameTimeout bounds receiving the
	// rest of a frame once its size arrived, and writing a response.
	IdleTimeout  time.Duration // default 10m
	FrameTimeout time.Duration // default 1m

	// Records, when set, is what produces and fetches go through instead
	// of the engine itself: the engine wrapped by something that counts
	// them (internal/metrics's Backend), so that /metrics counts Kafka
	// traffic like the websocket API's. Fetches read through it when it
	// is a ReadCounter, else through the engine.
	Records RecordPath

	// MaxFetchWait caps a Fetch request's max_wait_ms.
	MaxFetchWait time.Duration // default 30s

	// Logger receives connection-level problems. Nil discards.
	Logger *slog.Logger
}

// DefaultOptions returns the options Pulse serves the Kafka protocol with.
func DefaultOptions() Options {
	return Options{
		AutoCreate:      true,
		MaxRequestBytes: 100 << 20,
		MaxRecordsBytes: 64 << 20,
		MaxConns:        1024,
		IdleTimeout:     10 * time.Minute,
		FrameTimeout:    time.Minute,
		MaxFetchWait:    30 * time.Second,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = d.MaxRequestBytes
	}
	if o.MaxRecordsBytes <= 0 {
		o.MaxRecordsBytes = d.MaxRecordsBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = d.MaxConns
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = d.IdleTimeout
	}
	if o.FrameTimeout <= 0 {
		o.FrameTimeout = d.FrameTimeout
	}
	if o.MaxFetchWait <= 0 {
		o.MaxFetchWait = d.MaxFetchWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// RecordPath is the engine's produce and read, as Options.Records wraps
// them.
type RecordPath interface {
	Produce(ctx context.Context, topic string, partition int, recs []engine.Record) ([]engine.Ack, error)
	ProduceIdempotent(ctx context.Context, topic string, partition int, recs []engine.Record, producer engine.ProducerStamp) ([]engine.Ack, error)
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
}

// ReadCounter is what a RecordPath that counts reads also has, so that a
// fetch counts the records of the response it sends, once: a fetch that
// waits for min_bytes reads its partitions again each time it wakes, and
// only its last reads are sent (internal/metrics's Backend has it).
type ReadCounter interface {
	// ReadUncounted is Read without counting the records it returns, nor
	// the offsets it skips in skipped_records (engine.ReadUncounted): the
	// fetch counts those its response passes on with engine.CountSkipped.
	ReadUncounted(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
	// CountRead counts recs as read from topic.
	CountRead(topic string, recs []engine.Record)
}
