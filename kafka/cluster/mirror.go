package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers every mirrored record carries, so that a record on the cluster
// names the local record it copies, and a restarted mirror finds where it
// stopped even when its last cursor commit was lost.
const (
	HeaderMirrorPartition = "pulse-mirror-partition"
	HeaderMirrorOffset    = "pulse-mirror-offset"
)

// MirrorSource is the local side of a mirror: the engine facade's reads
// and cursors (*engine.Engine).
type MirrorSource interface {
	Describe(name string) (engine.TopicInfo, error)
	Read(topic string, partition int, from int64, maxRecords, maxBytes int) (engine.ReadResult, error)
	NotifyC(topic string, partition int) (<-chan struct{}, error)
	CommitCursor(consumer, topic string, partition int, offset int64) error
	Cursor(consumer, topic string, partition int) (offset int64, ok bool, err error)
}

// MirrorOptions say what to mirror where.
type MirrorOptions struct {
	Topic   string // local topic
	ToTopic string // cluster topic; default Topic
	// From is where a partition without a cursor starts: "earliest"
	// (default) or "latest".
	From string
	// Cursor names the local consumer cursor the mirror commits after each
	// acked batch; default "mirror:" + ToTopic.
	Cursor string
	// BatchRecords is the most records produced per round trip; default 1000.
	BatchRecords int
	// Progress, when set, is called after each batch with the state.
	Progress func(MirrorStatus)
}

// MirrorStatus is a mirror's position.
type MirrorStatus struct {
	Partitions []MirrorPartition
}

// Lag sums the partitions' lag.
func (s MirrorStatus) Lag() int64 {
	var n int64
	for _, p := range s.Partitions {
		n += p.Lag
	}
	return n
}

// MirrorPartition is one partition of a mirror.
type MirrorPartition struct {
	Partition int
	Next      int64 // next local offset to copy
	HWM       int64 // local high watermark at the last read
	Lag       int64 // HWM − Next
	Copied    int64 // records copied by this run
	Resumed   int64 // offset this run started at
}

// Mirror copies the local topic to the cluster, partition p to partition p
// in offset order, until ctx ends (then it returns nil). Each record keeps
// its key, value, headers and timestamp and gains the two mirror headers.
// A partition resumes from the later of the committed cursor and the
// record after the last one the cluster partition already holds from this
// mirror; records produced but not committed before a crash are therefore
// not copied twice unless the cluster partition has other writers.
func Mirror(ctx context.Context, src MirrorSource, dst *Source, o MirrorOptions) error {
	if o.ToTopic == "" {
		o.ToTopic = o.Topic
	}
	if o.Cursor == "" {
		o.Cursor = "mirror:" + o.ToTopic
	}
	if o.BatchRecords <= 0 {
		o.BatchRecords = 1000
	}
	switch o.From {
	case "", "earliest", "latest":
	default:
		return fmt.Errorf("mirror: --from %q: want earliest or latest", o.From)
	}
	info, err := src.Describe(o.Topic)
	if err != nil {
		return fmt.Errorf("mirror: local topic %q: %w", o.Topic, err)
	}
	n := len(info.Partitions)
	dn, err := dst.partitions(o.ToTopic)
	if errors.Is(err, engine.ErrTopicNotFound) {
		err = dst.CreateTopic(o.ToTopic, engine.TopicConfig{Partitions: n})
		if err == nil || errors.Is(err, engine.ErrTopicExists) {
			dn, err = dst.partitions(o.ToTopic)
		}
	}
	if err != nil {
		return fmt.Errorf("mirror: cluster topic %q: %w", o.ToTopic, err)
	}
	if dn < n {
		return fmt.Errorf("mirror: %w: %q has %d, %q has %d", ErrMirrorPartitions, o.ToTopic, dn, o.Topic, n)
	}

	st := MirrorStatus{Partitions: make([]MirrorPartition, n)}
	var mu sync.Mutex // guards st
	for p := range n {
		start, err := resumePoint(src, dst, o, info.Partitions[p])
		if err != nil {
			return err
		}
		st.Partitions[p] = MirrorPartition{Partition: p, Next: start, Resumed: start, HWM: info.Partitions[p].HWM, Lag: max(0, info.Partitions[p].HWM-start)}
	}
	report := func(p int, next, hwm int64, copied int) {
		mu.Lock()
		mp := &st.Partitions[p]
		mp.Next, mp.HWM, mp.Lag = next, hwm, max(0, hwm-next)
		mp.Copied += int64(copied)
		snap := MirrorStatus{Partitions: append([]MirrorPartition(nil), st.Partitions...)}
		mu.Unlock()
		if o.Progress != nil {
			o.Progress(snap)
		}
	}
	report(0, st.Partitions[0].Next, st.Partitions[0].HWM, 0)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mirrorPartition(ctx, src, dst, o, p, st.Partitions[p].Next, report); err != nil {
				errs <- fmt.Errorf("mirror %s/%d: %w", o.Topic, p, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when every partition stopped on ctx
}

// resumePoint is where partition p starts: the cursor, or From, moved past
// what the cluster partition already holds from this mirror.
func resumePoint(src MirrorSource, dst *Source, o MirrorOptions, pi engine.PartitionInfo) (int64, error) {
	p := pi.Partition
	start := pi.LogStart
	if o.From == "latest" {
		start = pi.HWM
	}
	cur, ok, err := src.Cursor(o.Cursor, o.Topic, p)
	if err != nil {
		return 0, fmt.Errorf("mirror: cursor: %w", err)
	}
	if ok {
		start = cur
	}
	_, hwm, err := dst.offsets(o.ToTopic, p)
	if err != nil {
		return 0, fmt.Errorf("mirror: %w", err)
	}
	if hwm > 0 {
		res, err := dst.Read(o.ToTopic, p, hwm-1, 1, 1<<20)
		if err != nil && !errors.Is(err, engine.ErrOffsetOutOfRange) {
			return 0, fmt.Errorf("mirror: last record of %s/%d: %w", o.ToTopic, p, err)
		}
		for _, r := range res.Records {
			if off, ok := mirroredOffset(r, p); ok && off+1 > start {
				start = off + 1
			}
		}
	}
	return max(start, pi.LogStart), nil
}

// mirrorHeaders are the headers a mirrored copy of local record p/off
// carries; mirroredOffset reads them back.
func mirrorHeaders(p int, off int64) []engine.Header {
	return []engine.Header{
		{Key: HeaderMirrorPartition, Value: []byte(strconv.Itoa(p))},
		{Key: HeaderMirrorOffset, Value: []byte(strconv.FormatInt(off, 10))},
	}
}

// mirroredOffset reads the mirror headers of r: the local offset it copies
// when it copies partition p.
func mirroredOffset(r engine.Record, p int) (int64, bool) {
	var part, off string
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderMirrorPartition:
			part = string(h.Value)
		case HeaderMirrorOffset:
			off = string(h.Value)
		}
	}
	if part != strconv.Itoa(p) {
		return 0, false
	}
	n, err := strconv.ParseInt(off, 10, 64)
	return n, err == nil
}

func mirrorPartition(ctx context.Context, src MirrorSource, dst *Source, o MirrorOptions, p int, next int64, report func(int, int64, int64, int)) error {
	for ctx.Err() == nil {
		ch, err := src.NotifyC(o.Topic, p)
		if err != nil {
			return err
		}
		res, err := src.Read(o.Topic, p, next, o.BatchRecords, 4<<20)
		if errors.Is(err, engine.ErrOffsetOutOfRange) {
			// Retention removed what was to be copied: go on from the log
			// start (the gap is the local log's, reported by its lag).
			info, derr := src.Describe(o.Topic)
			if derr == nil && p < len(info.Partitions) && next < info.Partitions[p].LogStart {
				next = info.Partitions[p].LogStart
				continue
			}
		}
		if err != nil {
			return err
		}
		if len(res.Records) == 0 {
			if res.Next > next {
				next = res.Next
				continue
			}
			report(p, next, res.HWM, 0)
			select {
			case <-ch:
			case <-ctx.Done():
			}
			continue
		}
		if err := produceMirrored(ctx, dst, o.ToTopic, p, res.Records); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		next = res.Next
		if err := src.CommitCursor(o.Cursor, o.Topic, p, next); err != nil {
			return fmt.Errorf("commit cursor: %w", err)
		}
		report(p, next, res.HWM, len(res.Records))
	}
	return nil
}

// produceMirrored produces recs, in order, to partition p of topic with
// acks=all, and returns when all are acked.
func produceMirrored(ctx context.Context, dst *Source, topic string, p int, recs []engine.Record) error {
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		kr := &kgo.Record{Topic: topic, Partition: int32(p), Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		for _, h := range mirrorHeaders(p, r.Offset) {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
		}
		krs[i] = kr
	}
	if err := dst.cl.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		return mapErr(fmt.Sprintf("produce to %s/%d", topic, p), err)
	}
	return nil
}
