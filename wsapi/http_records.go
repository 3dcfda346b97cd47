package wsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pulselog/pulse/wsapi/wire"
)

// Plain HTTP endpoints, for curl and scripts (docs/http.md):
//
//	POST /v1/topics/{topic}/records   one record object, an array of them, or NDJSON
//	GET  /v1/topics/{topic}/records   ?from=&limit=&partition= → JSON array
//
// Records have the fields of a websocket produce (RecordIn) and read back
// as websocket pushes write them (wire.AppendRecordJSON); a produce is answered
// with the same acks, once the topic's sync mode promise holds, and creates
// the topic under the same AutoCreate rule.

// Bounds of GET /v1/topics/{topic}/records.
const (
	defaultReadLimit = 100
	maxReadLimit     = maxRequestRecords
	readMaxBytes     = 1 << 20 // one engine read
)

// routeHTTP adds the plain HTTP endpoints to mux.
func (s *Server) routeHTTP(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/topics/{topic}/records", s.postRecords)
	mux.HandleFunc("GET /v1/topics/{topic}/records", s.getRecords)
	mux.HandleFunc("GET /v1/topics/{topic}/events", s.events)
	mux.HandleFunc("OPTIONS /v1/topics/{topic}/{endpoint}", func(w http.ResponseWriter, r *http.Request) {
		methods := "GET"
		if r.PathValue("endpoint") == "records" {
			methods = "GET, POST"
		}
		s.preflight(w, r, methods)
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Metrics == nil {
			http.NotFound(w, r)
			return
		}
		if s.admitBrowser(w, r, "metrics request") {
			s.opts.Metrics.ServeHTTP(w, r)
		}
	})
	// A page scraping /metrics with a token sends Authorization, which its
	// browser asks about first.
	mux.HandleFunc("OPTIONS /metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Metrics == nil {
			http.NotFound(w, r)
			return
		}
		s.preflight(w, r, "GET")
	})
}

// preflight answers a browser's CORS preflight (a page on an allowed
// origin posting application/json, or sending Authorization), on every
// HTTP endpoint, allowing methods (the endpoint's: GET, POST for records).
func (s *Server) preflight(w http.ResponseWriter, r *http.Request, methods string) {
	if !s.checkHost(r) {
		http.Error(w, fmt.Sprintf(hostRefusal, r.Host), http.StatusForbidden)
		return
	}
	if r.Header.Get("Origin") == "" {
		http.Error(w, "OPTIONS is a CORS preflight and needs an Origin header (a browser sends one)", http.StatusForbidden)
		return
	}
	if !s.checkOrigin(r) {
		http.Error(w, fmt.Sprintf(originRefusal, r.Header.Get("Origin")), http.StatusForbidden)
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", methods)
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// httpStatus is the HTTP status an error reply is sent with.
func httpStatus(code string) int {
	switch code {
	case wire.CodeTopicNotFound:
		return http.StatusNotFound
	case wire.CodeTopicExists:
		return http.StatusConflict
	case wire.CodeRecordTooLarge:
		return http.StatusRequestEntityTooLarge
	case wire.CodeRateLimited:
		return http.StatusTooManyRequests
	case wire.CodeShuttingDown:
		return http.StatusServiceUnavailable
	case wire.CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// writeError sends {"error":{"code":..,"message":..}}, the websocket API's
// error object, with the status of its code (or status, when not 0).
func writeError(w http.ResponseWriter, status int, e *wire.Error) {
	if status == 0 {
		status = httpStatus(e.Code)
	}
	b := wire.AppendErrorField([]byte{'{'}, e)
	b = append(b, '}', '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(append(body, '\n'))
}

// bodyFormat is how a POST body is read, from its Content-Type.
type bodyFormat int

const (
	bodyJSON   bodyFormat = iota // one record object or an array of them
	bodyNDJSON                   // one record object per line
)

// postBodyFormat maps a Content-Type to a body format. JSON is read under
// application/json (and +json types), and also under the types a browser
// form or curl -d sends (application/x-www-form-urlencoded, text/plain) and
// with no Content-Type, so that `curl -d '{"value":1}'` works as typed;
// NDJSON only when declared (application/x-ndjson, application/ndjson,
// application/jsonl). Anything else is refused with 415.
func postBodyFormat(contentType string) (bodyFormat, *wire.Error) {
	if contentType == "" {
		return bodyJSON, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return 0, wire.Errorf(wire.CodeInvalidRequest, "Content-Type %q: %v", contentType, err)
	}
	switch {
	case mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/x-www-form-urlencoded", mt == "text/plain":
		return bodyJSON, nil
	case mt == "application/x-ndjson", mt == "application/ndjson", mt == "application/jsonl":
		return bodyNDJSON, nil
	}
	return 0, wire.Errorf(wire.CodeInvalidRequest, "Content-Type %q: send application/json (one record or an array) or application/x-ndjson (one record per line)", mt)
}

// ndjsonHint is what a body of more than one JSON value should be sent as.
const ndjsonHint = "for one record per line, send Content-Type: application/x-ndjson"

// decodeRecordsBody parses a POST body into records; single reports one
// JSON object (answered with one ack, not an array).
func decodeRecordsBody(body []byte, format bodyFormat) (ins []wire.RecordIn, single bool, e *wire.Error) {
	if format == bodyNDJSON {
		line := 0
		for rest := body; len(rest) > 0; {
			var l []byte
			l, rest, _ = bytes.Cut(rest, []byte{'\n'})
			line++
			l = bytes.TrimSpace(l)
			if len(l) == 0 {
				continue
			}
			var r wire.RecordIn
			if e := wire.DecodeRecord(l, &r, fmt.Sprintf("line %d", line), false, "one record per line"); e != nil {
				return nil, false, e
			}
			ins = append(ins, r)
			if len(ins) > maxRequestRecords {
				return nil, false, wire.Errorf(wire.CodeInvalidRequest, "more than %d records in one request", maxRequestRecords)
			}
		}
		if len(ins) == 0 {
			return nil, false, wire.Errorf(wire.CodeInvalidRequest, "the body holds no record (one JSON object per line)")
		}
		return ins, false, nil
	}
	b := bytes.TrimSpace(body)
	switch {
	case len(b) == 0:
		return nil, false, wire.Errorf(wire.CodeInvalidRequest, "empty body: send a record object, an array of them, or NDJSON")
	case b[0] == '{':
		var r wire.RecordIn
		if e := wire.DecodeRecord(b, &r, "body", false, ndjsonHint); e != nil {
			return nil, false, e
		}
		return []wire.RecordIn{r}, true, nil
	case b[0] == '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(b, &raws); err != nil {
			return nil, false, wire.JSONError("body", err)
		}
		if len(raws) == 0 {
			return nil, false, wire.Errorf(wire.CodeInvalidRequest, "empty array: no record to produce")
		}
		if len(raws) > maxRequestRecords {
			return nil, false, wire.Errorf(wire.CodeInvalidRequest, "%d records in one request: at most %d", len(raws), maxRequestRecords)
		}
		ins = make([]wire.RecordIn, len(raws))
		for i, raw := range raws {
			if e := wire.DecodeRecord(raw, &ins[i], fmt.Sprintf("record %d", i), false, ndjsonHint); e != nil {
				return nil, false, e
			}
		}
		return ins, false, nil
	}
	return nil, false, wire.Errorf(wire.CodeInvalidJSON, "body is not a JSON object or array (for one record per line, send Content-Type: application/x-ndjson)")
}

// postRecords is POST /v1/topics/{topic}/records.
func (s *Server) postRecords(w http.ResponseWriter, r *http.Request) {
	if !s.admitBrowser(w, r, "http produce") {
		return
	}
	topic := r.PathValue("topic")
	if e := validTopic(topic); e != nil {
		writeError(w, 0, e)
		return
	}
	q, e := parseQuery(r)
	if e != nil {
		writeError(w, 0, e)
		return
	}
	partition, e := postQuery(q)
	if e != nil {
		writeError(w, 0, e)
		return
	}
	format, e := postBodyFormat(r.Header.Get("Content-Type"))
	if e != nil {
		writeError(w, http.StatusUnsupportedMediaType, e)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.ReadLimit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, wire.Errorf(wire.CodeRecordTooLarge, "request body over the limit of %d bytes", s.opts.ReadLimit))
			return
		}
		writeError(w, 0, wire.Errorf(wire.CodeInvalidRequest, "reading the body: %v", err))
		return
	}
	ins, single, e := decodeRecordsBody(body, format)
	if e != nil {
		writeError(w, 0, e)
		return
	}
	// Validated as a websocket produce is (addRecords): nothing reaches
	// the engine when one record is bad.
	job := &produceJob{topic: topic, single: single}
	if e := job.addRecords(ins, partition, s.opts.MaxRecordBytes); e != nil {
		writeError(w, 0, e)
		return
	}
	if s.isClosing() {
		writeError(w, 0, wire.Errorf(wire.CodeShuttingDown, "server shutting down: produce refused"))
		return
	}
	// The engine calls of a websocket produce: auto-create, and every
	// partition checked before anything is stored (produce.go).
	acks, stored, err := s.runJob(job)
	f, e, partly := produceReply(job, acks, stored, err)
	if e != nil {
		writeError(w, 0, e)
		return
	}
	if partly != "" {
		// Partly stored: the error and the acks of what was stored.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(httpStatus(partly))
		w.Write(append(append(append([]byte{'{'}, f...), '}'), '\n'))
		return
	}
	writeJSON(w, append(append([]byte{'{'}, f...), '}'))
}

// readQuery is the query of the records and events endpoints.
type readQuery struct {
	from      wire.From
	partition *int
	limit     int
}

// parseQuery is r's query string. One that does not parse (a bad percent
// escape) is invalid_request naming it: url.Values from r.URL.Query would
// lack the parameter it spoilt, read as if never given (no key, the
// default from).
func parseQuery(r *http.Request) (url.Values, *wire.Error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "query %q: %v", r.URL.RawQuery, err)
	}
	return q, nil
}

// queryPartition is the partition= of a records or events URL, nil
// without one.
func queryPartition(q url.Values) (*int, *wire.Error) {
	s := q.Get("partition")
	if s == "" {
		return nil, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "partition %q: want a partition number", s)
	}
	return &p, nil
}

// postQuery is the query of a POST: partition= for every record that
// names none of its own (the request-level partition of a websocket
// produce). A key is each record's own: key= is refused, not ignored.
func postQuery(q url.Values) (*int, *wire.Error) {
	if q.Has("key") {
		return nil, wire.Errorf(wire.CodeInvalidRequest, `query key=%q: POST takes each record's key in its JSON ({"key":...,"value":...})`, q.Get("key"))
	}
	p, e := queryPartition(q)
	if e == nil && p != nil && *p < 0 {
		e = wire.Errorf(wire.CodePartitionOutOfRange, "query partition=%d: partition %d is negative", *p, *p)
	}
	return p, e
}

// parseReadQuery reads from (default def), partition and limit.
func parseReadQuery(r *http.Request, def wire.FromKind) (readQuery, *wire.Error) {
	rq := readQuery{from: wire.From{Kind: def}, limit: defaultReadLimit}
	q, e := parseQuery(r)
	if e != nil {
		return rq, e
	}
	if s := q.Get("from"); s != "" {
		f, err := wire.ParseFromText(s)
		if err != nil {
			return rq, toError(err)
		}
		rq.from = f
	}
	p, e := queryPartition(q)
	if e != nil {
		return rq, e
	}
	rq.partition = p
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxReadLimit {
			return rq, wire.Errorf(wire.CodeInvalidRequest, "limit %q: want a number of records from 1 to %d", s, maxReadLimit)
		}
		rq.limit = n
	}
	return rq, nil
}

// getRecords is GET /v1/topics/{topic}/records: at most limit visible
// records as a JSON array, partition by partition in partition order, each
// in offset order. It never waits for records to arrive.
func (s *Server) getRecords(w http.ResponseWriter, r *http.Request) {
	if !s.admitBrowser(w, r, "http read") {
		return
	}
	topic := r.PathValue("topic")
	if e := validTopic(topic); e != nil {
		writeError(w, 0, e)
		return
	}
	rq, e := parseReadQuery(r, wire.FromEarliest)
	if e != nil {
		writeError(w, 0, e)
		return
	}
	starts, err := s.startOffsets(topic, rq.partition, rq.from, "", false)
	if err != nil {
		writeError(w, 0, toError(err))
		return
	}
	out := []byte{'['}
	n := 0
	for _, st := range starts {
		next := st.From
		for n < rq.limit {
			res, err := s.b.Read(topic, st.Partition, next, rq.limit-n, readMaxBytes)
			if err != nil {
				writeError(w, 0, toError(err))
				return
			}
			for i := range res.Records {
				if n > 0 {
					out = append(out, ',')
				}
				out = wire.AppendRecordJSON(out, st.Partition, &res.Records[i])
				n++
			}
			if res.Next <= next { // at the HWM
				break
			}
			next = res.Next
		}
	}
	writeJSON(w, append(out, ']'))
}
