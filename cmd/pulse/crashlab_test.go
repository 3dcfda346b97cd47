package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/engine/crashlab"
	"github.com/pulselog/pulse/internal/layout"
)

// runCmd runs the pulse command line with args and returns its output.
func runCrashlabCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"crashlab"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestCrashlabCommandTornTail(t *testing.T) {
	data := t.TempDir()
	dir := layout.PartitionDir(data, "orders", 0)
	fillPartition(t, dir, 200)
	before := checksums(t, data)

	out, err := runCrashlabCmd(t, "--data", data, "--topic", "orders", "--partition", "0", "--fault", "cut", "--scratch", t.TempDir())
	if err != nil {
		t.Fatalf("crashlab: %v\n%s", err, out)
	}
	for _, want := range []string{
		"crash lab: orders/p0, fault cut:SEGMENT=",
		"HEALTHY COPY", "FAULTED COPY",
		"topics/orders/p00000 (healthy copy)", "topics/orders/p00000 (faulted copy)",
		"would be truncated", // never: the copy is recovered for real
	} {
		if want == "would be truncated" {
			if strings.Contains(out, want) {
				t.Errorf("the faulted copy was recovered read-only:\n%s", out)
			}
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "truncated at") || !strings.Contains(out, "verdict: cut:") || !strings.Contains(out, "torn tail truncated") {
		t.Errorf("no truncation in the report or verdict:\n%s", out)
	}
	if strings.Contains(out, data) {
		t.Errorf("output shows the absolute data dir path:\n%s", out)
	}
	after := checksums(t, data)
	if len(after) != len(before) {
		t.Fatalf("files in the data dir: %d before, %d after", len(before), len(after))
	}
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed", p)
		}
	}
}

func TestCrashlabCommandJSON(t *testing.T) {
	data := t.TempDir()
	dir := layout.PartitionDir(data, "orders", 2)
	fillPartition(t, dir, 100)
	out, err := runCrashlabCmd(t, "--data", data, "--topic", "orders", "--partition", "2", "--fault", "index:delete", "--json", "--scratch", t.TempDir())
	if err != nil {
		t.Fatalf("crashlab: %v\n%s", err, out)
	}
	var res crashlab.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Partition != "orders/p2" || len(res.Faulted.IndexesRebuilt) != 1 || res.Survivors != 100 || len(res.Lost) != 0 {
		t.Errorf("result %+v", res)
	}
	if filepath.IsAbs(res.Faulted.IndexesRebuilt[0]) {
		t.Errorf("rebuilt index path is absolute: %s", res.Faulted.IndexesRebuilt[0])
	}
}

func TestCrashlabCommandBadInput(t *testing.T) {
	data := t.TempDir()
	dir := layout.PartitionDir(data, "orders", 0)
	fillPartition(t, dir, 10)
	before := checksums(t, data)
	for _, c := range []struct {
		args []string
		says string
		is   error
	}{
		{[]string{"--fault", "cut"}, "--topic is required", nil},
		{[]string{"--topic", "orders"}, "--fault is required", nil},
		{[]string{"--topic", "../etc", "--fault", "cut"}, "--topic", nil},
		{[]string{"--topic", "orders", "--fault", "flip:1"}, "flip takes a byte position and a bit", crashlab.ErrBadFault},
		{[]string{"--topic", "orders", "--fault", "melt"}, `unknown kind "melt"`, crashlab.ErrBadFault},
		{[]string{"--topic", "orders", "--partition", "7", "--fault", "cut"}, "no directory topics/orders/p00007", nil},
		{[]string{"--topic", "orders", "--fault", "cut:99999999"}, "N must be below", crashlab.ErrNotApplicable},
	} {
		out, err := runCrashlabCmd(t, append([]string{"--data", data, "--scratch", t.TempDir()}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.says) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%v: got %v (output %q), want an error saying %q", c.args, err, out, c.says)
		}
	}
	after := checksums(t, data)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed", p)
		}
	}
}

// TestTerminalCrashLab builds the real binary, opens the crash lab under
// tmux, applies the default torn-tail fault and reads the report off the
// screen; the data dir is unchanged afterwards.
func TestTerminalCrashLab(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)
	data := filepath.Join(tmp, "data")
	e := openWithTopic(t, data, "orders", engine.DefaultTopicConfig().Partitions)
	for b := 0; b < 3; b++ {
		var recs []engine.Record
		for i := 0; i < 10; i++ {
			recs = append(recs, engine.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"order":%d}`, b*10+i))})
		}
		if _, err := e.Produce(context.Background(), "orders", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	part := layout.PartitionDir(data, "orders", 0)
	before := checksums(t, part)

	x := tmux{t: t, sock: filepath.Join(tmp, "tmux.sock")}
	cmd := fmt.Sprintf("NO_COLOR=1 TMPDIR=%s %s --data %s --listen off --kafka-listen off --theme dark; echo pulse-exited-$?; sleep 600", tmp, bin, data)
	x.must("new-session", "-d", "-s", "ui", "-x", "140", "-y", "40", cmd)
	t.Cleanup(func() { x.run("kill-server") })

	x.waitScreen("Topics", "orders")
	// Each step waits for the screen to show the previous key took: a
	// ":" and the text after it that reach pulse in one read are one
	// key message of runes (":crashlab orders 0"), which opens no prompt.
	x.keys(":")
	x.waitScreen("enter ok") // the command prompt is open
	x.keys("-l", "crashlab orders 0")
	x.waitScreen(":crashlab orders 0")
	x.keys("Enter")
	x.waitScreen("Topics / orders / p0 / crash lab", "compaction-crash", "cut:SEGMENT=0:")
	x.keys("Enter") // apply the default: a cut inside the last batch
	screen := x.waitScreen("HEALTHY COPY", "FAULTED COPY", "torn tail truncated", "What changed")
	for _, want := range []string{"[recovered]", "truncated at", "20 of 30 records survive", "(faulted copy)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the crash lab screen lacks %q:\n%s", want, screen)
		}
	}
	x.keys("q")
	x.waitScreen("pulse-exited-0")

	after := checksums(t, part)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed", p)
		}
	}
	// The scratch copies are gone.
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "pulse-crashlab-") {
			t.Errorf("scratch copy %s left behind", e.Name())
		}
	}
}
