package wsapi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTool skips the test when a tool is missing, except in CI (CI set),
// whose setup must install it.
func needTool(t *testing.T, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed, and CI must install it: %s", name, why)
	}
	t.Skipf("%s is not installed (%s); install Node.js to run this test", name, why)
	return ""
}

// TestNodeClient drives the server with a client nobody here wrote: Node.js
// with the "ws" package from npm (testdata/node).
func TestNodeClient(t *testing.T) {
	node := needTool(t, "node", "the Node.js websocket client test")
	dir := filepath.Join("testdata", "node")
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws")); err != nil {
		npm := needTool(t, "npm", "installing the ws package")
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
			}
			t.Skipf("npm ci in %s failed (no registry?): %v\n%s", dir, err, out)
		}
	}
	ts := startServer(t, DefaultOptions())
	cmd := exec.CommandContext(ctx, node, "client.mjs", "ws://"+ts.addr)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "node client: ok") {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))

	// What the Node client produced is in the engine.
	ti, err := ts.eng.Describe("from-node")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, p := range ti.Partitions {
		n += p.HWM
	}
	if n != 51 {
		t.Fatalf("from-node holds %d records, want 51", n)
	}
	bin, err := ts.eng.Read("bin-node", 0, 0, 10, 1<<20)
	if err != nil || len(bin.Records) != 3 {
		t.Fatalf("bin-node: %v %v", bin.Records, err)
	}
	if r := bin.Records; string(r[0].Key) != "k" || string(r[0].Value) != strings.Repeat("x", 200) ||
		r[1].Key != nil || string(r[1].Value) != "\xff\x00" || string(r[2].Key) != "k" || r[2].Value != nil {
		t.Fatalf("bin-node records: %+v", r)
	}
	res, err := ts.eng.Read("plain-node", 0, 0, 10, 1<<20)
	if err != nil || len(res.Records) != 2 || string(res.Records[0].Value) != "raw text" || string(res.Records[1].Value) != "\xff\x00\x01" {
		t.Fatalf("plain-node: %v %v", res.Records, err)
	}
}
