package wsclient

import (
	"context"
	"encoding/json"

	"github.com/pulselog/pulse/wsapi/wire"
)

// AlterTopic changes the fields of a topic's configuration that a sets
// and returns the topic as it now is.
func (c *Client) AlterTopic(ctx context.Context, topic string, a wire.TopicAlter) (wire.TopicInfo, error) {
	env, err := c.call(ctx, map[string]any{"op": "alter_topic", "topic": topic, "alter": a})
	if err != nil {
		return wire.TopicInfo{}, err
	}
	var t wire.TopicInfo
	return t, json.Unmarshal(env.Topic, &t)
}
