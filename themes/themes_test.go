package themes

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestPalettesFillEveryRole(t *testing.T) {
	for _, p := range palettes() {
		v := reflect.ValueOf(p)
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).String() == "" {
				t.Errorf("palette %q: role %s is empty", p.Name, v.Type().Field(i).Name)
			}
		}
	}
}

func TestNamesAndLookup(t *testing.T) {
	want := []string{"auto", "dark", "high-contrast", "light"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		s, err := New(Options{Name: n})
		if err != nil {
			t.Fatalf("New(%q): %v", n, err)
		}
		if s.Name != n {
			t.Errorf("New(%q).Name = %q", n, s.Name)
		}
	}
	if s := MustNew(Options{}); s.Name != Auto {
		t.Errorf("default theme = %q, want auto", s.Name)
	}
}

func TestUnknownThemeNamesTheChoices(t *testing.T) {
	_, err := New(Options{Name: "solarized"})
	if !errors.Is(err, ErrUnknownTheme) {
		t.Fatalf("err = %v, want ErrUnknownTheme", err)
	}
	for _, s := range []string{"solarized", "dark", "light", "high-contrast"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

// With a colour terminal, each theme paints differently and NoColor paints
// nothing at all.
func TestColoursFollowThePalette(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	lipgloss.SetHasDarkBackground(true)
	defer lipgloss.SetColorProfile(termenv.Ascii)

	seen := map[string]string{}
	for _, n := range []string{"dark", "light", "high-contrast"} {
		out := MustNew(Options{Name: n}).Bad.Render("degraded")
		if !strings.Contains(out, "\x1b[") {
			t.Fatalf("theme %s: no escape sequence in %q", n, out)
		}
		if prev, ok := seen[out]; ok {
			t.Errorf("themes %s and %s render the same: %q", prev, n, out)
		}
		seen[out] = n
	}
	// auto on a dark background is the dark palette.
	if a, d := MustNew(Options{Name: Auto}).Bad.Render("x"), MustNew(Options{Name: "dark"}).Bad.Render("x"); a != d {
		t.Errorf("auto on dark = %q, dark = %q", a, d)
	}
	lipgloss.SetHasDarkBackground(false)
	if a, l := MustNew(Options{Name: Auto}).Bad.Render("x"), MustNew(Options{Name: "light"}).Bad.Render("x"); a != l {
		t.Errorf("auto on light = %q, light = %q", a, l)
	}

	plain := MustNew(Options{Name: "dark", NoColor: true})
	if plain.Name != "dark" || !plain.NoColor {
		t.Errorf("no-colour styles: name %q, NoColor %v", plain.Name, plain.NoColor)
	}
	for _, st := range []lipgloss.Style{plain.Bad, plain.Text, plain.Spark, plain.TableHeader, plain.HeaderTitle} {
		if out := st.Render("x"); strings.Contains(out, "38;") || strings.Contains(out, "48;") {
			t.Errorf("NoColor style renders a colour: %q", out)
		}
	}
}

func TestNoColorFromEnvironment(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	if NoColor() {
		t.Error("empty NO_COLOR must not disable colour")
	}
	t.Setenv("NO_COLOR", "1")
	if !NoColor() {
		t.Error("NO_COLOR=1 must disable colour")
	}
}
