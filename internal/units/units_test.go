package units

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"4096": 4096, "0": 0, "512k": 512 << 10, "64MiB": 64 << 20, "16mib": 16 << 20, "1 GiB": 1 << 30,
		"1.5GiB": 3 << 29, "2TB": 2 << 40, "10 B": 10, "1KB": 1024,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "-1k", "NaN", "Inf", "1e400", "9999999999t", "12 parsecs", "0x10"} {
		if n, err := ParseBytes(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseBytes(%q) = %d, %v; want ErrSyntax", bad, n, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "1h": time.Hour, "1h30m": 90 * time.Minute, "7d": 7 * 24 * time.Hour,
		"1d12h": 36 * time.Hour, "0s": 0, "0d": 0, "250ms": 250 * time.Millisecond,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-1h", "-7d", "7", "1x", "1d-2h", "d1h", "99999999999999d", "1d+1h", "3600000"} {
		if d, err := ParseDuration(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseDuration(%q) = %v, %v; want ErrSyntax", bad, d, err)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 90 * time.Second, time.Hour, 90 * time.Minute, 7 * 24 * time.Hour, 60 * time.Hour} {
		got, err := ParseDuration(FormatDuration(d))
		if err != nil || got != d {
			t.Errorf("%v → %q → %v, %v", d, FormatDuration(d), got, err)
		}
	}
	if s := FormatBytes(64 << 20); s != "64.0 MiB" {
		t.Errorf("FormatBytes(64 MiB) = %q", s)
	}
}

// Whatever is typed gets a value or ErrSyntax; exact values round-trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"64MiB", "1.5 GiB", "7d", "1d12h", "-5m", "1e400", "9999999999999999999k", "NaN", "+Inf", "4096", "0d0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseBytes(s); err == nil {
			if n < 0 || n > maxBytes {
				t.Fatalf("ParseBytes(%q) = %d", s, n)
			}
			if back, err := ParseBytes(strconv.FormatInt(n, 10)); err != nil || back != n {
				t.Fatalf("%d does not round-trip: %d, %v", n, back, err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseBytes(%q): %v", s, err)
		}
		if d, err := ParseDuration(s); err == nil {
			if d < 0 {
				t.Fatalf("ParseDuration(%q) = %v", s, d)
			}
			if back, err := ParseDuration(d.String()); err != nil || back != d {
				t.Fatalf("%v does not round-trip: %v, %v", d, back, err)
			}
		} else if !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseDuration(%q): %v", s, err)
		}
	})
}
