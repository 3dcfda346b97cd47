package engine

import (
	"context"
	"errors"
)

// PollSource is what LongPoll reads: the engine facade, or any source with
// its method set (a Kafka cluster's, kafka/cluster.Source).
type PollSource interface {
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (ReadResult, error)
	NotifyC(topic string, partition int) (<-chan struct{}, error)
	Describe(name string) (TopicInfo, error)
}

// LongPoll reads partition p of topic from offset from and returns the
// first read that holds records (res.Next is where to read next), parking
// between reads until the HWM moves. It is the long-poll loop of
// docs/architecture.md with its rules written once:
//
//   - the notify channel is taken before each read, so an advance that lands
//     between the read and the wait is never missed;
//   - a read that returns no records but a later Next (a compacted or corrupt
//     range) goes on from there at once;
//   - retention reset: a read that fails with ErrOffsetOutOfRange because
//     from is below the partition's log start (retention deleted it) goes
//     on from the log start, as a Kafka consumer with auto.offset.reset
//     earliest; any other error is returned.
//
// It returns ctx.Err() once ctx ends while it waits.
func LongPoll(ctx context.Context, src PollSource, topic string, p int, from int64, maxRecords, maxBytes int) (ReadResult, error) {
	for {
		ch, err := src.NotifyC(topic, p)
		if err != nil {
			return ReadResult{}, err
		}
		res, err := src.Read(topic, p, from, maxRecords, maxBytes)
		if errors.Is(err, ErrOffsetOutOfRange) {
			if start, ok := RetentionReset(src, topic, p, from); ok {
				from = start
				continue
			}
		}
		if err != nil {
			return ReadResult{}, err
		}
		if len(res.Records) > 0 {
			return res, nil
		}
		if res.Next > from {
			from = res.Next
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ReadResult{}, ctx.Err()
		}
	}
}

// RetentionReset is LongPoll's retention rule for a reader whose read from
// offset from failed with ErrOffsetOutOfRange: when from is below the
// partition's log start, reading goes on from the log start (returned, ok
// true); otherwise the error stands.
func RetentionReset(src interface {
	Describe(name string) (TopicInfo, error)
}, topic string, p int, from int64) (int64, bool) {
	t, err := src.Describe(topic)
	if err != nil || p < 0 || p >= len(t.Partitions) || from >= t.Partitions[p].LogStart {
		return 0, false
	}
	return t.Partitions[p].LogStart, true
}
