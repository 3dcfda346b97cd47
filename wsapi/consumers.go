package wsapi

import (
	"bytes"
	"encoding/json"

	"github.com/pulselog/pulse/engine"
)

// ConsumerCursor is one consumer's committed cursor on one partition.
type ConsumerCursor struct {
	Consumer  string `json:"consumer"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"` // the next offset the consumer reads
	Lag       int64  `json:"lag"`    // HWM minus Offset
}

// TopicConsumers is the reply of a consumers request:
// {"op":"consumers","topic":"orders"} → {"topic":{"name":..,"consumers":[..]}}.
type TopicConsumers struct {
	Name      string           `json:"name"`
	Consumers []ConsumerCursor `json:"consumers"`
}

// consumerLister is the backend's Consumers (*engine.Engine has it).
type consumerLister interface {
	Consumers(topic string) ([]engine.ConsumerInfo, error)
}

func (c *conn) opConsumers(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	cl, ok := c.srv.b.(consumerLister)
	if !ok {
		c.reply(req.ID, nil, errorf(CodeUnknownOp, "consumers: this server does not list cursors"))
		return
	}
	cs, err := cl.Consumers(req.Topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	out := TopicConsumers{Name: req.Topic, Consumers: make([]ConsumerCursor, 0, len(cs))}
	for _, ci := range cs {
		out.Consumers = append(out.Consumers, ConsumerCursor{Consumer: ci.Consumer, Partition: ci.Partition, Offset: ci.Offset, Lag: ci.Lag})
	}
	c.replyJSON(req.ID, "topic", out)
}

// opOffsetForTime answers {"op":"offset_for_time","topic":..,"partition":..,
// "timestamp":ms} with {"offset":N}: the first offset committed at or after
// ms, or the HWM when there is none.
func (c *conn) opOffsetForTime(req *request, msg []byte) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	var body struct {
		Timestamp *int64 `json:"timestamp"`
	}
	if err := json.NewDecoder(bytes.NewReader(msg)).Decode(&body); err != nil || body.Timestamp == nil || req.Partition == nil {
		c.reply(req.ID, nil, errorf(CodeInvalidRequest, `offset_for_time needs "partition" and "timestamp" (Unix ms)`))
		return
	}
	off, err := c.srv.b.OffsetForTimestamp(req.Topic, *req.Partition, *body.Timestamp)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.replyJSON(req.ID, "offset", off)
}
