package wire

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestServerAndClientApart checks the split this package exists for: the
// server (wsapi) links no client code and the client (wsapi/wsclient) no
// server code; both link this package.
func TestServerAndClientApart(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the go tool is needed to list the packages' dependencies: %v", err)
		}
		t.Skipf("no go tool on PATH to list the packages' dependencies: %v", err)
	}
	const (
		server = "github.com/pulselog/pulse/wsapi"
		client = "github.com/pulselog/pulse/wsapi/wsclient"
		wire   = "github.com/pulselog/pulse/wsapi/wire"
	)
	deps := func(pkg string) []string {
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	for _, c := range []struct{ pkg, must, mustNot string }{
		{server, wire, client},
		{client, wire, server},
	} {
		d := deps(c.pkg)
		if slices.Contains(d, c.mustNot) {
			t.Errorf("%s depends on %s", c.pkg, c.mustNot)
		}
		if !slices.Contains(d, c.must) {
			t.Errorf("%s does not depend on %s", c.pkg, c.must)
		}
	}
}
