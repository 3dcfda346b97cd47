package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/engine"
)

// Record keys, values and headers are whatever producers sent: the tail row
// and the detail view must render any bytes within the screen, without
// panicking.
func FuzzRecordRendering(f *testing.F) {
	for _, seed := range []struct{ key, value, hkey, hval string }{
		{"cust-1", `{"order":1,"items":[{"sku":"a","qty":2}],"paid":true,"note":null}`, "source", "checkout"},
		{"", "plain text with\nnewlines\tand tabs", "", ""},
		{"\x00\xff\xfe", "\x1b[31mred\x1b[0m \x07 bell", "k\x00", "\xc3\x28"},
		{"ключ", `{"名前":"値","emoji":"🎉","n":-1.5e10}`, "ü", "ß"},
		{"k", `{"unterminated": "string`, "h", "v"},
		{"k", `"\u0000\ud800"`, "h", "v"},
		{"k\u009b2J", "log \x1b]0;title\x07 line\r\nnext \u009b31m", "h\x1b[2J", "v\u009b"},
		{"k", "{\"a\":\"\x7f\u009b2J\"}", "h", "v"},
		{"k\u202e", "text \u202ereversed\u2066 isolate\u2069", "h\u200f", "v"},
	} {
		f.Add(seed.key, seed.value, seed.hkey, seed.hval)
	}
	e := openEngine(f)
	m, err := New(testOptions(e))
	if err != nil {
		f.Fatal(err)
	}
	c := m.c
	c.Width, c.Height = 80, 24
	f.Fuzz(func(t *testing.T, key, value, hkey, hval string) {
		r := engine.Record{Offset: 7, Key: []byte(key), Value: []byte(value), Headers: []engine.Header{{Key: hkey, Value: []byte(hval)}}}
		d := newDetailScreen(c, "fuzz", 0, r)
		d.SetSize(80, 24)
		for _, hex := range []bool{false, true} {
			d.hex = hex
			d.render()
			for i, l := range strings.Split(d.View(), "\n") {
				if w := lipgloss.Width(l); w > 80 {
					t.Fatalf("detail line %d is %d cells wide: %q", i, w, l)
				}
				noControls(t, "detail", l)
			}
		}
		s := newTailScreen(c, "fuzz", 0)
		s.SetSize(80, 24)
		s.appendRecs(0, []engine.Record{r})
		for i, l := range strings.Split(s.View(), "\n") {
			if w := lipgloss.Width(l); w > 80 {
				t.Fatalf("tail line %d is %d cells wide: %q", i, w, l)
			}
			noControls(t, "tail", l)
		}
	})
}

// noControls fails when a rendered line (in the Ascii colour profile of the
// tests, where styles add no escapes) holds a control character: a record's
// ESC, CR, BEL or C1 bytes written raw would drive the user's terminal, and
// bidirectional controls would reorder what it shows.
func noControls(t *testing.T, where, line string) {
	t.Helper()
	for _, r := range line {
		if r < 0x20 && r != '\t' || r >= 0x7f && r <= 0x9f || isBidiFormat(r) {
			t.Fatalf("%s line holds control character %U: %q", where, r, line)
		}
	}
}

// What users type into prompts and forms gets a clear error or a value,
// never a panic.
func FuzzPromptInput(f *testing.F) {
	for _, s := range []string{"64MiB", "1.5 GiB", "-5m", "15:04", "2026-01-02 03:04:05", "k=v, a=b", "=x", "", "1e400", "9999999999999999999k", "NaN", "-0", "+Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseBytes(s); err == nil && n < 0 {
			t.Fatalf("parseBytes(%q) = %d", s, n)
		}
		_, _ = parseWhen(s, testClock)
		if n, err := parseOffset(s); err == nil && n < 0 {
			t.Fatalf("parseOffset(%q) = %d", s, n)
		} else if err != nil && !errors.Is(err, ErrBadInput) {
			t.Fatalf("parseOffset(%q): %v", s, err)
		}
		if hs, err := parseHeaders(s); err == nil {
			for _, h := range hs {
				if h.Key == "" {
					t.Fatalf("parseHeaders(%q) gave an empty key", s)
				}
			}
		}
		if d, err := parseAge(s); err == nil && d < 0 {
			t.Fatalf("parseAge(%q) = %v", s, d)
		}
	})
}

// isBidiFormat lists the bidirectional formatting characters on its own, so
// that the test does not lean on the code it checks.
func isBidiFormat(r rune) bool {
	return r == 0x200e || r == 0x200f || r == 0x061c || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
