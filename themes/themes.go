// Package themes holds the colour palettes of Pulse's terminal UI and the one
// constructor that turns a palette into the Styles every screen draws with.
//
// A theme is data: a Palette names a colour for each role (text, accent,
// warning, ...). New builds every lipgloss style from those roles, so adding a
// theme means adding a Palette, never touching a screen. The "auto" theme pairs
// the light and dark palettes as adaptive colours, so it follows the
// terminal's background. When colour is off (NO_COLOR, or a terminal without
// colours) the styles carry no colours at all and the UI stays readable through
// text markers alone.
package themes

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// ErrUnknownTheme is returned by Lookup and New for a name no theme has.
var ErrUnknownTheme = errors.New("unknown theme")

// Palette is a theme: one colour (hex "#rrggbb" or an ANSI 256 number) for
// each role the UI draws with. An empty string means "terminal default".
type Palette struct {
	Name string

	Text     string // ordinary text
	Muted    string // secondary text, column headers, help descriptions
	Faint    string // borders, separators, empty sparkline cells
	Accent   string // titles, the header bar, focused fields
	OnAccent string // text drawn on the Accent colour

	Selection   string // background of the selected table row
	OnSelection string // text of the selected table row

	Good string // healthy, active, acked
	Warn string // compacting, paused, hidden tail
	Bad  string // degraded, errors, CRC failures
	Info string // sparse batches, keys in help

	JSONKey    string // object keys in pretty JSON
	JSONString string // string values
	JSONNumber string // numbers
	JSONLit    string // true, false, null

	Spark string // the produce-rate sparkline
}

// Dark is the default palette for dark terminals.
func Dark() Palette {
	return Palette{
		Name:     "dark",
		Text:     "#E4E4E7",
		Muted:    "#9CA3AF",
		Faint:    "#4B5563",
		Accent:   "#7C83FD",
		OnAccent: "#0B0B12",

		Selection:   "#2F3470",
		OnSelection: "#FFFFFF",

		Good: "#4ADE80",
		Warn: "#FACC15",
		Bad:  "#F87171",
		Info: "#38BDF8",

		JSONKey:    "#93C5FD",
		JSONString: "#86EFAC",
		JSONNumber: "#FDBA74",
		JSONLit:    "#F0ABFC",

		Spark: "#7C83FD",
	}
}

// Light is the palette for light terminals.
func Light() Palette {
	return Palette{
		Name:     "light",
		Text:     "#1F2937",
		Muted:    "#6B7280",
		Faint:    "#D1D5DB",
		Accent:   "#4338CA",
		OnAccent: "#FFFFFF",

		Selection:   "#E0E7FF",
		OnSelection: "#111827",

		Good: "#15803D",
		Warn: "#B45309",
		Bad:  "#B91C1C",
		Info: "#0369A1",

		JSONKey:    "#1D4ED8",
		JSONString: "#047857",
		JSONNumber: "#C2410C",
		JSONLit:    "#A21CAF",

		Spark: "#4338CA",
	}
}

// HighContrast uses the 16 basic ANSI colours at full intensity, black and
// white: readable on any background, in any colour-blind-safe configuration
// the terminal offers.
func HighContrast() Palette {
	return Palette{
		Name:     "high-contrast",
		Text:     "15",
		Muted:    "15",
		Faint:    "7",
		Accent:   "11",
		OnAccent: "0",

		Selection:   "15",
		OnSelection: "0",

		Good: "10",
		Warn: "11",
		Bad:  "9",
		Info: "14",

		JSONKey:    "14",
		JSONString: "10",
		JSONNumber: "11",
		JSONLit:    "13",

		Spark: "14",
	}
}

// Auto is the name of the adaptive theme: Light's colours on a light
// background, Dark's on a dark one.
const Auto = "auto"

// Names lists the theme names New accepts, sorted.
func Names() []string {
	names := []string{Auto}
	for _, p := range palettes() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

func palettes() []Palette { return []Palette{Dark(), Light(), HighContrast()} }

// Lookup returns the palette called name ("dark", "light", "high-contrast").
// "auto" is not a palette: see New.
func Lookup(name string) (Palette, error) {
	for _, p := range palettes() {
		if p.Name == name {
			return p, nil
		}
	}
	return Palette{}, fmt.Errorf("%w %q (have %s)", ErrUnknownTheme, name, strings.Join(Names(), ", "))
}

// NoColor reports whether the environment asks for no colour: NO_COLOR set
// to any non-empty value (https://no-color.org).
func NoColor() bool { return os.Getenv("NO_COLOR") != "" }

// Options select a theme for New.
type Options struct {
	// Name is a theme name from Names; "" means Auto.
	Name string
	// NoColor drops every colour (text attributes and markers remain).
	// Callers normally pass NoColor().
	NoColor bool
}

// New returns the Styles of the theme opts names.
func New(opts Options) (Styles, error) {
	name := opts.Name
	if name == "" {
		name = Auto
	}
	if name != Auto {
		if _, err := Lookup(name); err != nil {
			return Styles{}, err
		}
	}
	if opts.NoColor {
		st := newStyles(name, plainColors{})
		st.NoColor = true
		return st, nil
	}
	if name == Auto {
		return newStyles(Auto, adaptiveColors{light: Light(), dark: Dark()}), nil
	}
	p, _ := Lookup(name)
	return newStyles(p.Name, paletteColors{p: p}), nil
}

// MustNew is New for names known to exist (tests, defaults); it panics on an
// unknown name.
func MustNew(opts Options) Styles {
	s, err := New(opts)
	if err != nil {
		panic(err)
	}
	return s
}
