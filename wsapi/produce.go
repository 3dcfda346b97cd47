package wsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/wsapi/wire"
)

// maxRequestRecords caps the records of one produce request, which bounds
// its ack reply too.
const maxRequestRecords = 10000

// Bounds of one engine call made of merged produce requests.
const (
	mergeMaxRecords = 1000
	mergeMaxBytes   = 1 << 20
)

// produceJob is one accepted produce request, waiting for the connection's
// produce worker.
type produceJob struct {
	id     json.RawMessage
	topic  string
	units  []produceUnit // runs of consecutive records sharing a partition
	single bool          // reply with flat fields (one inline record)
	plain  bool          // /v1/topics/{topic}/produce: reply without id
	bytes  int
	// run, when set, is a request other than a produce (or an error
	// reply): the worker runs it in its turn instead of producing.
	run func()
	// unit0 and rec0 hold the units and records of a job of one run and
	// one record (the single-record request), saving two allocations.
	unit0 [1]produceUnit
	rec0  [1]engine.Record
	// acks, stored and err are the job's share of the results of the
	// merged engine call it was part of (runProduce).
	acks   []engine.Ack
	stored []bool
	err    error
}

// produceUnit is a run of records for one partition (-1: engine's choice).
type produceUnit struct {
	partition int
	recs      []engine.Record
}

func (j *produceJob) records() int {
	n := 0
	for _, u := range j.units {
		n += len(u.recs)
	}
	return n
}

// opProduce validates a produce request entirely (nothing reaches the engine
// when any record is bad) and queues it for the produce worker.
func (c *conn) opProduce(req *request) {
	if e := validTopic(req.Topic); e != nil {
		c.refuseInOrder(req.ID, e)
		return
	}
	job := &produceJob{id: req.ID, topic: req.Topic}
	ins := req.Records
	var one [1]wire.RecordIn
	if len(ins) == 0 {
		if req.Records != nil && !req.RecordIn.HasRecordFields() {
			c.refuseInOrder(req.ID, wire.Errorf(wire.CodeInvalidRequest, `"records" is empty: a produce takes 1 to %d records`, maxRequestRecords))
			return
		}
		if !req.RecordIn.HasValue() {
			c.refuseInOrder(req.ID, wire.Errorf(wire.CodeInvalidRequest, `produce needs a record ("value", "value_b64" or "tombstone") or "records": [...]`))
			return
		}
		one[0] = req.RecordIn
		one[0].Partition = req.Partition
		ins = one[:]
		job.single = true
	} else if req.RecordIn.HasRecordFields() {
		c.refuseInOrder(req.ID, wire.Errorf(wire.CodeInvalidRequest, `produce has both "records" and fields of an inline record (value, value_b64, tombstone, key, key_b64, headers, headers_b64): put them in each record; only "partition" applies to every record`))
		return
	} else if len(ins) > maxRequestRecords {
		c.refuseInOrder(req.ID, wire.Errorf(wire.CodeInvalidRequest, "%d records in one request: at most %d", len(ins), maxRequestRecords))
		return
	}
	if e := job.addRecords(ins, req.Partition, c.srv.opts.MaxRecordBytes); e != nil {
		c.refuseInOrder(req.ID, e)
		return
	}
	c.submit(job)
}

// addRecords validates ins, the records of one produce (a websocket
// produce or a POST), and adds them to job in runs of consecutive records
// sharing a partition: a record's own partition, else partition (the
// request's, or the POST's query), else -1 (the engine's choice). A
// partition given and negative, or a record toRecord refuses, is the
// error, naming the record by its place unless the job is a single inline
// record (a negative partition: only when it is the record's own); then
// job holds nothing of use.
func (job *produceJob) addRecords(ins []wire.RecordIn, partition *int, maxRecordBytes int) *wire.Error {
	for i := range ins {
		p := -1
		switch {
		case ins[i].Partition != nil:
			p = *ins[i].Partition
		case partition != nil:
			p = *partition
		}
		if p < 0 && (ins[i].Partition != nil || partition != nil) {
			e := wire.Errorf(wire.CodePartitionOutOfRange, "partition %d is negative", p)
			if !job.single && ins[i].Partition != nil {
				// The record's own partition, not the request's.
				e = wire.Errorf(e.Code, "record %d: %s", i, e.Message)
			}
			return e
		}
		rec, err := toRecord(&ins[i], maxRecordBytes)
		if err != nil {
			e := toError(err)
			if !job.single {
				e = wire.Errorf(e.Code, "record %d: %s", i, e.Message)
			}
			return e
		}
		job.bytes += len(rec.Key) + len(rec.Value)
		if n := len(job.units); n > 0 && job.units[n-1].partition == p {
			job.units[n-1].recs = append(job.units[n-1].recs, rec)
			continue
		}
		// The first run is sized for the usual case, every record in
		// it; later runs (mixed partitions) grow as needed.
		var recs []engine.Record
		switch {
		case i == 0 && len(ins) == 1:
			recs = job.rec0[:1:1]
		case i == 0:
			recs = make([]engine.Record, 1, len(ins))
		default:
			recs = make([]engine.Record, 1)
		}
		recs[0] = rec
		if len(job.units) == 0 {
			job.units = job.unit0[:0:1]
		}
		job.units = append(job.units, produceUnit{partition: p, recs: recs})
	}
	return nil
}

// handleBinary runs a binary produce frame of /v1/ws (binary.go): the same
// checks as opProduce, then the same produce queue.
func (c *conn) handleBinary(msg []byte) {
	req, recs, size, e := decodeBinaryProduce(msg, c.srv.opts.MaxRecordBytes)
	var id json.RawMessage
	if req != nil {
		id = req.ID
	}
	if e == nil && c.isDraining() {
		e = wire.Errorf(wire.CodeShuttingDown, "server shutting down: produce refused")
	}
	if e == nil {
		e = validTopic(req.Topic)
	}
	p := -1
	if e == nil && req.Partition != nil {
		if p = *req.Partition; p < 0 {
			e = wire.Errorf(wire.CodePartitionOutOfRange, "partition %d is negative", p)
		}
	}
	if e != nil {
		if e.Code == wire.CodeShuttingDown {
			c.reply(id, nil, e)
		} else {
			c.refuseInOrder(id, e)
		}
		return
	}
	c.submit(&produceJob{id: id, topic: req.Topic, units: []produceUnit{{partition: p, recs: recs}}, bytes: size})
}

// produceWorker answers requests in the order they were accepted. It takes
// every produce job already queued (up to mergeMaxRecords records and
// mergeMaxBytes bytes together) and runs them as one burst (runProduce):
// jobs for one topic and partition become one engine call (one batch, one
// fsync), and the calls for different partitions run concurrently, since
// each partition has a writer of its own. A request other than a produce
// (job.run) and a produce spanning several partitions are barriers: they
// run alone, after everything accepted before them was stored and
// answered, and before anything accepted after them starts. After drain
// closed the queue and every job is answered, it closes the connection
// with 1001.
func (c *conn) produceWorker() {
	var next *produceJob
	for {
		job := next
		next = nil
		if job == nil {
			select {
			case j, ok := <-c.produceQ:
				if !ok {
					c.closeWith(websocket.CloseGoingAway, "server shutting down", true)
					return
				}
				job = j
			case <-c.ctx.Done():
				return
			}
		}
		if job.run != nil {
			job.run()
			c.inflight.Add(-1)
			continue
		}
		batch := []*produceJob{job}
		if len(job.units) == 1 {
			n, size := job.records(), job.bytes
		merge:
			for n < mergeMaxRecords && size < mergeMaxBytes {
				select {
				case j, ok := <-c.produceQ:
					if !ok {
						break merge
					}
					if j.run != nil || len(j.units) != 1 {
						next = j
						break merge
					}
					batch = append(batch, j)
					n += j.records()
					size += j.bytes
				default:
					break merge
				}
			}
		}
		c.runProduce(batch)
	}
}

// produceCall is one engine call of a burst: jobs of one run each, for one
// topic and partition, in acceptance order. Its results are the call's:
// one ack and one stored flag per record, job after job.
type produceCall struct {
	topic     string
	partition int
	jobs      []*produceJob
	acks      []engine.Ack
	stored    []bool
	err       error
}

// produceLane is a sequence of calls one goroutine makes in order.
type produceLane struct {
	calls []*produceCall
}

// laneKey names a lane: a topic and partition, or (partition -1) every
// job of a topic when one of them lets the engine pick partitions.
type laneKey struct {
	topic     string
	partition int
}

// planBurst splits batch (jobs of one run each) into lanes that may run
// concurrently without reordering any partition's records. Jobs naming the
// same topic and partition form one call. A topic with a job that lets the
// engine pick (partition -1) gets one lane for all its jobs, in acceptance
// order, merging only consecutive jobs for the same partition: the engine
// may put a -1 record on any partition, so none of them may overtake
// another.
func planBurst(batch []*produceJob) []*produceLane {
	var anyPicks map[string]bool
	for _, j := range batch {
		if j.units[0].partition < 0 {
			if anyPicks == nil {
				anyPicks = map[string]bool{}
			}
			anyPicks[j.topic] = true
		}
	}
	lanes := make([]*produceLane, 0, 4)
	byKey := make(map[laneKey]*produceLane, 4)
	for _, j := range batch {
		p := j.units[0].partition
		k := laneKey{j.topic, p}
		if anyPicks[j.topic] {
			k.partition = -1
		}
		l := byKey[k]
		if l == nil {
			l = &produceLane{}
			byKey[k] = l
			lanes = append(lanes, l)
		}
		if n := len(l.calls); n > 0 && l.calls[n-1].partition == p {
			l.calls[n-1].jobs = append(l.calls[n-1].jobs, j)
			continue
		}
		l.calls = append(l.calls, &produceCall{topic: j.topic, partition: p, jobs: []*produceJob{j}})
	}
	return lanes
}

// runProduce makes the engine calls of batch and answers every job, in
// acceptance order. A batch of one job runs alone (runJob: it may span
// partitions). Otherwise the lanes of planBurst run concurrently, and the
// replies leave once all are done. A merged call that fails is never run
// again job by job: its records may be partly stored (an
// *engine.PartialError says which), and running them again would store
// them twice. Each job is answered with exactly what of it was stored.
func (c *conn) runProduce(batch []*produceJob) {
	defer c.inflight.Add(-int64(len(batch)))
	if len(batch) == 1 {
		acks, stored, err := c.srv.runJob(batch[0])
		c.answer(batch[0], acks, stored, err)
		return
	}
	lanes := planBurst(batch)
	var wg sync.WaitGroup
	for _, l := range lanes[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, pc := range l.calls {
				c.runCall(pc)
			}
		}()
	}
	for _, pc := range lanes[0].calls {
		c.runCall(pc)
	}
	wg.Wait()

	// Each job's share of its call's results.
	records := 0
	for _, l := range lanes {
		for _, pc := range l.calls {
			acks, stored := pc.acks, pc.stored
			for _, j := range pc.jobs {
				k := len(j.units[0].recs)
				records += k
				j.acks, j.stored, j.err = nil, stored[:k], pc.err
				if len(acks) >= k {
					j.acks, acks = acks[:k], acks[k:]
				}
				stored = stored[k:]
			}
		}
	}
	// The replies leave as one queued message of one frame each: the
	// write pump takes them at once, whatever the send queue's length.
	frames := make([]byte, 0, len(batch)*(80+len(batch[0].id))+records*56)
	var reply []byte
	for _, j := range batch {
		reply = appendAnswer(reply[:0], j, j.acks, j.stored, j.err)
		frames = append(appendTextFrame(frames, len(reply)), reply...)
	}
	c.enqueueFrames(frames)
}

// runCall makes the engine call of pc and records its results.
func (c *conn) runCall(pc *produceCall) {
	recs := pc.jobs[0].units[0].recs
	if len(pc.jobs) > 1 {
		n := 0
		for _, j := range pc.jobs {
			n += len(j.units[0].recs)
		}
		recs = make([]engine.Record, 0, n)
		for _, j := range pc.jobs {
			recs = append(recs, j.units[0].recs...)
		}
	}
	acks, err := c.srv.produce(pc.topic, pc.partition, recs)
	pc.stored = storedBy(err, acks, len(recs))
	var pe *engine.PartialError
	switch {
	case errors.As(err, &pe) && len(pe.Acks) == len(recs):
		acks = pe.Acks
	case err == nil && len(acks) != len(recs):
		err = wire.Errorf(wire.CodeInternal, "engine returned %d acks for %d records", len(acks), len(recs))
		acks = nil
	}
	pc.acks, pc.err = acks, err
}

// storedBy says which of n records an engine call that returned err stored:
// all on success, those a *engine.PartialError names, else none.
func storedBy(err error, acks []engine.Ack, n int) []bool {
	stored := make([]bool, n)
	var pe *engine.PartialError
	switch {
	case err == nil && len(acks) == n:
		for i := range stored {
			stored[i] = true
		}
	case errors.As(err, &pe) && len(pe.Stored) == n:
		copy(stored, pe.Stored)
	}
	return stored
}

// runJob runs the engine calls of one job, checking partitions first
// when the job spans several so that none is stored when one is bad. The
// records of each partition (and those left to the partitioner) go to the
// engine in one call, wherever they stand in the request, so that a
// partition stores all of them or none, at contiguous offsets. When a call
// fails after earlier ones stored their records, stored says which records
// of the job were stored (acks holds theirs, in request order) and err is
// the failure.
func (s *Server) runJob(j *produceJob) (acks []engine.Ack, stored []bool, err error) {
	n := j.records()
	if len(j.units) > 1 {
		parts, err := engine.ProducePartitions(s.b, j.topic)
		if err != nil {
			return nil, make([]bool, n), err
		}
		at := 0 // the request's index of u's first record
		for _, u := range j.units {
			if u.partition >= parts {
				return nil, make([]bool, n), wire.Errorf(wire.CodePartitionOutOfRange, "record %d: partition %d of topic %q: the topic has %d", at, u.partition, j.topic, parts)
			}
			at += len(u.recs)
		}
	}
	if len(j.units) == 1 {
		u := j.units[0]
		a, err := s.produce(j.topic, u.partition, u.recs)
		return unitResult(a, err, len(u.recs))
	}
	// Group the runs by partition, in the order partitions first appear;
	// at[i] is the request index of the group's i-th record.
	type group struct {
		partition int
		recs      []engine.Record
		at        []int
	}
	var groups []*group
	byPartition := map[int]*group{}
	i := 0
	for _, u := range j.units {
		g := byPartition[u.partition]
		if g == nil {
			g = &group{partition: u.partition}
			byPartition[u.partition] = g
			groups = append(groups, g)
		}
		for _, r := range u.recs {
			g.recs = append(g.recs, r)
			g.at = append(g.at, i)
			i++
		}
	}
	acks = make([]engine.Ack, n)
	stored = make([]bool, n)
	for _, g := range groups {
		// Nothing after a failure is attempted.
		a, gerr := s.produce(j.topic, g.partition, g.recs)
		a, st, gerr := unitResult(a, gerr, len(g.recs))
		for k, at := range g.at {
			acks[at], stored[at] = a[k], st[k]
		}
		if gerr != nil {
			return acks, stored, gerr
		}
	}
	return acks, stored, nil
}

// unitResult is the outcome of one engine call of n records: one ack per
// record (zero for those not stored), which were stored, and the error.
func unitResult(a []engine.Ack, err error, n int) ([]engine.Ack, []bool, error) {
	st := storedBy(err, a, n)
	var pe *engine.PartialError
	switch {
	case errors.As(err, &pe) && len(pe.Acks) == n:
		a = pe.Acks
	case err == nil && len(a) != n:
		err = wire.Errorf(wire.CodeInternal, "engine returned %d acks for %d records", len(a), n)
		a = make([]engine.Ack, n)
	case err != nil:
		a = make([]engine.Ack, n)
	}
	return a, st, err
}

// produce is one engine call, creating the topic on first produce when
// AutoCreate is on.
func (s *Server) produce(topic string, partition int, recs []engine.Record) ([]engine.Ack, error) {
	acks, err := s.b.Produce(s.ctx, topic, partition, recs)
	if err == nil || !errors.Is(err, engine.ErrTopicNotFound) || !s.opts.AutoCreate {
		return acks, err
	}
	if err := s.autoCreate(topic, partition); err != nil {
		return nil, err
	}
	return s.b.Produce(s.ctx, topic, partition, recs)
}

// autoCreate creates topic with engine.DefaultTopicConfig for a produce or
// a subscribe that names a topic that does not exist yet, when AutoCreate is
// on (a topic created meanwhile is fine). A partition the default
// configuration does not have (partition -1: any) creates nothing.
func (s *Server) autoCreate(topic string, partition int) error {
	if !s.opts.AutoCreate {
		return fmt.Errorf("%w: %s (the server does not create topics on first use)", engine.ErrTopicNotFound, topic)
	}
	return engine.AutoCreate(s.b, topic, partition)
}

// answer queues the reply to job j (appendAnswer).
func (c *conn) answer(j *produceJob, acks []engine.Ack, stored []bool, err error) {
	c.enqueue(appendAnswer(make([]byte, 0, 64+len(j.id)), j, acks, stored, err))
}

// appendAnswer appends the reply to job j (produceReply) to b. The ack of a
// stored single record, the reply sent by the thousand, is written
// directly.
func appendAnswer(b []byte, j *produceJob, acks []engine.Ack, stored []bool, err error) []byte {
	if err == nil && (j.single || j.plain) && len(acks) == 1 && len(stored) == 1 && stored[0] {
		a := acks[0]
		b = append(b, '{')
		if len(j.id) > 0 {
			b = append(b, `"id":`...)
			b = append(b, j.id...)
			b = append(b, ',')
		}
		b = wire.AppendAckFields(b, a.Partition, a.Offset, a.Timestamp)
		return append(b, '}')
	}
	f, e, _ := produceReply(j, acks, stored, err)
	return wire.AppendReply(b, j.id, f, e)
}

// produceReply is the reply to job j: the fields of its acks, or the error,
// with the acks of the records that were stored nonetheless (stored[i]; null
// for the others) when some were. When some were, the error is inside the
// fields, e is nil and partly is the error's code.
func produceReply(j *produceJob, acks []engine.Ack, stored []bool, err error) (f []byte, e *wire.Error, partly string) {
	n, all := 0, len(stored) == j.records()
	for _, s := range stored {
		if s {
			n++
		} else {
			all = false
		}
	}
	switch {
	case err == nil && len(acks) != j.records():
		err = wire.Errorf(wire.CodeInternal, "engine returned %d acks for %d records", len(acks), j.records())
		n = 0
	case err != nil && all && len(acks) == j.records():
		// The call failed for records of other requests only.
		err = nil
	}
	if err != nil {
		var pe *engine.PartialError
		if errors.As(err, &pe) {
			err = pe.Err // the counts in its message are the whole call's
		}
		e = toError(err)
		if n == 0 || len(acks) != j.records() {
			return nil, e, ""
		}
		e = wire.Errorf(e.Code, "%s: %d of the request's %d records were stored (their acks are in \"acks\", null for the others)", e.Message, n, j.records())
		f = wire.AppendErrorField(make([]byte, 0, 96+len(acks)*56), e)
		f = append(f, `,"acks":[`...)
		for i, a := range acks {
			if i > 0 {
				f = append(f, ',')
			}
			if !stored[i] {
				f = append(f, "null"...)
				continue
			}
			f = append(f, '{')
			f = wire.AppendAckFields(f, a.Partition, a.Offset, a.Timestamp)
			f = append(f, '}')
		}
		f = append(f, ']')
		return f, nil, e.Code
	}
	if j.single || j.plain {
		return wire.AppendAckFields(make([]byte, 0, 64), acks[0].Partition, acks[0].Offset, acks[0].Timestamp), nil, ""
	}
	return wire.AppendAcks(make([]byte, 0, 16+len(acks)*56), acks), nil, ""
}

// plainProduce holds the fixed part of records sent on
// /v1/topics/{topic}/produce: the topic, and key and partition from the
// query string.
type plainProduce struct {
	topic     string
	key       []byte
	partition int
}

// startPlainProduce checks the topic and query of a produce endpoint
// connection; a bad one gets an error message and close 1008.
func (c *conn) startPlainProduce(r *http.Request, topic string) {
	if e := validTopic(topic); e != nil {
		c.refuse(e)
		return
	}
	pp := &plainProduce{topic: topic, partition: -1}
	q, e := parseQuery(r)
	if e != nil {
		c.refuse(e)
		return
	}
	if q.Has("key") {
		pp.key = []byte(q.Get("key"))
	}
	if s := q.Get("partition"); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil {
			c.refuse(wire.Errorf(wire.CodeInvalidRequest, "query partition=%q: want a partition number", s))
			return
		}
		if p < 0 {
			c.refuse(wire.Errorf(wire.CodePartitionOutOfRange, "query partition=%d is negative", p))
			return
		}
		pp.partition = p
	}
	c.plain = pp
}

// handlePlainProduce turns one frame into one record. A text frame must be
// UTF-8 (RFC 6455); arbitrary bytes travel in binary frames.
func (c *conn) handlePlainProduce(typ int, msg []byte) {
	if c.plain == nil {
		return // refused at the start; the close is on its way
	}
	if typ == websocket.TextMessage && !utf8.Valid(msg) {
		c.refuseInOrder(nil, wire.Errorf(wire.CodeInvalidJSON, "text frame is not valid UTF-8 (send bytes in a binary frame): nothing stored"))
		return
	}
	job := &produceJob{topic: c.plain.topic, plain: true, bytes: len(msg) + len(c.plain.key)}
	if job.bytes > c.srv.opts.MaxRecordBytes {
		c.refuseInOrder(nil, wire.Errorf(wire.CodeRecordTooLarge, "record of %d bytes exceeds the limit of %d bytes", job.bytes, c.srv.opts.MaxRecordBytes))
		return
	}
	if msg == nil {
		msg = []byte{} // an empty frame is an empty value, not a tombstone
	}
	rec := engine.Record{Key: c.plain.key, Value: msg}
	if typ == websocket.TextMessage {
		if jsonContainer(msg) {
			rec.Attributes = codec.AttrJSONValue // checked: pushes embed it as is
		} else {
			// Text reads back as text: a frame "42" or "null" stays that
			// string. A JSON object or array still reads back as JSON.
			rec.Attributes = engine.AttrTextValue
		}
	}
	job.units = []produceUnit{{partition: c.plain.partition, recs: []engine.Record{rec}}}
	c.submit(job)
}

// jsonContainer reports whether b is a valid JSON object or array.
func jsonContainer(b []byte) bool {
	p := wire.NewParser(b)
	p.SkipWS()
	c := p.Peek()
	return (c == '{' || c == '[') && wire.ValidJSON(b)
}

// refuse sends err as a message and closes the connection with 1008.
func (c *conn) refuse(e *wire.Error) {
	c.reply(nil, nil, e)
	c.closeWith(websocket.ClosePolicyViolation, e.Code+": "+e.Message, true)
}
