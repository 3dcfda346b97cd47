// Package units reads and writes the human units Pulse's UI and command line
// share: sizes ("64MiB", "1.5 GiB", "512k", "4096") and durations ("90s",
// "1h30m", "7d", "1d12h"). It is the one parser of both.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("not a valid value")

// MaxDurationMillis is the most whole milliseconds a time.Duration holds
// (about 292 years): a millisecond field of the wire protocols past it
// cannot be a Duration.
const MaxDurationMillis = math.MaxInt64 / int64(time.Millisecond)

// maxBytes bounds sizes (well above any segment or retention limit).
const maxBytes = 1 << 62

// ParseBytes reads a size: a number with an optional binary unit (B, k/KiB/KB,
// m/MiB/MB, g/GiB/GB, t/TiB/TB; all powers of 1024), case and spaces ignored.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{
		{"tib", 1 << 40}, {"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10},
		{"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10},
		{"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1},
	} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	if mult == 1 {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil && n >= 0 && n <= maxBytes {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f*float64(mult) > maxBytes {
		return 0, fmt.Errorf("size %q (want e.g. 64MiB, 1.5GiB, 1048576): %w", s, ErrSyntax)
	}
	return int64(f * float64(mult)), nil
}

// ParseDuration reads a duration: Go's syntax ("90s", "1h30m") with a
// leading whole number of days allowed ("7d", "1d12h"). Negative durations
// are refused; "" is an error (callers decide what empty means).
func ParseDuration(s string) (time.Duration, error) {
	v := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	bad := fmt.Errorf("duration %q (want e.g. 30m, 1h, 7d, 1d12h): %w", s, ErrSyntax)
	var days time.Duration
	if i := strings.IndexByte(v, 'd'); i >= 0 {
		n, err := strconv.ParseInt(v[:i], 10, 64)
		if err != nil || n < 0 || n > int64(math.MaxInt64/(24*time.Hour)) {
			return 0, bad
		}
		days, v = time.Duration(n)*24*time.Hour, v[i+1:]
		if v == "" {
			return days, nil
		}
	}
	if v == "" || strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+") {
		return 0, bad
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > math.MaxInt64-days {
		return 0, bad
	}
	return days + d, nil
}

// FormatBytes renders n bytes with binary units: "0 B", "812 B", "4.0 KiB".
func FormatBytes(n int64) string {
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

// FormatDuration renders d compactly: "750ms", "30s", "5m", "2h30m", "7d".
// Below two days it is exact to the second (minute above an hour); from two
// days on it is whole days, with the remaining hours when there are any
// ("2d12h").
func FormatDuration(d time.Duration) string {
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
	days, hours := int64(d/(24*time.Hour)), int64(d%(24*time.Hour)/time.Hour)
	if hours != 0 {
		return fmt.Sprintf("%dd%dh", days, hours)
	}
	return fmt.Sprintf("%dd", days)
}
