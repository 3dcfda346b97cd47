package wsapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
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
