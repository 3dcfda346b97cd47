package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
)

// humanBytes renders n bytes with binary units: "0 B", "812 B", "4.0 KiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// parseBytes reads "64MiB", "1 MiB", "512k", "4096".
func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%w: size %q (want e.g. 64MiB, 1.5GiB, 1048576)", ErrBadInput, s)
	}
	return int64(f * float64(mult)), nil
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
func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		if s := int(d.Seconds()) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", int(d.Minutes()), s)
		}
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		if m := int(d.Minutes()) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", int(d.Hours()), m)
		}
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

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

// oneLine makes b printable on one row: control characters and newlines
// become spaces, invalid UTF-8 becomes "·".
func oneLine(b []byte, max int) string {
	if len(b) > max*4 {
		b = b[:max*4]
	}
	var sb strings.Builder
	for _, r := range string(b) {
		switch {
		case r == '\uFFFD':
			sb.WriteRune('·')
		case r < 0x20 || r == 0x7f:
			sb.WriteByte(' ')
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// plural renders a count with its noun: "1 record", "1,200 records".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return humanCount(n) + " " + many
}
