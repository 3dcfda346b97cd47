package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine/segment"
)

// TestCommandsRefuseWhatPulseDidNotWrite: dump, verify and inspect given a
// text file, random bytes under a segment's name, a directory of junk or
// an unrelated directory say clearly that it is not Pulse's and exit
// non-zero, changing nothing.
func TestCommandsRefuseWhatPulseDidNotWrite(t *testing.T) {
	junk := t.TempDir()
	random := make([]byte, 5000)
	rand.Read(random)
	files := map[string][]byte{
		"notes.txt":                   []byte("hello\n"),
		segment.LogFile(0):            random,
		"unrelated/readme.md":         []byte("# not pulse\n"),
		"unrelated/sub/config.json":   []byte("{}"),
		"plain/" + segment.LogFile(7): []byte(strings.Repeat("log line\n", 100)),
	}
	for n, b := range files {
		p := filepath.Join(junk, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := checksums(t, junk)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dump", filepath.Join(junk, "notes.txt")}, "is not a Pulse segment"},
		{[]string{"dump", filepath.Join(junk, segment.LogFile(0))}, "is not a Pulse segment"},
		{[]string{"dump", filepath.Join(junk, "plain", segment.LogFile(7))}, "is not a Pulse segment"},
		{[]string{"dump", junk}, "is a directory"},
		{[]string{"verify", junk}, "not a Pulse data directory"},
		{[]string{"inspect", junk}, "not a Pulse data directory"},
		{[]string{"verify", filepath.Join(junk, "unrelated")}, "not a Pulse data directory"},
		{[]string{"inspect", filepath.Join(junk, "unrelated")}, "not a Pulse data directory"},
		{[]string{"inspect", filepath.Join(junk, "plain")}, "not a Pulse data directory"},
		{[]string{"verify", filepath.Join(junk, "notes.txt")}, "is not a directory"},
	} {
		_, _, err := runPulse(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pulse %s: %v, want an error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	after := checksums(t, junk)
	if len(after) != len(before) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for p, h := range before {
		if !bytes.Equal(h[:], func() []byte { x := after[p]; return x[:] }()) {
			t.Fatalf("%s changed", p)
		}
	}
}

// TestInspectReadOnlyOnEveryDamage damages a partition every way recovery
// reports (missing, renamed, stray and empty segments, a flipped last batch,
// a persisted HWM past the data, a lost manifest) and runs pulse inspect on
// each: the report names the damage and not one byte of any file changes.
func TestInspectReadOnlyOnEveryDamage(t *testing.T) {
	src := t.TempDir()
	part := filepath.Join(src, "topics", "orders", "p00000")
	fillPartition(t, part, 300)
	bases, err := segment.List(part)
	if err != nil || len(bases) < 4 {
		t.Fatalf("segments %v (%v)", bases, err)
	}
	logOf := func(dir string, b int64) string { return filepath.Join(dir, segment.LogFile(b)) }
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"sealed segment deleted", func(t *testing.T, dir string) { os.Remove(logOf(dir, bases[1])) }, "MISSING"},
		{"active segment deleted", func(t *testing.T, dir string) { os.Remove(logOf(dir, bases[len(bases)-1])) }, "MISSING"},
		{"segment renamed", func(t *testing.T, dir string) { os.Rename(logOf(dir, bases[1]), logOf(dir, bases[1]+3)) }, "STRAY"},
		{"stray empty segment", func(t *testing.T, dir string) { os.WriteFile(logOf(dir, 1<<40), nil, 0o644) }, "STRAY"},
		{"last batch flipped", func(t *testing.T, dir string) {
			p := logOf(dir, bases[len(bases)-1])
			b, _ := os.ReadFile(p)
			b[len(b)-3] ^= 1
			os.WriteFile(p, b, 0o644)
			os.Remove(filepath.Join(dir, "snapshot")) // a body flip is found by a scan, or on read
		}, "CORRUPT"},
		{"hwm ahead", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "hwm"), []byte{0, 0, 0, 0, 0, 0, 0x10, 0}, 0o644)
		}, "LOST"},
		{"manifest deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "manifest")) }, "no manifest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			dir := filepath.Join(data, "topics", "orders", "p00000")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := copyTree(part, dir); err != nil {
				t.Fatal(err)
			}
			c.damage(t, dir)
			before := checksums(t, data)
			out, _, err := runPulse(t, "inspect", data)
			if err != nil {
				t.Fatalf("inspect: %v\n%s", err, out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("inspect does not report %q:\n%s", c.want, out)
			}
			after := checksums(t, data)
			if len(after) != len(before) {
				t.Fatalf("inspect added or removed files: %d before, %d after", len(before), len(after))
			}
			for p, h := range before {
				if after[p] != h {
					t.Fatalf("inspect changed %s", p)
				}
			}
		})
	}
}

func copyTree(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
