package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kerr"
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
