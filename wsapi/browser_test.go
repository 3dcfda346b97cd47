//go:build unix

package wsapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/syncbuf"
)

// chromiumFlags run Debian's chromium headless, isolated from the network
// and from any profile.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run",
}

// eventSourcePage follows a topic with EventSource and reports every
// message (and every error) to the page's own server, one report at a time
// so that they arrive in order.
const eventSourcePage = `<!doctype html>
<html><body><script>
let chain = Promise.resolve();
const report = (m) => { chain = chain.then(() => fetch("/report", {method: "POST", body: JSON.stringify(m)})); };
const es = new EventSource("http://%s/v1/topics/clicks/events?from=earliest");
es.onmessage = (e) => report({id: e.lastEventId, data: JSON.parse(e.data)});
es.onerror = () => report({error: es.readyState});
</script></body></html>`

// TestEventSourceResumesAfterRestart: a headless Chromium's EventSource
// follows a topic; the server and engine restart; the browser reconnects
// on its own, sends Last-Event-ID, and gets exactly the records after the
// last one it saw, although its URL says from=earliest.
func TestEventSourceResumesAfterRestart(t *testing.T) {
	chromium := needTool(t, "chromium", "the EventSource test (Debian package chromium)")
	r := newRestartable(t)
	type report struct {
		ID    string         `json:"id"`
		Data  map[string]any `json:"data"`
		Error *int           `json:"error"`
	}
	reports := make(chan report, 100)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, eventSourcePage, r.addr)
		case "/report":
			b, _ := io.ReadAll(req.Body)
			var m report
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("page reported %q: %v", b, err)
			}
			reports <- m
		default:
			http.NotFound(w, req)
		}
	}))
	defer page.Close()

	u := "http://" + r.addr + "/v1/topics/clicks/records"
	curlRun(t, "-d", `[{"value":{"n":0}},{"value":{"n":1}},{"value":{"n":2}}]`, u)

	cmd := exec.Command(chromium, append(chromiumFlags, "--user-data-dir="+t.TempDir(), page.URL+"/")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := startChromium(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stopChromium(cmd)
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	}()
	var got []string
	nextMessage := func() {
		t.Helper()
		ctx := testCtx(t)
		for {
			select {
			case m := <-reports:
				if m.Error != nil {
					continue // the reconnection attempts while the server is down
				}
				got = append(got, fmt.Sprintf("%s=%v", m.ID, m.Data["value"].(map[string]any)["n"]))
				return
			case <-ctx.Done():
				t.Fatalf("no message from the browser; got %v", got)
			}
		}
	}
	for range 3 {
		nextMessage()
	}
	r.restart()
	curlRun(t, "-d", `[{"value":{"n":3}},{"value":{"n":4}}]`, u)
	for range 2 {
		nextMessage()
	}
	want := []string{"0/0=0", "0/1=1", "0/2=2", "0/3=3", "0/4=4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the browser got %v, want %v", got, want)
	}
}

// postPage posts one record with a "simple" request (text/plain, no-cors:
// no CORS preflight protects it) and reports when the browser is done.
const postPage = `<!doctype html>
<html><body><script>
fetch("http://%s/v1/topics/%s/records", {method: "POST", mode: "no-cors",
  headers: {"Content-Type": "text/plain"}, body: '{"value":"from a page"}'})
  .then(() => fetch("/report", {method: "POST", body: "sent"}))
  .catch((e) => fetch("/report", {method: "POST", body: "failed: " + e}));
</script></body></html>`

// TestBrowserCrossSitePostRefused: a page on a foreign origin (evil.test,
// mapped to 127.0.0.1 in Chromium) posts a record with a content type that
// needs no preflight; the server refuses it and stores nothing. The same
// page on a loopback origin stores its record.
func TestBrowserCrossSitePostRefused(t *testing.T) {
	chromium := needTool(t, "chromium", "the cross-site request test (Debian package chromium)")
	logs := &syncbuf.Buffer{}
	opts := DefaultOptions()
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	ts := startServer(t, opts)
	reports := make(chan string, 10)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/report":
			b, _ := io.ReadAll(req.Body)
			reports <- string(b)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, postPage, ts.addr, strings.TrimPrefix(req.URL.Path, "/"))
		}
	}))
	defer page.Close()
	_, port, _ := net.SplitHostPort(page.Listener.Addr().String())

	run := func(url string) string {
		t.Helper()
		cmd := exec.Command(chromium, append(chromiumFlags, "--user-data-dir="+t.TempDir(),
			"--host-resolver-rules=MAP evil.test 127.0.0.1", url)...)
		if err := startChromium(cmd); err != nil {
			t.Fatal(err)
		}
		defer stopChromium(cmd)
		select {
		case r := <-reports:
			return r
		case <-testCtx(t).Done():
			t.Fatalf("no report from %s", url)
		}
		return ""
	}
	if r := run("http://evil.test:" + port + "/forged"); r != "sent" {
		t.Fatalf("the foreign page reported %q", r)
	}
	if _, err := ts.eng.Describe("forged"); !errors.Is(err, engine.ErrTopicNotFound) {
		t.Fatalf("a cross-site POST created its topic: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "Origin not allowed") || !strings.Contains(l, "http://evil.test:"+port) {
		t.Fatalf("the server did not log the refused origin:\n%s", l)
	}
	if r := run("http://127.0.0.1:" + port + "/allowed"); r != "sent" {
		t.Fatalf("the loopback page reported %q", r)
	}
	res, err := ts.eng.Read("allowed", 0, 0, 10, 1<<20)
	if err != nil || len(res.Records) != 1 || string(res.Records[0].Value) != "from a page" {
		t.Fatalf("the loopback page's record: %+v, %v", res.Records, err)
	}
}

// startChromium starts cmd in a process group of its own, so that
// stopChromium ends its helper processes too (they write into the
// --user-data-dir, which the test removes after).
func startChromium(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// stopChromium kills the whole process group of a browser startChromium
// started and waits for the browser.
func stopChromium(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
}
