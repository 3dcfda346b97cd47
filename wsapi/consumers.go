package wsapi

import (
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// consumerLister is the backend's Consumers (*engine.Engine has it).
type consumerLister interface {
	Consumers(topic string) ([]engine.ConsumerInfo, error)
}

// memberLister is the backend's ConsumerMembers (*engine.Engine has it).
type memberLister interface {
	ConsumerMembers(consumer string) []engine.ConsumerMember
}

// consumerDeleter is the backend's DeleteConsumer (*engine.Engine has it).
type consumerDeleter interface {
	DeleteConsumer(consumer, topic string, dryRun bool) ([]engine.ConsumerInfo, error)
}

func (c *conn) opConsumers(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	cl, ok := c.srv.b.(consumerLister)
	if !ok {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeUnknownOp, "consumers: this server does not list cursors"))
		return
	}
	cs, err := cl.Consumers(req.Topic)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	out := wire.TopicConsumers{Name: req.Topic, Consumers: make([]wire.ConsumerCursor, 0, len(cs))}
	names := map[string]bool{}
	if req.Consumer != "" {
		names[req.Consumer] = true
	}
	for _, ci := range cs {
		if req.Consumer != "" && ci.Consumer != req.Consumer {
			continue
		}
		names[ci.Consumer] = true
		out.Consumers = append(out.Consumers, wire.ConsumerCursor{Consumer: ci.Consumer, Partition: ci.Partition, Offset: ci.Offset, Lag: ci.Lag})
	}
	if ml, ok := c.srv.b.(memberLister); ok {
		for n := range names {
			if ms := ml.ConsumerMembers(n); len(ms) > 0 {
				if out.Members == nil {
					out.Members = map[string][]engine.ConsumerMember{}
				}
				out.Members[n] = ms
			}
		}
	}
	c.replyJSON(req.ID, "topic", out)
}

// opDeleteConsumer deletes a consumer's cursors:
// {"op":"delete_consumer","consumer":"billing","topic":"orders","dry_run":true};
// topic is optional (every topic), dry_run lists without deleting.
func (c *conn) opDeleteConsumer(req *request, msg []byte) {
	if req.Consumer == "" {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeInvalidRequest, `delete_consumer needs "consumer"`))
		return
	}
	if req.Topic != "" {
		if e := validTopic(req.Topic); e != nil {
			c.reply(req.ID, nil, e)
			return
		}
	}
	del, ok := c.srv.b.(consumerDeleter)
	if !ok {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeUnknownOp, "delete_consumer: this server cannot delete consumers"))
		return
	}
	var body struct {
		DryRun bool `json:"dry_run"`
	}
	if e := decodeOpFields(msg, "", &body); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	cs, err := del.DeleteConsumer(req.Consumer, req.Topic, body.DryRun)
	if err != nil {
		c.reply(req.ID, nil, toError(err)) // a bad name: invalid_request
		return
	}
	c.replyJSON(req.ID, "consumer", wire.DeletedConsumer{Name: req.Consumer, DryRun: body.DryRun, Cursors: cs})
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
	if e := decodeOpFields(msg, "", &body); e != nil {
		c.reply(req.ID, nil, e)
		return
	}
	if body.Timestamp == nil || req.Partition == nil {
		c.reply(req.ID, nil, wire.Errorf(wire.CodeInvalidRequest, `offset_for_time needs "partition" and "timestamp" (Unix ms)`))
		return
	}
	off, err := c.srv.b.OffsetForTimestamp(req.Topic, *req.Partition, *body.Timestamp)
	if err != nil {
		c.reply(req.ID, nil, toError(err))
		return
	}
	c.replyJSON(req.ID, "offset", off)
}
