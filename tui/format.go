package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/pulselog/pulse/internal/units"
)

// humanBytes renders n bytes with binary units: "0 B", "812 B", "4.0 KiB".
func humanBytes(n int64) string { return units.FormatBytes(n) }

// parseBytes reads "64MiB", "1 MiB", "512k", "4096" (internal/units).
func parseBytes(s string) (int64, error) {
	n, err := units.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return n, nil
}

// humanCount renders a count with thousands separators: 1,234,567.
func humanCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ratio renders raw/stored as "3.2x", or "-" when unknown.
func ratio(raw, stored int64) string {
	if raw <= 0 || stored <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", float64(raw)/float64(stored))
}

// humanDuration renders d compactly: "750ms", "30s", "5m", "2h30m", "7d".
func humanDuration(d time.Duration) string { return units.FormatDuration(d) }

// sparkline draws samples (oldest first) as width cells of ▁..█ scaled to
// the largest sample; missing history is blank.
func sparkline(samples []float64, width int) string {
	const levels = "▁▂▃▄▅▆▇█"
	lv := []rune(levels)
	if width <= 0 {
		return ""
	}
	if len(samples) > width {
		samples = samples[len(samples)-width:]
	}
	max := 0.0
	for _, v := range samples {
		if v > max {
			max = v
		}
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", width-len(samples)))
	for _, v := range samples {
		i := 0
		if max > 0 && v > 0 {
			i = int(v / max * float64(len(lv)-1))
			if i == 0 {
				i = 1
			}
		}
		b.WriteRune(lv[i])
	}
	return b.String()
}

// truncate cuts s to at most w cells, ending with "…" when cut. s must be
// plain text (no escape sequences).
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if isASCII(s) {
		if len(s) <= w {
			return s
		}
		return s[:w-1] + "…"
	}
	if lipgloss.Width(s) <= w {
		return s
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		rw := lipgloss.Width(string(r))
		if used+rw > w-1 {
			break
		}
		b.WriteRune(r)
		used += rw
	}
	return b.String() + "…"
}

// isASCII reports whether s is printable ASCII (one cell per byte).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// padRow is a row of padded plain-text cells made w cells wide: cut, with
// …, only when text of it does not fit, not when only its padding does.
func padRow(cells string, w int) string {
	return pad(strings.TrimRight(cells, " "), w, false)
}

// fieldsLine joins fields, most telling first, into one indented line of
// at most w cells: those that do not fit are left out whole, from the
// last, and " · …" says so.
func fieldsLine(fields []string, w int) string {
	line := "  " + strings.Join(fields, " · ")
	for n := len(fields) - 1; n > 0 && lipgloss.Width(line) > w; n-- {
		line = "  " + strings.Join(fields[:n], " · ") + " · …"
	}
	return truncate(line, w)
}

// styledText is a piece of a row and the style it is drawn in.
type styledText struct {
	style lipgloss.Style
	text  string
}

// renderCut draws the pieces as one row of w cells, cut where padRow cuts
// their text (with … when text is cut), each piece in its style.
func renderCut(w int, pieces []styledText) string {
	var all strings.Builder
	for _, p := range pieces {
		all.WriteString(p.text)
	}
	row := []rune(padRow(all.String(), w))
	var b strings.Builder
	for i, p := range pieces {
		n := utf8.RuneCountInString(p.text)
		if i == len(pieces)-1 || n > len(row) {
			n = len(row) // the last piece takes the … and the padding
		}
		if n > 0 {
			b.WriteString(p.style.Render(string(row[:n])))
		}
		row = row[n:]
	}
	return b.String()
}

// pad fits plain s into exactly w cells, left- or right-aligned.
func pad(s string, w int, right bool) string {
	s = truncate(s, w)
	var gap int
	if isASCII(s) {
		gap = w - len(s)
	} else {
		gap = w - lipgloss.Width(s)
	}
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

// oneLine makes b printable on one row: in text, control characters and
// newlines become spaces; bytes that are not text (invalid UTF-8, or NUL
// and other C0 controls besides tab, newline and carriage return) are
// shown escaped the way Go quotes them, e.g. \xff\x00\x01.
func oneLine(b []byte, max int) string {
	if len(b) > max*4 {
		b = b[:max*4]
		// Do not count a rune cut by the limit as binary.
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	if isBinary(b) {
		q := strconv.Quote(string(b))
		return q[1 : len(q)-1]
	}
	var sb strings.Builder
	for _, r := range string(b) {
		switch {
		case r == '\uFFFD':
			sb.WriteRune('·')
		case isControl(r):
			sb.WriteByte(' ')
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// isControl reports whether r is a C0 or C1 control character, DEL or a
// bidirectional formatting character: written raw, such a rune would drive
// the terminal (move the cursor, set its title, start an escape sequence)
// or reorder what it shows, instead of showing up.
func isControl(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f: // ALM, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return false
}

// escapeControls shows text with its control characters, except newline
// and tab, escaped the way Go quotes them (\x1b, \r, \a, \u009b), so
// that a record's bytes can never drive the user's terminal.
func escapeControls(s string) string {
	return escapeRunes(s, func(r rune) bool { return isControl(r) && r != '\n' && r != '\t' })
}

// escapeRunes replaces each rune of s that esc picks by its Go escape.
func escapeRunes(s string, esc func(rune) bool) string {
	if !strings.ContainsFunc(s, esc) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if esc(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hardWrap breaks each line of plain text s that is wider than w cells
// into lines of at most w cells (tabs count as the 4 spaces lipgloss draws
// them as), so that a long value is all on screen rather than cut.
func hardWrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	s = strings.ReplaceAll(s, "\t", "    ")
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if isASCII(l) {
			for len(l) > w {
				out = append(out, l[:w])
				l = l[w:]
			}
			out = append(out, l)
			continue
		}
		if lipgloss.Width(l) <= w {
			out = append(out, l)
			continue
		}
		var b strings.Builder
		used := 0
		for _, r := range l {
			rw := lipgloss.Width(string(r))
			if used+rw > w {
				out = append(out, b.String())
				b.Reset()
				used = 0
			}
			b.WriteRune(r)
			used += rw
		}
		out = append(out, b.String())
	}
	return strings.Join(out, "\n")
}

// orNA is f() when known, else "n/a": a value the source cannot tell is
// never shown as zero.
func orNA(known bool, f func() string) string {
	if !known {
		return "n/a"
	}
	return f()
}

// isBinary reports whether b is not text.
func isBinary(b []byte) bool {
	if !utf8.Valid(b) {
		return true
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return true
		}
	}
	return false
}

// plural renders a count with its noun: "1 record", "1,200 records".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return humanCount(n) + " " + many
}
