package main

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The kcat-like flags of tail and produce, against a running pulse serve,
// with exact output.
func TestKcatFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, dir)
	srv := []string{"--server", s.addr}
	run := func(stdin string, args ...string) string {
		t.Helper()
		return mustPulse(t, stdin, append(args, srv...)...)
	}
	run("", "topics", "create", "k", "--partitions", "3")
	run("a:1\nb:2\n", "produce", "k", "-K:", "-p", "0")
	run("c:3\n", "produce", "k", "-K:", "-p", "1", "-H", "trace=abc")
	run("d:4\ne:5\nf:6\n", "produce", "k", "-K", ":", "-p", "2")
	// -K takes kcat's escapes, as -f does: \t is a tab, \x3d is '='.
	run("g\t7\n", "produce", "esc", "-K", `\t`)
	run("h=8\n", "produce", "esc", "-K", `\x3d`)
	if got := run("", "tail", "esc", "-o", "beginning", "-e", "-f", `%k %v\n`); got != "g 7\nh 8\n" {
		t.Errorf("records produced with -K '\\t' and -K '\\x3d' read %q, want keys g and h", got)
	}
	if _, errOut, err := pulse(t, "x\n", append([]string{"produce", "esc", "-K", `\x4`}, srv...)...); err == nil || !strings.Contains(errOut, `-K "\\x4": \x needs two hex digits`) {
		t.Errorf("produce -K '\\x4': %v, %q; want it refused, naming -K", err, errOut)
	}

	// Every partition from the beginning, to the end, in a kcat format.
	out := run("", "tail", "k", "-o", "beginning", "-e", "-f", `%t %p %o %k %v\n`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(lines)
	want := []string{"k 0 0 a 1", "k 0 1 b 2", "k 1 0 c 3", "k 2 0 d 4", "k 2 1 e 5", "k 2 2 f 6"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("tail -o beginning -e -f: %q, want %q", lines, want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "2", "-o", "-2", "-e", "-f", `%o=%s\n`}, "1=5\n2=6\n"},
		{[]string{"-p", "2", "-o", "1", "-c", "1", "-f", `%k%K%S\n`}, "e11\n"},
		{[]string{"-p", "1", "-o", "@0", "-e", "-f", `%h|%v\n`}, "trace=abc|3\n"},
		{[]string{"-p", "0", "-o", "beginning", "-e", "-f", `%p:%o\t`}, "0:0\t0:1\t"},
		{[]string{"-o", "end", "-e"}, ""},
		{[]string{"-o", "@99999999999999", "-e"}, ""}, // nothing after that time: done at once
		{[]string{"-p", "0", "-o", "5", "-e"}, ""},
		{[]string{"-p", "1", "-o", "beginning", "-e", "-f", `\x41%%%v\n`}, "A%3\n"},
	} {
		if got := run("", append([]string{"tail", "k"}, c.args...)...); got != c.want {
			t.Errorf("tail %v printed %q, want %q", c.args, got, c.want)
		}
	}

	// --json: one object per line, with the record's fields.
	out = run("", "tail", "k", "-p", "2", "-o", "beginning", "-e", "--json")
	jl := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(jl) != 3 {
		t.Fatalf("tail --json printed %q", out)
	}
	for i, l := range jl {
		var r struct {
			Partition int             `json:"partition"`
			Offset    int64           `json:"offset"`
			Key       string          `json:"key"`
			Value     json.RawMessage `json:"value"` // a text line reads back as that text
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Partition != 2 || r.Offset != int64(i) || r.Key != string(rune('d'+i)) || string(r.Value) != `"`+string(rune('4'+i))+`"` {
			t.Errorf("--json line %d %q: %+v %v", i, l, r, err)
		}
	}

	// -K: a line without the delimiter has no key.
	run("novalue\nx:y:z\n", "produce", "k2", "-K:")
	if got := run("", "tail", "k2", "-o", "beginning", "-e", "-f", `%K %k %v\n`); got != "-1  novalue\n1 x y:z\n" {
		t.Errorf("-K lines: %q", got)
	}

	// Bad flags say what is wrong.
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", "%q"}, "unknown token %q"},
		{[]string{"-o", "middle"}, `offset "middle": want beginning, end, N, -N or @unix-ms`},
		{[]string{"-p", "7", "-e"}, "partition 7: the topic has 3"},
	} {
		_, errOut, err := pulse(t, "", append(append([]string{"tail", "k"}, bad.args...), srv...)...)
		if err == nil || !strings.Contains(errOut, bad.want) {
			t.Errorf("tail %v: %v, stderr %q, want %q", bad.args, err, errOut, bad.want)
		}
	}
}
