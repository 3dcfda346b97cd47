package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Errors of the package, matched with errors.Is. Errors a cluster returns
// are not among them: mapErr wraps those in the engine's sentinels.
var (
	// Opening a Source (Open).
	ErrNoBrokers   = errors.New("no kafka brokers given")
	ErrBadSASL     = errors.New("bad SASL setting: want mechanism:user:password with mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	ErrBadTLS      = errors.New("bad TLS setting")
	ErrUnreachable = errors.New("kafka cluster unreachable")

	// Running (Source.Unreachable, Produce): the last dial of some of the
	// brokers failed, of others not (ErrUnreachable: of every one).
	ErrBrokerUnreachable = errors.New("kafka broker unreachable")

	// Mirroring (Mirror): the cluster topic has fewer partitions than the
	// local one, so partition numbers cannot be kept.
	ErrMirrorPartitions = errors.New("cluster topic has fewer partitions than the local topic")
	// Mirroring: the cluster topic was deleted, or deleted and created
	// again, while the mirror ran.
	ErrMirrorTopicGone = errors.New("cluster topic is gone")
	// Mirroring through a running Pulse (MirrorFromServer): the cluster
	// is that Pulse's own Kafka listener and the cluster topic the local
	// topic, so the mirror would copy its own copies for good.
	ErrMirrorSelf = errors.New("the cluster topic is the local topic")
)

// mapErr wraps a cluster error in the nearest engine sentinel, so that the
// websocket API answers the same error code it would for the engine, and
// keeps the cluster's message. what says what was being done.
func mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var sentinel error
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		sentinel = engine.ErrTopicNotFound
	case errors.Is(err, kerr.TopicAlreadyExists):
		sentinel = engine.ErrTopicExists
	case errors.Is(err, kerr.InvalidTopicException):
		sentinel = engine.ErrInvalidTopic
	case errors.Is(err, kerr.InvalidPartitions), errors.Is(err, kerr.InvalidReplicationFactor),
		errors.Is(err, kerr.InvalidReplicaAssignment), errors.Is(err, kerr.InvalidConfig),
		errors.Is(err, kerr.PolicyViolation):
		sentinel = engine.ErrInvalidConfig
	case errors.Is(err, kerr.OffsetOutOfRange):
		sentinel = engine.ErrOffsetOutOfRange
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		sentinel = engine.ErrRecordTooLarge
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", what, err)
	}
	if sentinel == nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w: %w", what, sentinel, err)
}
