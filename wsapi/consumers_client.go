package wsapi

import (
	"context"
	"encoding/json"
)

// Consumers lists the committed cursors of topic, with their lag.
func (c *Client) Consumers(ctx context.Context, topic string) (TopicConsumers, error) {
	env, err := c.call(ctx, map[string]any{"op": "consumers", "topic": topic})
	if err != nil {
		return TopicConsumers{}, err
	}
	var tc TopicConsumers
	return tc, json.Unmarshal(env.Topic, &tc)
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
