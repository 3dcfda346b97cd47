package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// tailRow is a record row of the tail screen: marker, partition, offset.
var tailRow = regexp.MustCompile(`(?m)^[▸ ] +(\d+) +(\d[\d,]*) `)

// TestTerminalUISizes runs the real binary in tmux at 80×24 and 160×45 and
// visits every screen: each keeps its health column, the help scrolls to
// its end, and the tail of a three-partition topic shows records of all
// three.
func TestTerminalUISizes(t *testing.T) {
	tmp, bin := tmuxAndBinary(t)
	data := filepath.Join(tmp, "data")
	e := openWithTopic(t, data, "orders", 3)
	// One record at a time round-robin: commit-time order interleaves
	// the partitions.
	for i := 0; i < 60; i++ {
		rec := engine.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"order":%d}`, i))}
		if _, err := e.Produce(context.Background(), "orders", i%3, []engine.Record{rec}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	for _, size := range []struct{ w, h int }{{80, 24}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			x := tmux{t: t, sock: filepath.Join(tmp, fmt.Sprintf("tmux-%d.sock", size.w))}
			cmd := fmt.Sprintf("NO_COLOR=1 %s --data %s --listen 127.0.0.1:0 --kafka-listen off --theme dark; echo pulse-exited-$?; sleep 600", bin, data)
			x.must("new-session", "-d", "-s", "ui", "-x", fmt.Sprint(size.w), "-y", fmt.Sprint(size.h), cmd)
			defer x.run("kill-server")

			// health waits for the column titles holding wants[0] (unique
			// to the screen) and fails when any other of wants is not on
			// that line.
			health := func(screen string, wants ...string) {
				t.Helper()
				s := x.waitScreen(wants[0])
				for _, line := range strings.Split(s, "\n") {
					if !strings.Contains(line, wants[0]) {
						continue
					}
					for _, w := range wants[1:] {
						if !strings.Contains(line, w) {
							t.Errorf("%s at %dx%d: no %s column in %q\n%s", screen, size.w, size.h, w, line, s)
						}
					}
					return
				}
			}

			x.waitScreen("Topics", "orders")
			health("topics", "CLEANUP", "TOPIC", "RECORDS", "STATUS")
			if s := x.screen(); !regexp.MustCompile(`orders .* ok`).MatchString(s) {
				t.Errorf("topics: the orders row shows no status:\n%s", s)
			}

			x.keys("t") // the topic's tail: every partition
			s := x.waitScreen("Topics / orders / tail", "orders all 3 partitions", `{"order":59}`)
			seen := map[string]bool{}
			for _, m := range tailRow.FindAllStringSubmatch(s, -1) {
				seen[m[1]] = true
			}
			if !seen["0"] || !seen["1"] || !seen["2"] || len(seen) != 3 {
				t.Errorf("the merged tail shows records of partitions %v, want 0, 1 and 2:\n%s", seen, s)
			}

			x.keys("Escape") // back to the topics, where t was pressed
			x.waitScreen("CLEANUP")
			x.keys("Enter") // the partitions of orders
			health("partitions", "MAX LAG", " P ", "HWM", "HIDDEN", "STATUS")
			x.waitScreen("p2 ") // the rows are loaded: enter has one to open
			x.keys("Enter")
			health("segments", "SPARSE", "BASE", "NEXT", "RECORDS", "STATE")
			x.waitScreen("active")
			x.keys("Enter")
			x.waitScreen("frames 00000000000000000000")
			health("frames", "BASE OFF", "POSITION", "RECS", "CRC")
			// Keys written together reach the UI as one multi-rune key:
			// the prompt must be open before its text is typed.
			x.keys(":")
			x.waitScreen("enter ok")
			x.keys("-l", "recovery")
			x.waitScreen(":recovery")
			x.keys("Enter")
			health("recovery", "TRUNCATED", "PARTITION", "STATE", "CORRUPT", "HIDDEN")

			x.keys("?")
			x.waitScreen("help lines 1–")
			x.keys("G")
			x.waitScreen(":topics  back to the topic list", "(end)")
			x.keys("Escape")
			// A key sent right after esc would arrive as alt+key.
			x.waitScreen("TRUNCATED")
			x.keys("q")
			x.waitScreen("pulse-exited-0")
		})
	}
}
