//go:build unix

package doctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// pulseAddr is where the documentation says Pulse listens.
const pulseAddr = "127.0.0.1:7450"

// blockGuard bounds one block's run so that a broken example fails instead
// of hanging the test binary. It is not a timing assertion: every example
// finishes in well under a second on an idle machine.
const blockGuard = 30 * time.Second

// block is one code block of a Markdown file.
type block struct {
	file   string // relative to the repository root
	line   int    // of the opening fence
	lang   string // sh, bash, js, javascript, html, python, py
	code   string
	skip   string // not-a-test reason
	expect []*regexp.Regexp
	then   string
}

func (b *block) String() string { return fmt.Sprintf("%s:%d (%s)", b.file, b.line, b.lang) }

var runnable = map[string]bool{"sh": true, "bash": true, "js": true, "javascript": true, "html": true, "python": true, "py": true}

var annotation = regexp.MustCompile(`^<!--\s*(not-a-test|test-expect|test-then):\s*(.*?)\s*-->$`)

// extract returns the runnable blocks of one Markdown file, with the
// annotations on the lines right before each.
func extract(root, rel string) ([]*block, error) {
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []*block
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```") {
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(l, "```"))
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(lines[end], "```") {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: code block never closed", rel, i+1)
		}
		b := &block{file: rel, line: i + 1, lang: lang, code: strings.Join(lines[i+1:end], "\n") + "\n"}
		for j := i - 1; j >= 0; j-- {
			m := annotation.FindStringSubmatch(strings.TrimSpace(lines[j]))
			if m == nil {
				if strings.HasPrefix(strings.TrimSpace(lines[j]), "<!--") && strings.Contains(lines[j], "test") {
					return nil, fmt.Errorf("%s:%d: malformed test annotation %q", rel, j+1, lines[j])
				}
				break
			}
			switch m[1] {
			case "not-a-test":
				if m[2] == "" {
					return nil, fmt.Errorf("%s:%d: not-a-test needs a reason", rel, j+1)
				}
				b.skip = m[2]
			case "test-expect":
				re, err := regexp.Compile(m[2])
				if err != nil {
					return nil, fmt.Errorf("%s:%d: test-expect: %w", rel, j+1, err)
				}
				b.expect = append(b.expect, re)
			case "test-then":
				b.then = m[2]
			}
		}
		if runnable[lang] {
			out = append(out, b)
		}
		i = end
	}
	return out, nil
}

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// docBlocks extracts the blocks of README.md and docs/*.md.
func docBlocks(t *testing.T, root string) []*block {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	var all []*block
	for _, f := range files {
		bs, err := extract(root, f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, bs...)
	}
	return all
}

// needTool returns the path of a tool; a missing one fails the test in CI
// (CI set), whose setup must install it, and skips it elsewhere.
func needTool(t *testing.T, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, and CI must install it: %s", name, why)
	}
	t.Skipf("%s is not installed (%s)", name, why)
	return ""
}

// env is what every block runs with.
type env struct {
	root     string
	pulse    string // the built binary
	bin      string // its directory
	nodeMods string // wsapi/testdata/node/node_modules
	node     string
	node22   bool
	chromium string
	python   string
}

// runner runs one block against a fresh server and reports what failed.
type runner struct {
	t   *testing.T
	env *env
	// onCluster serves each block with `pulse serve --kafka` on a Kafka
	// cluster of its own: Pulse's Kafka listener in a separate `pulse
	// serve` process with a fresh data dir.
	onCluster bool
}

// TestDocs runs every runnable block of the documentation.
func TestDocs(t *testing.T) {
	root := repoRoot(t)
	blocks := docBlocks(t, root)
	e := setup(t, root, blocks)
	r := &runner{t: t, env: e}
	ran := 0
	for _, b := range blocks {
		if b.skip != "" {
			t.Logf("%s: not a test: %s", b, b.skip)
			continue
		}
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			r := &runner{t: t, env: r.env}
			if err := r.run(b); err != nil {
				t.Fatal(err)
			}
		})
		ran++
	}
	if ran == 0 {
		t.Fatal("no documentation block was run")
	}
}

// TestWebsocketDocsOnACluster runs the blocks of docs/websocket.md
// unchanged against `pulse serve --kafka`, on a Kafka cluster of their own
// for each block: Pulse's own Kafka listener, in a separate `pulse serve`
// process with its own data dir (the cluster, to the Pulse under test).
func TestWebsocketDocsOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs two pulse processes")
	}
	root := repoRoot(t)
	blocks, err := extract(root, filepath.Join("docs", "websocket.md"))
	if err != nil {
		t.Fatal(err)
	}
	e := setup(t, root, blocks)
	ran := 0
	for _, b := range blocks {
		if b.skip != "" {
			continue
		}
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			r := &runner{t: t, env: e, onCluster: true}
			if err := r.run(b); err != nil {
				t.Fatal(err)
			}
		})
		ran++
	}
	if ran == 0 {
		t.Fatal("no block of docs/websocket.md was run")
	}
}

// TestHarnessFailsBrokenBlocks holds the harness to failing: a block of
// each kind that fails, or does not print what it promises, is reported.
func TestHarnessFailsBrokenBlocks(t *testing.T) {
	root := repoRoot(t)
	broken := []*block{
		{file: "broken", line: 1, lang: "sh", code: "pulse topics describe no-such-topic\necho after\n"},
		{file: "broken", line: 2, lang: "sh", code: "echo hello\n", expect: []*regexp.Regexp{regexp.MustCompile("goodbye")}},
		{file: "broken", line: 3, lang: "python", code: "raise SystemExit(3)\n"},
		{file: "broken", line: 4, lang: "js", code: "import WebSocket from 'ws';\nthrow new Error('broken node block');\n"},
		{file: "broken", line: 5, lang: "js", code: "const ws = new WebSocket('ws://127.0.0.1:7450/v1/ws');\nawait new Promise((r) => ws.addEventListener('open', r));\nthrow new Error('broken browser block');\n",
			expect: []*regexp.Regexp{regexp.MustCompile("never printed")}},
	}
	e := setup(t, root, broken)
	r := &runner{t: t, env: e}
	for _, b := range broken {
		err := r.run(b)
		if err == nil {
			t.Errorf("%s: a broken block passed", b)
			continue
		}
		t.Logf("%s failed as it should: %v", b, firstLine(err.Error()))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// setup builds pulse and finds the tools the blocks need.
func setup(t *testing.T, root string, blocks []*block) *env {
	t.Helper()
	e := &env{root: root}
	need := map[string]bool{}
	for _, b := range blocks {
		if b.skip == "" {
			need[kind(b)] = true
		}
	}
	e.bin = t.TempDir()
	e.pulse = filepath.Join(e.bin, "pulse")
	if other := os.Getenv("PULSE_DOCTEST_BINARY"); other != "" {
		// Run the documentation against another build (an older
		// release, say): the binary is copied so that blocks find it
		// as pulse on PATH.
		data, err := os.ReadFile(other)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.pulse, data, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		build := exec.Command("go", "build", "-o", e.pulse, "./cmd/pulse")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/pulse: %v\n%s", err, out)
		}
	}
	if need["node"] || need["browser"] {
		e.node = needTool(t, "node", "the Node.js examples")
		out, err := exec.Command(e.node, "--version").Output()
		if err != nil {
			t.Fatal(err)
		}
		major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".", 2)[0])
		e.node22 = major >= 22
	}
	if need["node"] {
		dir := filepath.Join(root, "wsapi", "testdata", "node")
		e.nodeMods = filepath.Join(dir, "node_modules")
		if _, err := os.Stat(filepath.Join(e.nodeMods, "ws")); err != nil {
			npm := needTool(t, "npm", "installing the ws package")
			cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
				}
				t.Skipf("npm ci in %s failed (no registry?): %v\n%s", dir, err, out)
			}
		}
	}
	if need["browser"] {
		e.chromium = needTool(t, "chromium", "the browser examples (Debian package chromium)")
	}
	if need["python"] {
		e.python = "/usr/bin/python3"
		if out, err := exec.Command(e.python, "-c", "import websockets").CombinedOutput(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("/usr/bin/python3 cannot import websockets (Debian package python3-websockets): %v\n%s", err, out)
			}
			t.Skipf("/usr/bin/python3 cannot import websockets (install python3-websockets): %v", err)
		}
	}
	return e
}

// kind says how a block runs: sh, node, browser, python.
func kind(b *block) string {
	switch b.lang {
	case "sh", "bash":
		return "sh"
	case "python", "py":
		return "python"
	case "html":
		return "browser"
	}
	if usesWSPackage(b.code) {
		return "node"
	}
	return "browser"
}

var wsImport = regexp.MustCompile(`from\s+['"]ws['"]|require\(\s*['"]ws['"]\s*\)`)

func usesWSPackage(code string) bool { return wsImport.MatchString(code) }

var browserOnly = regexp.MustCompile(`\b(document|window|location|navigator|localStorage)\b`)

// run runs b against a fresh pulse serve and returns why it failed.
func (r *runner) run(b *block) error {
	unlock := lockPort(r.t)
	defer unlock()
	dir := r.t.TempDir()
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	stop, err := r.serve(filepath.Join(dir, "data"), home)
	if err != nil {
		return err
	}
	// stop is replaced below when a second server starts: the deferred
	// call must stop the one running then.
	defer func() { stop() }()

	switch kind(b) {
	case "sh":
		script := filepath.Join(work, "block.sh")
		if err := os.WriteFile(script, []byte(b.code), 0o644); err != nil {
			return err
		}
		cmd := exec.Command("bash", "-e", "-o", "pipefail", script)
		return r.process(b, cmd, work, home)
	case "python":
		script := filepath.Join(work, "block.py")
		if err := os.WriteFile(script, []byte(b.code), 0o644); err != nil {
			return err
		}
		return r.process(b, exec.Command(r.env.python, script), work, home)
	case "node":
		if err := os.Symlink(r.env.nodeMods, filepath.Join(work, "node_modules")); err != nil {
			return err
		}
		script := filepath.Join(work, "block.mjs")
		if err := os.WriteFile(script, []byte(b.code), 0o644); err != nil {
			return err
		}
		return r.process(b, exec.Command(r.env.node, script), work, home)
	}
	if err := r.browser(b, filepath.Join(dir, "chromium"), home); err != nil {
		return fmt.Errorf("in headless Chromium: %w", err)
	}
	if b.lang != "html" && !browserOnly.MatchString(b.code+b.then) {
		if !r.env.node22 {
			r.t.Logf("%s: not run with Node's built-in WebSocket (Node.js 22 or later needed)", b)
			return nil
		}
		script := filepath.Join(work, "builtin.mjs")
		if err := os.WriteFile(script, []byte(b.code), 0o644); err != nil {
			return err
		}
		stop()
		stop, err = r.serve(filepath.Join(dir, "data2"), home)
		if err != nil {
			return err
		}
		if err := r.process(b, exec.Command(r.env.node, script), work, home); err != nil {
			return fmt.Errorf("with Node's built-in WebSocket: %w", err)
		}
	}
	return nil
}

// broker starts a Kafka broker for a block: `pulse serve` on data with its
// Kafka listener on a free loopback port (and its websocket API on
// another), and returns the listener's address once it accepts.
func (r *runner) broker(data string) (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = l.Addr().String()
	l.Close()
	cmd := exec.Command(r.env.pulse, "serve", "--data", data, "--listen", "127.0.0.1:0", "--kafka-listen", addr)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	for deadline := time.Now().Add(blockGuard); ; time.Sleep(5 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the broker's pulse serve did not listen on %s:\n%s", addr, log.String())
		}
	}
}

// lockPort serialises the test processes of this machine that use port
// 7450 (flock on a file in the temp directory).
func lockPort(t *testing.T) func() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "pulse-doctest-7450.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

// serve starts `pulse serve` on the default address with a fresh data dir
// and returns once it accepts connections.
func (r *runner) serve(data, home string) (stop func(), err error) {
	if c, err := net.Dial("tcp", pulseAddr); err == nil {
		c.Close()
		msg := fmt.Sprintf("something already listens on %s, where the documented examples expect a fresh pulse", pulseAddr)
		if os.Getenv("CI") != "" {
			return nil, errors.New(msg)
		}
		r.t.Skip(msg)
	}
	cmd := exec.Command(r.env.pulse, "serve", "--data", data)
	stopBroker := func() {}
	if r.onCluster {
		broker, stopB, err := r.broker(data + "-broker")
		if err != nil {
			return nil, err
		}
		stopBroker = stopB
		cmd = exec.Command(r.env.pulse, "serve", "--kafka", broker, "--kafka-client-id", "pulse-doctest")
	}
	cmd.Env = append(os.Environ(), "HOME="+home)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		stopBroker()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		defer stopBroker()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(blockGuard):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			r.t.Errorf("pulse serve did not stop on SIGTERM:\n%s", log.String())
		}
	}
	deadline := time.Now().Add(blockGuard)
	for {
		// The banner comes once the Kafka listener is up too (or was not
		// started).
		up := false
		if c, err := net.Dial("tcp", pulseAddr); err == nil {
			c.Close()
			up = strings.Contains(log.String(), "pulse: serving")
		}
		if up {
			if !r.onCluster && strings.Contains(log.String(), "Kafka listener not started") {
				stop()
				return nil, fmt.Errorf("pulse serve could not take the Kafka port the examples use (another process holds it):\n%s", log.String())
			}
			return stop, nil
		}
		select {
		case err := <-exited:
			stopped = true
			stopBroker()
			return nil, fmt.Errorf("pulse serve exited before listening: %v\n%s", err, log.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("pulse serve did not listen on %s:\n%s", pulseAddr, log.String())
		}
	}
}

// process runs cmd (a block) in work and judges it: it passes when it
// exits with status 0 and its output matched every expectation, or when it
// is still running once every expectation matched (it is then stopped).
func (r *runner) process(b *block, cmd *exec.Cmd, work, home string) error {
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+r.env.bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	defer kill() // background jobs of a shell block
	deadline := time.After(blockGuard)
	for {
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("%s: %v; output:\n%s", b, err, out.String())
			}
			if missing := unmatched(b.expect, out.String()); missing != nil {
				return fmt.Errorf("%s exited without printing a match for %q; output:\n%s", b, missing, out.String())
			}
			return nil
		case <-out.changed():
			if len(b.expect) > 0 && unmatched(b.expect, out.String()) == nil {
				kill()
				<-exited
				return nil
			}
		case <-deadline:
			kill()
			<-exited
			return fmt.Errorf("%s still running after %v without printing a match for %q; output:\n%s", b, blockGuard, unmatched(b.expect, out.String()), out.String())
		}
	}
}

// unmatched returns the first expectation out does not match.
func unmatched(expect []*regexp.Regexp, out string) *regexp.Regexp {
	for _, re := range expect {
		if !re.MatchString(out) {
			return re
		}
	}
	return nil
}

// pagePrelude reports console output and uncaught errors of the page to
// the test's HTTP server, in order.
const pagePrelude = `<script>
(() => {
  let chain = Promise.resolve();
  const show = (a) => { if (typeof a === 'string') return a; try { return JSON.stringify(a); } catch { return String(a); } };
  const send = (kind, args) => {
    const body = kind + ' ' + args.map(show).join(' ');
    chain = chain.then(() => fetch('/log', { method: 'POST', body }).catch(() => {}));
  };
  for (const k of ['log', 'info', 'warn', 'error']) {
    const orig = console[k].bind(console);
    console[k] = (...a) => { send(k, a); orig(...a); };
  }
  window.addEventListener('error', (e) => send('uncaught', [String(e.error && e.error.stack || e.message)]));
  window.addEventListener('unhandledrejection', (e) => send('uncaught', [String(e.reason && e.reason.stack || e.reason)]));
})();
</script>
`

// browser runs a js or html block in headless Chromium on a page served
// from 127.0.0.1 (an origin Pulse accepts), and judges it by what the page
// reports: an uncaught error fails it; it passes once every expectation
// matched. A browser block must say what it prints (test-expect).
func (r *runner) browser(b *block, profile, home string) error {
	if len(b.expect) == 0 {
		return fmt.Errorf("%s: a browser block needs a <!-- test-expect: ... --> line: a page never exits", b)
	}
	var page string
	if b.lang == "html" {
		page = b.code
		if i := strings.Index(strings.ToLower(page), "<head>"); i >= 0 {
			page = page[:i+6] + pagePrelude + page[i+6:]
		} else {
			page = pagePrelude + page
		}
	} else {
		page = "<!doctype html>\n<html><head><meta charset=\"utf-8\">" + pagePrelude + "</head><body><p>doc test</p>\n<script type=\"module\">\n" +
			b.code + "\n;" + b.then + "\n</script></body></html>\n"
	}
	var out syncBuffer
	uncaught := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		out.Write(append(body, '\n'))
		if bytes.HasPrefix(body, []byte("uncaught ")) {
			select {
			case uncaught <- string(body):
			default:
			}
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(l)
	defer hs.Close()

	ctx, cancel := context.WithTimeout(context.Background(), blockGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.env.chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+profile, "http://"+l.Addr().String()+"/")
	cmd.Env = append(os.Environ(), "HOME="+home)
	var clog syncBuffer
	cmd.Stdout, cmd.Stderr = &clog, &clog
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	for {
		select {
		case u := <-uncaught:
			return fmt.Errorf("%s: %s; page output:\n%s", b, u, out.String())
		case <-out.changed():
			if unmatched(b.expect, out.String()) == nil {
				return nil
			}
		case err := <-exited:
			return fmt.Errorf("%s: chromium exited (%v) before the page printed a match for %q; page output:\n%s\nchromium:\n%s",
				b, err, unmatched(b.expect, out.String()), out.String(), tail(clog.String(), 2000))
		case <-ctx.Done():
			return fmt.Errorf("%s: no match for %q after %v; page output:\n%s\nchromium:\n%s",
				b, unmatched(b.expect, out.String()), blockGuard, out.String(), tail(clog.String(), 2000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// syncBuffer is an output buffer written by a process and read by the
// test, with a channel that says when it grew.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// changed returns a channel closed at the next write.
func (s *syncBuffer) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// TestExtract checks the block extraction and its annotations on a small
// document.
func TestExtract(t *testing.T) {
	dir := t.TempDir()
	doc := "# t\n\n```json\n{}\n```\n\n<!-- not-a-test: needs a terminal -->\n```sh\npulse\n```\n\n" +
		"<!-- test-then: go() -->\n<!-- test-expect: a+ -->\n<!-- test-expect: b -->\n```js\nconsole.log('aab')\n```\n\n```python\nprint(1)\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "t.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := extract(dir, "t.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 {
		t.Fatalf("%d blocks, want 3 (json is not run)", len(bs))
	}
	if bs[0].skip != "needs a terminal" || bs[0].line != 8 || bs[0].code != "pulse\n" {
		t.Errorf("sh block: %+v", bs[0])
	}
	if len(bs[1].expect) != 2 || bs[1].then != "go()" || bs[1].skip != "" {
		t.Errorf("js block: %+v", bs[1])
	}
	if len(bs[2].expect) != 0 || bs[2].lang != "python" {
		t.Errorf("python block: %+v", bs[2])
	}
	bad := "<!-- not-a-test: -->\n```sh\nx\n```\n"
	os.WriteFile(filepath.Join(dir, "bad.md"), []byte(bad), 0o644)
	if _, err := extract(dir, "bad.md"); err == nil {
		t.Error("not-a-test without a reason was accepted")
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
