package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
	"github.com/pulselog/pulse/wsapi/wsclient"
)

// commas renders n as the UI does (1,234).
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestMirrorThroughServerShownInUI runs `pulse mirror --server` against
// the websocket API of a `pulse` UI on a data dir: the UI's partitions
// screen shows the mirror's cursor and lag while it runs, catching up with
// records produced while it runs, and the cluster holds every record.
func TestMirrorThroughServerShownInUI(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)
	data := filepath.Join(tmp, "data")
	e := openWithTopic(t, data, "orders", 2)
	for p := range 2 {
		var recs []engine.Record
		for i := range 2500 {
			recs = append(recs, engine.Record{Key: []byte(fmt.Sprint("k", i)), Value: []byte(fmt.Sprintf(`{"p":%d,"i":%d}`, p, i))})
		}
		if _, err := e.Produce(context.Background(), "orders", p, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	addr, kc, adm := startKfake(t)

	x := tmux{t: t, sock: filepath.Join(tmp, "tmux.sock")}
	x.must("new-session", "-d", "-s", "ui", "-x", "130", "-y", "34",
		fmt.Sprintf("NO_COLOR=1 %s --data %s --listen 127.0.0.1:0 --kafka-listen off --topic orders; echo pulse-exited-$?; sleep 600", bin, data))
	t.Cleanup(func() { x.run("kill-server") })
	screen := x.waitScreen("Topics / orders", "ws 127.0.0.1:")
	m := regexp.MustCompile(`ws (127\.0\.0\.1:\d+)`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no websocket address in the header:\n%s", screen)
	}
	ws := m[1]

	mir := exec.Command(bin, "mirror", "orders", "--server", ws, "--to", addr, "--to-topic", "copy", "--batch", "500")
	var out strings.Builder
	mir.Stdout, mir.Stderr = &out, &out
	if err := mir.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mir.Process.Kill()
		mir.Wait()
		if t.Failed() {
			t.Logf("the mirror said:\n%s", out.String())
		}
	})
	consumer := func(p int, cursor int64) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`mirror\.copy\s+%d\s+%s\s+0\b`, p, commas(cursor)))
	}
	x.waitMatch(consumer(0, 2500), consumer(1, 2500))

	// Records produced while the mirror runs reach the cluster, and the
	// UI follows the cursor.
	c := dialClientT(t, ws)
	var more []wire.RecordIn
	for i := range 40 {
		more = append(more, wire.RecordIn{Value: []byte(fmt.Sprint(i))})
	}
	if _, err := c.Produce(context.Background(), "orders", 1, more); err != nil {
		t.Fatal(err)
	}
	x.waitMatch(consumer(0, 2500), consumer(1, 2540))

	kc.PurgeTopicsFromClient("copy")
	ends, err := adm.ListEndOffsets(context.Background(), "copy")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range []int64{2500, 2540} {
		if o, _ := ends.Lookup("copy", int32(p)); o.Offset != want {
			t.Fatalf("cluster partition %d holds %d records, want %d; the mirror says:\n%s", p, o.Offset, want, out.String())
		}
	}
	mir.Process.Signal(syscall.SIGINT)
	if err := mir.Wait(); err != nil {
		t.Fatalf("mirror after SIGINT: %v\n%s", err, out.String())
	}
	x.keys("q")
	x.waitScreen("pulse-exited-0")
}

func dialClientT(t *testing.T, addr string) *wsclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tmuxWait)
	defer cancel()
	c, err := wsclient.Dial(ctx, addr, wsclient.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
