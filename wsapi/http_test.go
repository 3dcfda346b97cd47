package wsapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// curlRun runs curl with args (after -s) and returns the status and body.
func curlRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	curl := needTool(t, "curl", "the curl tests of the HTTP endpoints")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	args = append([]string{"-s", "-w", "\n%{http_code}"}, args...)
	out, err := exec.CommandContext(ctx, curl, args...).Output()
	if err != nil {
		t.Fatalf("curl %q: %v\n%s", args, err, out)
	}
	s := string(out)
	i := strings.LastIndexByte(s, '\n')
	code, err := strconv.Atoi(s[i+1:])
	if err != nil {
		t.Fatalf("curl %q: no status in %q", args, s)
	}
	return code, s[:i]
}

// decodeJSON parses body into v or fails naming it.
func decodeJSON(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("response %q is not JSON: %v", body, err)
	}
}

func bodyErrCode(t *testing.T, body string) (code, msg string) {
	t.Helper()
	var m struct {
		Error wire.Error `json:"error"`
	}
	decodeJSON(t, body, &m)
	return m.Error.Code, m.Error.Message
}

// TestHTTPRecordsWithCurl produces with `curl -d` (one object, an array,
// NDJSON) and reads the records back with curl.
func TestHTTPRecordsWithCurl(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	u := "http://" + ts.addr + "/v1/topics/clicks/records"

	status, body := curlRun(t, "-d", `{"key":"user-1","value":{"page":"/home"},"headers":{"h":"v"}}`, u)
	var ack engine.Ack
	decodeJSON(t, body, &ack)
	if status != 200 || ack.Offset != 0 || ack.Partition != 0 || ack.Timestamp == 0 {
		t.Fatalf("single produce: %d %s", status, body)
	}
	status, body = curlRun(t, "-H", "Content-Type: application/json", "-d", `[{"value":"two"},{"value":3,"key":"k"}]`, u)
	var acks struct{ Acks []engine.Ack }
	decodeJSON(t, body, &acks)
	if status != 200 || len(acks.Acks) != 2 || acks.Acks[0].Offset != 1 || acks.Acks[1].Offset != 2 {
		t.Fatalf("array produce: %d %s", status, body)
	}
	status, body = curlRun(t, "-H", "Content-Type: application/x-ndjson", "--data-binary", "{\"value\":\"four\"}\n\n{\"value_b64\":\"//79\"}\n", u)
	decodeJSON(t, body, &acks)
	if status != 200 || len(acks.Acks) != 2 || acks.Acks[1].Offset != 4 {
		t.Fatalf("ndjson produce: %d %s", status, body)
	}
	// Acked means stored: the engine holds them.
	ti, err := ts.eng.Describe("clicks")
	if err != nil || ti.Partitions[0].HWM != 5 {
		t.Fatalf("describe after produce: %+v, %v", ti, err)
	}

	status, body = curlRun(t, u+"?from=earliest")
	var recs []map[string]any
	decodeJSON(t, body, &recs)
	if status != 200 || len(recs) != 5 {
		t.Fatalf("read: %d %s", status, body)
	}
	if v := recs[0]["value"].(map[string]any); v["page"] != "/home" || recs[0]["key"] != "user-1" || recs[0]["headers"].(map[string]any)["h"] != "v" {
		t.Fatalf("record 0 reads back as %v", recs[0])
	}
	if recs[1]["value"] != "two" || recs[2]["value"] != float64(3) || recs[3]["value"] != "four" || recs[4]["value_b64"] != "//79" {
		t.Fatalf("records read back as %v", recs)
	}
	for i, r := range recs {
		if r["offset"] != float64(i) {
			t.Fatalf("record %d has offset %v", i, r["offset"])
		}
	}
	all := recs
	recs = nil // later reads decode into fresh records, not into all
	status, body = curlRun(t, u+"?from=3&limit=1&partition=0")
	decodeJSON(t, body, &recs)
	if status != 200 || len(recs) != 1 || recs[0]["offset"] != float64(3) {
		t.Fatalf("from=3&limit=1: %d %s", status, body)
	}
	// from=@ms: the first record committed at or after that time.
	at := all[3]["timestamp"].(float64)
	first := 0
	for all[first]["timestamp"].(float64) < at {
		first++
	}
	status, body = curlRun(t, fmt.Sprintf("%s?from=@%d&limit=1", u, int64(at)))
	decodeJSON(t, body, &recs)
	if status != 200 || len(recs) != 1 || recs[0]["offset"] != float64(first) {
		t.Fatalf("from=@%d: %d %s, want the record at offset %d", int64(at), status, body, first)
	}
	status, body = curlRun(t, u+"?from=latest")
	if status != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("from=latest: %d %s, want []", status, body)
	}
	for _, c := range []struct{ query, code, names string }{
		{"?partition=abc", wire.CodeInvalidRequest, "partition"},
		{"?partition=3", wire.CodePartitionOutOfRange, "partition 3"},
		{"?limit=0", wire.CodeInvalidRequest, "limit"},
		{"?limit=x", wire.CodeInvalidRequest, "limit"},
		{"?from=9", wire.CodeOffsetOutOfRange, "offset 9"},
		{"?from=soon", wire.CodeInvalidRequest, "soon"},
	} {
		status, body = curlRun(t, u+c.query)
		code, msg := bodyErrCode(t, body)
		if status != 400 || code != c.code || !strings.Contains(msg, c.names) {
			t.Errorf("GET %s: %d %s, want 400 %s naming %q", c.query, status, body, c.code, c.names)
		}
	}
	status, body = curlRun(t, "http://"+ts.addr+"/v1/topics/nope/records")
	if code, _ := bodyErrCode(t, body); status != 404 || code != wire.CodeTopicNotFound {
		t.Fatalf("GET of a missing topic: %d %s", status, body)
	}
}

// TestHTTPProduceRefusals: every bad request gets a clear error and stores
// nothing: the topic is not even created.
func TestHTTPProduceRefusals(t *testing.T) {
	ts := startServer(t, Options{AutoCreate: true, ReadLimit: 4 << 10, MaxRecordBytes: 1 << 10})
	u := "http://" + ts.addr + "/v1/topics/bad/records"
	big := strings.Repeat("x", 2<<10)
	for _, c := range []struct {
		name   string
		args   []string
		status int
		code   string
		names  string
	}{
		{"key of the wrong type", []string{"-d", `{"key":5,"value":1}`}, 400, wire.CodeInvalidRequest, `body: field "key": got number, want a string`},
		{"partition as text", []string{"-d", `{"partition":"1","value":1}`}, 400, wire.CodeInvalidRequest, `"partition"`},
		{"array element of the wrong type", []string{"-d", `[{"value":1},{"headers":{"a":1},"value":1}]`}, 400, wire.CodeInvalidRequest, "record 1"},
		{"bad JSON", []string{"-d", `{"value":`}, 400, wire.CodeInvalidJSON, "body"},
		{"not an object", []string{"-d", `"hello"`}, 400, wire.CodeInvalidJSON, "object"},
		{"two objects without ndjson", []string{"-d", `{"value":1} {"value":2}`}, 400, wire.CodeInvalidJSON, "x-ndjson"},
		{"no value", []string{"-d", `{"key":"k"}`}, 400, wire.CodeInvalidRequest, "value"},
		{"empty array", []string{"-d", `[]`}, 400, wire.CodeInvalidRequest, "empty"},
		{"empty body", []string{"-X", "POST"}, 400, wire.CodeInvalidRequest, "empty body"},
		{"negative partition", []string{"-d", `{"partition":-1,"value":1}`}, 400, wire.CodePartitionOutOfRange, "negative"},
		{"partition past the default", []string{"-d", `[{"value":1},{"partition":5,"value":2}]`}, 400, wire.CodePartitionOutOfRange, "record 1: partition 5"},
		{"bad base64", []string{"-d", `{"value_b64":"%%%"}`}, 400, wire.CodeInvalidRequest, "value_b64"},
		{"record too large", []string{"-d", `{"value":"` + big + `"}`}, 413, wire.CodeRecordTooLarge, "limit"},
		{"body too large", []string{"-d", `[{"value":"` + big + `"},{"value":"` + big + `"}]`}, 413, wire.CodeRecordTooLarge, "body"},
		{"unsupported content type", []string{"-H", "Content-Type: application/xml", "-d", `<a/>`}, 415, wire.CodeInvalidRequest, "application/xml"},
		{"bad ndjson line", []string{"-H", "Content-Type: application/x-ndjson", "--data-binary", "{\"value\":1}\n{\"value\":\n"}, 400, wire.CodeInvalidJSON, "line 2"},
		{"ndjson line of the wrong type", []string{"-H", "Content-Type: application/x-ndjson", "--data-binary", "{\"value\":1}\n{\"key\":[1],\"value\":1}\n"}, 400, wire.CodeInvalidRequest, `line 2: field "key": got array, want a string`},
		{"bad topic name", []string{"-d", `{"value":1}`, "http://" + ts.addr + "/v1/topics/a%20b/records"}, 400, wire.CodeInvalidTopic, ""},
		// JSON is UTF-8: a body that is not is refused, as a websocket
		// text frame that is not, rather than stored with U+FFFD in
		// place of its bytes.
		{"value not UTF-8", []string{"-d", "{\"value\":\"caf\xe9\"}"}, 400, wire.CodeInvalidJSON, "body: not valid UTF-8 at byte 13"},
		{"array key not UTF-8", []string{"-d", "[{\"value\":1},{\"key\":\"\xff\",\"value\":2}]"}, 400, wire.CodeInvalidJSON, "record 1: not valid UTF-8 at byte 8"},
		{"ndjson header not UTF-8", []string{"-H", "Content-Type: application/x-ndjson", "--data-binary", "{\"value\":1}\n\n{\"value\":2,\"headers\":{\"h\":\"\xc3\"}}\n"}, 400, wire.CodeInvalidJSON, "line 3: not valid UTF-8 at byte 27"},
	} {
		args := append([]string(nil), c.args...)
		if !strings.HasPrefix(args[len(args)-1], "http://") {
			args = append(args, u)
		}
		status, body := curlRun(t, args...)
		code, msg := bodyErrCode(t, body)
		if status != c.status || code != c.code || !strings.Contains(msg, c.names) {
			t.Errorf("%s: %d %s; want %d %s naming %q", c.name, status, body, c.status, c.code, c.names)
		}
	}
	// A request of one record names no record number: there is one, and
	// "record 0" would suggest a request of several. The same holds over
	// the websocket API; in a request of several the number is there.
	status, body := curlRun(t, "-d", `{"partition":-1,"value":1}`, u)
	if code, msg := bodyErrCode(t, body); status != 400 || code != wire.CodePartitionOutOfRange || msg != "partition -1 is negative" {
		t.Errorf("one record of a negative partition: %d %s, want 400 %s: partition -1 is negative", status, body, wire.CodePartitionOutOfRange)
	}
	ws := dialRaw(t, ts.addr, "/v1/ws", nil)
	for _, c := range []struct{ req, want string }{
		{`{"op":"produce","id":1,"topic":"bad","partition":-1,"value":1}`, "partition -1 is negative"},
		{`{"op":"produce","id":2,"topic":"bad","records":[{"value":1},{"partition":-2,"value":2}]}`, "record 1: partition -2 is negative"},
		// A partition the topic does not have, in a request of several
		// partitions: the first record that names it.
		{`{"op":"produce","id":3,"topic":"bad","records":[{"value":1},{"partition":0,"value":2},{"partition":5,"value":3}]}`, `record 2: partition 5 of topic "bad": the topic has 1`},
	} {
		ws.sendText(c.req)
		reply := ws.next()
		e, _ := reply["error"].(map[string]any)
		if e == nil || e["code"] != wire.CodePartitionOutOfRange || e["message"] != c.want {
			t.Errorf("%s: %v, want %s: %s", c.req, reply, wire.CodePartitionOutOfRange, c.want)
		}
	}

	if _, err := ts.eng.Describe("bad"); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("a refused produce created the topic: %v", err)
	}
	if dirs := topicDirs(t, ts.dir); len(dirs) != 0 {
		t.Fatalf("refused produces left topic directories %v", dirs)
	}

	// With auto-create off, a produce to a missing topic is 404.
	ts2 := startServer(t, Options{AutoCreate: false})
	status, body = curlRun(t, "-d", `{"value":1}`, "http://"+ts2.addr+"/v1/topics/t/records")
	if code, _ := bodyErrCode(t, body); status != 404 || code != wire.CodeTopicNotFound {
		t.Fatalf("produce without auto-create: %d %s", status, body)
	}
}

// TestHTTPOriginHostToken: the websocket handshake's rules hold on every
// HTTP endpoint, and a foreign page cannot post records even with a
// content type that needs no CORS preflight.
func TestHTTPOriginHostToken(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	base := "http://" + ts.addr + "/v1/topics/csrf/"
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/json"} {
		status, body := curlRun(t, "-H", "Origin: http://evil.example", "-H", "Content-Type: "+ct, "-d", `{"value":"forged"}`, base+"records")
		if status != 403 || !strings.Contains(body, "evil.example") {
			t.Errorf("foreign-origin POST as %s: %d %s, want 403 naming the origin", ct, status, body)
		}
	}
	for _, path := range []string{"records", "events"} {
		if status, _ := curlRun(t, "-H", "Origin: https://evil.example", base+path); status != 403 {
			t.Errorf("foreign-origin GET %s: %d, want 403", path, status)
		}
		if status, _ := curlRun(t, "-H", "Origin: null", base+path); status != 403 {
			t.Errorf("Origin null GET %s: %d, want 403", path, status)
		}
		if status, body := curlRun(t, "-H", "Host: attacker.example", base+path); status != 403 || !strings.Contains(body, "DNS rebinding") {
			t.Errorf("foreign Host GET %s: %d %s, want 403", path, status, body)
		}
	}
	if status, _ := curlRun(t, "-H", "Host: attacker.example", "-d", `{"value":1}`, base+"records"); status != 403 {
		t.Errorf("foreign Host POST: %d, want 403", status)
	}
	if status, _ := curlRun(t, "-X", "OPTIONS", "-H", "Origin: http://evil.example", base+"records"); status != 403 {
		t.Errorf("foreign preflight: %d, want 403", status)
	}
	// A preflight without an Origin is no browser's: refused, saying so.
	if status, body := curlRun(t, "-X", "OPTIONS", base+"records"); status != 403 || !strings.Contains(body, "needs an Origin") {
		t.Errorf("preflight without an Origin: %d %q, want 403 saying it needs an Origin", status, body)
	}
	if _, err := ts.eng.Describe("csrf"); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("a refused request created the topic: %v", err)
	}
	// A page on localhost may, and may read the answer (CORS).
	status, body := curlRun(t, "-D", "-", "-H", "Origin: http://localhost:3000", "-H", "Content-Type: text/plain", "-d", `{"value":"ok"}`, base+"records")
	if status != 200 || !strings.Contains(body, "Access-Control-Allow-Origin: http://localhost:3000") {
		t.Fatalf("localhost-origin POST: %d %s", status, body)
	}
	status, body = curlRun(t, "-D", "-", "-X", "OPTIONS", "-H", "Origin: http://127.0.0.1:5173", "-H", "Access-Control-Request-Method: POST", base+"records")
	if status != 204 || !strings.Contains(body, "Access-Control-Allow-Methods: GET, POST") {
		t.Fatalf("localhost preflight: %d %s", status, body)
	}
	// The events endpoint takes only GET, and its preflight says so.
	status, body = curlRun(t, "-D", "-", "-X", "OPTIONS", "-H", "Origin: http://127.0.0.1:5173", "-H", "Access-Control-Request-Method: GET", base+"events")
	if status != 204 || !strings.Contains(body, "Access-Control-Allow-Methods: GET\r\n") {
		t.Fatalf("localhost preflight of events: %d %s", status, body)
	}

	tok := startServer(t, Options{AutoCreate: true, Token: "s3cret"})
	u := "http://" + tok.addr + "/v1/topics/t/records"
	if status, body := curlRun(t, "-d", `{"value":1}`, u); status != 401 || !strings.Contains(body, "token") {
		t.Fatalf("POST without the token: %d %s", status, body)
	}
	if status, _ := curlRun(t, "-H", "Authorization: Bearer wrong", u); status != 401 {
		t.Fatalf("GET with a wrong token: %d", status)
	}
	if status, body := curlRun(t, "-H", "Authorization: Bearer s3cret", "-d", `{"value":1}`, u); status != 200 {
		t.Fatalf("POST with the token: %d %s", status, body)
	}
	if status, body := curlRun(t, u+"?token=s3cret"); status != 200 || !strings.Contains(body, `"offset":0`) {
		t.Fatalf("GET with ?token=: %d %s", status, body)
	}
}

// restartable is a server on a fixed 127.0.0.1 port over a data dir that
// survives restarts of both the server and the engine.
type restartable struct {
	t    *testing.T
	dir  string
	addr string
	eng  *engine.Engine
	srv  *Server
	done chan error
}

func newRestartable(t *testing.T) *restartable {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &restartable{t: t, dir: t.TempDir(), addr: l.Addr().String()}
	r.start(l)
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) start(l net.Listener) {
	r.t.Helper()
	var err error
	if r.eng, err = reopenEngine(r.dir); err != nil {
		r.t.Fatal(err)
	}
	if l == nil {
		if l, err = net.Listen("tcp", r.addr); err != nil {
			r.t.Fatal(err)
		}
	}
	r.srv = New(r.eng, DefaultOptions())
	r.done = make(chan error, 1)
	go func() { r.done <- r.srv.Serve(l) }()
}

func (r *restartable) stop() {
	if r.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		r.t.Errorf("shutdown: %v", err)
	}
	if err := <-r.done; !errors.Is(err, ErrServerClosed) {
		r.t.Errorf("Serve returned %v", err)
	}
	if err := r.eng.Close(); err != nil {
		r.t.Errorf("engine close: %v", err)
	}
	r.srv = nil
}

func (r *restartable) restart() {
	r.stop()
	r.start(nil)
}

// event is one Server-Sent Event as curl prints it.
type event struct{ id, data string }

// curlEvents runs `curl -N` on an event stream and delivers its events.
func curlEvents(t *testing.T, url string, headers ...string) (<-chan event, *exec.Cmd) {
	t.Helper()
	curl := needTool(t, "curl", "the curl tests of the event stream")
	args := []string{"-sN"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	cmd := exec.Command(curl, append(args, url)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan event, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(out)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.id != "" || ev.data != "" {
					ch <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				if ev.data != "" {
					ev.data += "\n"
				}
				ev.data += line[6:]
			}
		}
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return ch, cmd
}

func nextEvent(t *testing.T, ch <-chan event) event {
	t.Helper()
	ctx := testCtx(t)
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event stream ended")
		}
		return ev
	case <-ctx.Done():
		t.Fatal("no event arrived")
	}
	return event{}
}

// TestEventsCurlResumeAfterRestart: `curl -N` follows a topic; after a
// server and engine restart, a stream resumed with the last id the first
// one got delivers exactly the records after it.
func TestEventsCurlResumeAfterRestart(t *testing.T) {
	r := newRestartable(t)
	u := "http://" + r.addr + "/v1/topics/clicks/"
	curlRun(t, "-d", `{"value":{"n":0}}`, u+"records")
	ch, cmd := curlEvents(t, u+"events?from=earliest")
	for i := 1; i < 3; i++ {
		curlRun(t, "-d", fmt.Sprintf(`{"value":{"n":%d}}`, i), u+"records")
	}
	var last string
	for i := 0; i < 3; i++ {
		ev := nextEvent(t, ch)
		var rec map[string]any
		decodeJSON(t, ev.data, &rec)
		if want := fmt.Sprintf("0/%d", i); ev.id != want || rec["offset"] != float64(i) || rec["value"].(map[string]any)["n"] != float64(i) {
			t.Fatalf("event %d: id %q data %s, want id %s", i, ev.id, ev.data, want)
		}
		last = ev.id
	}
	r.restart()
	if _, ok := <-ch; ok {
		t.Fatal("the stream went on after the server stopped")
	}
	cmd.Wait()
	curlRun(t, "-d", `[{"value":{"n":3}},{"value":"line one\nline two"}]`, u+"records")
	ch, _ = curlEvents(t, u+"events?from=earliest", "Last-Event-ID: "+last)
	ev := nextEvent(t, ch)
	if ev.id != "0/3" || !strings.Contains(ev.data, `"n":3`) {
		t.Fatalf("first event after resuming from %s: %+v, want 0/3", last, ev)
	}
	ev = nextEvent(t, ch)
	var rec map[string]any
	decodeJSON(t, ev.data, &rec)
	if ev.id != "0/4" || rec["value"] != "line one\nline two" {
		t.Fatalf("second event: %+v", ev)
	}

	// A stream over several partitions carries every partition's position.
	if err := r.eng.CreateTopic("multi", engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	m := "http://" + r.addr + "/v1/topics/multi/"
	curlRun(t, "-d", `{"partition":1,"value":"a"}`, m+"records")
	curlRun(t, "-d", `{"partition":2,"value":"b"}`, m+"records")
	curlRun(t, "-d", `{"partition":2,"value":"c"}`, m+"records")
	ch, _ = curlEvents(t, m+"events?from=earliest", "Last-Event-ID: 2/0")
	ev = nextEvent(t, ch)
	want := map[string]bool{"0/-1,1/0,2/0": true, "0/-1,1/-1,2/1": true}
	if !want[ev.id] {
		t.Fatalf("first multi-partition event id %q, want one of %v", ev.id, want)
	}
	ev = nextEvent(t, ch)
	if ev.id != "0/-1,1/0,2/1" {
		t.Fatalf("second multi-partition event id %q, want 0/-1,1/0,2/1", ev.id)
	}
	// One partition of it.
	ch, _ = curlEvents(t, m+"events?from=earliest&partition=2")
	for _, want := range []string{"2/0", "2/1"} {
		if ev := nextEvent(t, ch); ev.id != want || !strings.Contains(ev.data, `"partition":2`) {
			t.Fatalf("partition=2 stream: %+v, want id %s", ev, want)
		}
	}
	for _, c := range []struct{ id, code string }{
		{"zero", wire.CodeInvalidRequest}, {"0/x", wire.CodeInvalidRequest}, {"-1/3", wire.CodeInvalidRequest}, {"0/-2", wire.CodeInvalidRequest},
		{"2/2", wire.CodeOffsetOutOfRange}, // partition 2 holds offsets 0 and 1
	} {
		status, body := curlRun(t, "-H", "Last-Event-ID: "+c.id, m+"events")
		if code, _ := bodyErrCode(t, body); status != 400 || code != c.code {
			t.Errorf("Last-Event-ID %q: %d %s, want 400 %s", c.id, status, body, c.code)
		}
	}
}

// TestEventsBeforeTopicExists: a stream opened before the topic's first
// produce waits for the topic and delivers from its first record, even
// with the default from=latest; deleting the topic ends the stream with an
// error event.
func TestEventsBeforeTopicExists(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	u := "http://" + ts.addr + "/v1/topics/later/"
	ch, _ := curlEvents(t, u+"events")
	// The stream is open (its waiting comment was sent) before the produce:
	// the server counts it.
	for ts.Stats().EventStreams != 1 {
		select {
		case <-testCtx(t).Done():
			t.Fatal("the event stream never opened")
		case <-time.After(time.Millisecond):
		}
	}
	curlRun(t, "-d", `[{"value":"first"},{"value":"second"}]`, u+"records")
	for i, want := range []string{"first", "second"} {
		ev := nextEvent(t, ch)
		var rec map[string]any
		decodeJSON(t, ev.data, &rec)
		if ev.id != fmt.Sprintf("0/%d", i) || rec["value"] != want {
			t.Fatalf("event %d: %+v, want %q", i, ev, want)
		}
	}
	if err := ts.eng.DeleteTopic("later"); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, ch)
	if !strings.Contains(ev.data, wire.CodeTopicNotFound) {
		t.Fatalf("after the delete: %+v, want an error event", ev)
	}
	if _, ok := <-ch; ok {
		t.Fatal("the stream went on after its error event")
	}
}

// TestFromOffsetPastAShorterPartition: from=N over a whole topic whose
// partitions hold different numbers of records applies N to each
// partition, and a partition whose log ends before N starts at its end,
// as a Kafka consumer seeking past the end with auto.offset.reset=latest
// does: GET .../records reads the others from N, an event stream and a
// subscription wait at that partition's end for its next record. A
// partition named with partition= that ends before N is still
// offset_out_of_range.
func TestFromOffsetPastAShorterPartition(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	if err := ts.eng.CreateTopic("uneven", engine.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	u := "http://" + ts.addr + "/v1/topics/uneven/"
	curlRun(t, "-d", `[{"partition":0,"value":"a"},{"partition":0,"value":"b"},{"partition":0,"value":"c"},{"partition":1,"value":"x"}]`, u+"records")

	status, body := curlRun(t, u+"records?from=2")
	var recs []map[string]any
	decodeJSON(t, body, &recs)
	if status != 200 || len(recs) != 1 || recs[0]["partition"] != float64(0) || recs[0]["offset"] != float64(2) {
		t.Fatalf("GET from=2: %d %s, want partition 0's offset 2 alone", status, body)
	}
	status, body = curlRun(t, u+"records?from=2&partition=1")
	if code, msg := bodyErrCode(t, body); status != 400 || code != wire.CodeOffsetOutOfRange || !strings.Contains(msg, "offset 2") {
		t.Fatalf("GET from=2&partition=1: %d %s, want 400 offset_out_of_range", status, body)
	}

	ch, _ := curlEvents(t, u+"events?from=2")
	if ev := nextEvent(t, ch); ev.id != "0/2,1/0" || !strings.Contains(ev.data, `"offset":2`) {
		t.Fatalf("first event from=2: %+v, want 0/2,1/0", ev)
	}
	c := dialRaw(t, ts.addr, "/v1/ws", nil)
	r := c.call(1, map[string]any{"op": "subscribe", "topic": "uneven", "from": map[string]any{"offset": 2}})
	if fmt.Sprint(r["partitions"]) != "[map[from:2 partition:0] map[from:1 partition:1]]" {
		t.Fatalf("subscribe from offset 2: %v, want partition 0 from 2 and partition 1 from its end, 1", r)
	}
	curlRun(t, "-d", `{"partition":1,"value":"y"}`, u+"records")
	if ev := nextEvent(t, ch); ev.id != "0/2,1/1" || !strings.Contains(ev.data, `"value":"y"`) {
		t.Fatalf("event after a produce to partition 1: %+v, want 0/2,1/1", ev)
	}
}

// TestHTTPPostQueryPartition: POST .../records?partition=N sends the
// records that name no partition of their own to N, as a websocket
// produce's request-level partition and the produce endpoint's
// ?partition= do, instead of leaving them to the partitioner; a bad one
// is refused as GET's is, and ?key= (a key is each record's own) is
// refused naming it rather than ignored. Refusals store nothing.
func TestHTTPPostQueryPartition(t *testing.T) {
	ts := startServer(t, DefaultOptions())
	if err := ts.eng.CreateTopic("three", engine.TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	u := "http://" + ts.addr + "/v1/topics/three/records"
	status, body := curlRun(t, "-d", `[{"value":"a"},{"partition":0,"value":"b"},{"key":"k","value":"c"}]`, u+"?partition=2")
	var acks struct{ Acks []engine.Ack }
	decodeJSON(t, body, &acks)
	if status != 200 || len(acks.Acks) != 3 || acks.Acks[0].Partition != 2 || acks.Acks[1].Partition != 0 || acks.Acks[2].Partition != 2 {
		t.Fatalf("POST ?partition=2: %d %s, want partitions 2, 0, 2", status, body)
	}
	status, body = curlRun(t, "-d", `{"value":"d"}`, u+"?partition=1")
	var ack engine.Ack
	decodeJSON(t, body, &ack)
	if status != 200 || ack.Partition != 1 {
		t.Fatalf("POST of one record ?partition=1: %d %s, want partition 1", status, body)
	}
	for _, c := range []struct{ query, code, names string }{
		{"?partition=x", wire.CodeInvalidRequest, `partition "x"`},
		{"?partition=-1", wire.CodePartitionOutOfRange, "partition -1 is negative"},
		{"?partition=3", wire.CodePartitionOutOfRange, "3"},
		{"?key=k", wire.CodeInvalidRequest, `"key"`},
	} {
		status, body := curlRun(t, "-d", `[{"value":"e"},{"value":"f"}]`, u+c.query)
		if code, msg := bodyErrCode(t, body); status != 400 || code != c.code || !strings.Contains(msg, c.names) {
			t.Errorf("POST %s: %d %s, want 400 %s naming %q", c.query, status, body, c.code, c.names)
		}
	}
	ti, err := ts.eng.Describe("three")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ti.Partitions[0].HWM, ti.Partitions[1].HWM, ti.Partitions[2].HWM); got != "1 1 2" {
		t.Fatalf("high-watermarks %s, want 1 1 2: a refused POST stored records", got)
	}
}
