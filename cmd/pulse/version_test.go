package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestVersion runs the built binary: --version and the version command
// print the same line, naming the module version the toolchain stamped
// and the Go version and target it was built with.
func TestVersion(t *testing.T) {
	bin := pulseBinary(t)
	out1, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("pulse --version: %v\n%s", err, out1)
	}
	out2, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("pulse version: %v\n%s", err, out2)
	}
	if string(out1) != string(out2) {
		t.Fatalf("--version printed %q, version printed %q", out1, out2)
	}
	line := strings.TrimSpace(string(out1))
	mv, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var modVersion string
	for _, l := range strings.Split(string(mv), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/pulselog/pulse" {
			modVersion = f[2]
		}
	}
	want := "pulse " + modVersion
	if modVersion == "" || !strings.HasPrefix(line, want) || !strings.HasSuffix(line, " "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Fatalf("pulse --version = %q, want %q ... %s %s/%s", line, want, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
}
