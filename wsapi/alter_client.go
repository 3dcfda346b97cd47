package wsapi

import (
	"context"
	"encoding/json"
)

// AlterTopic changes the fields of a topic's configuration that a sets
// and returns the topic as it now is.
func (c *Client) AlterTopic(ctx context.Context, topic string, a TopicAlter) (TopicInfo, error) {
	env, err := c.call(ctx, map[string]any{"op": "alter_topic", "topic": topic, "alter": a})
	if err != nil {
		return TopicInfo{}, err
	}
	var t TopicInfo
	return t, json.Unmarshal(env.Topic, &t)
}
