package wsclient

import (
	"context"
	"encoding/json"

	"github.com/pulselog/pulse/wsapi/wire"
)

// Consumers lists the committed cursors of topic, with their lag and the
// live members of the consumers listed.
func (c *Client) Consumers(ctx context.Context, topic string) (wire.TopicConsumers, error) {
	return c.ConsumerOn(ctx, topic, "")
}

// ConsumerOn lists consumer's cursors on topic ("" consumer: every
// consumer's) and its live members, even when it has no cursor there.
func (c *Client) ConsumerOn(ctx context.Context, topic, consumer string) (wire.TopicConsumers, error) {
	req := map[string]any{"op": "consumers", "topic": topic}
	if consumer != "" {
		req["consumer"] = consumer
	}
	env, err := c.call(ctx, req)
	if err != nil {
		return wire.TopicConsumers{}, err
	}
	var tc wire.TopicConsumers
	return tc, json.Unmarshal(env.Topic, &tc)
}

// DeleteConsumer deletes consumer's cursors on topic ("" every topic), or
// with dryRun lists those it would delete.
func (c *Client) DeleteConsumer(ctx context.Context, consumer, topic string, dryRun bool) (wire.DeletedConsumer, error) {
	req := map[string]any{"op": "delete_consumer", "consumer": consumer, "dry_run": dryRun}
	if topic != "" {
		req["topic"] = topic
	}
	env, err := c.call(ctx, req)
	if err != nil {
		return wire.DeletedConsumer{}, err
	}
	var dc wire.DeletedConsumer
	return dc, json.Unmarshal(env.Consumer, &dc)
}

// OffsetForTime returns the first offset of a partition committed at or
// after ms (Unix milliseconds), or its HWM when there is none.
func (c *Client) OffsetForTime(ctx context.Context, topic string, partition int, ms int64) (int64, error) {
	env, err := c.call(ctx, map[string]any{"op": "offset_for_time", "topic": topic, "partition": partition, "timestamp": ms})
	if err != nil {
		return 0, err
	}
	return env.Offset, nil
}
