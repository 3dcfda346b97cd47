package themes

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
)

// Styles is every style the UI draws with, built from one palette by New.
type Styles struct {
	// Name is the theme these styles come from ("dark", "auto", ...).
	Name string
	// NoColor: the styles carry no colours (NO_COLOR).
	NoColor bool

	Text  lipgloss.Style
	Muted lipgloss.Style
	Faint lipgloss.Style
	Bold  lipgloss.Style

	// Header bar and breadcrumbs.
	HeaderBar   lipgloss.Style // the whole first line
	HeaderTitle lipgloss.Style // "pulse"
	HeaderLabel lipgloss.Style // "data", "ws", "sync"
	HeaderValue lipgloss.Style
	Crumb       lipgloss.Style // an ancestor screen
	CrumbActive lipgloss.Style // the current screen
	CrumbSep    lipgloss.Style

	// Tables.
	TableHeader   lipgloss.Style
	TableCell     lipgloss.Style
	TableSelected lipgloss.Style // the selected row
	TableMarker   lipgloss.Style // the "▸" in front of the selected row
	TableEmpty    lipgloss.Style

	// Panels (boxes on the segments and detail screens).
	Panel      lipgloss.Style
	PanelTitle lipgloss.Style

	// Badges and states.
	Good lipgloss.Style
	Warn lipgloss.Style
	Bad  lipgloss.Style
	Info lipgloss.Style

	BadgeDegraded   lipgloss.Style
	BadgeCompacting lipgloss.Style
	BadgeLive       lipgloss.Style
	BadgePaused     lipgloss.Style
	BadgeSealed     lipgloss.Style
	BadgeActive     lipgloss.Style
	BadgeSparse     lipgloss.Style

	// Bottom lines.
	StatusBar     lipgloss.Style
	StatusError   lipgloss.Style
	Prompt        lipgloss.Style // ":" and "/" prompts
	Dialog        lipgloss.Style // confirmation box
	DialogTitle   lipgloss.Style
	FormLabel     lipgloss.Style
	FormFocused   lipgloss.Style // label of the focused field
	FormHint      lipgloss.Style
	Help          help.Styles
	HelpSection   lipgloss.Style
	Spark         lipgloss.Style
	SparkBaseline lipgloss.Style

	// Record detail.
	JSONKey    lipgloss.Style
	JSONString lipgloss.Style
	JSONNumber lipgloss.Style
	JSONLit    lipgloss.Style
	JSONPunct  lipgloss.Style
	HexOffset  lipgloss.Style
	HexBytes   lipgloss.Style
	HexASCII   lipgloss.Style
}

// colors resolves a palette role to a lipgloss colour. The three
// implementations are the whole difference between a fixed palette, the
// adaptive theme and no colour at all.
type colors interface {
	c(role func(Palette) string) lipgloss.TerminalColor
}

type paletteColors struct{ p Palette }

func (pc paletteColors) c(role func(Palette) string) lipgloss.TerminalColor {
	if v := role(pc.p); v != "" {
		return lipgloss.Color(v)
	}
	return lipgloss.NoColor{}
}

type adaptiveColors struct{ light, dark Palette }

func (ac adaptiveColors) c(role func(Palette) string) lipgloss.TerminalColor {
	return lipgloss.AdaptiveColor{Light: role(ac.light), Dark: role(ac.dark)}
}

type plainColors struct{}

func (plainColors) c(func(Palette) string) lipgloss.TerminalColor { return lipgloss.NoColor{} }

// newStyles is the one constructor: every style is derived from palette roles.
func newStyles(name string, cs colors) Styles {
	var (
		text      = cs.c(func(p Palette) string { return p.Text })
		muted     = cs.c(func(p Palette) string { return p.Muted })
		faint     = cs.c(func(p Palette) string { return p.Faint })
		accent    = cs.c(func(p Palette) string { return p.Accent })
		onAccent  = cs.c(func(p Palette) string { return p.OnAccent })
		selection = cs.c(func(p Palette) string { return p.Selection })
		onSel     = cs.c(func(p Palette) string { return p.OnSelection })
		good      = cs.c(func(p Palette) string { return p.Good })
		warn      = cs.c(func(p Palette) string { return p.Warn })
		bad       = cs.c(func(p Palette) string { return p.Bad })
		info      = cs.c(func(p Palette) string { return p.Info })
		jkey      = cs.c(func(p Palette) string { return p.JSONKey })
		jstr      = cs.c(func(p Palette) string { return p.JSONString })
		jnum      = cs.c(func(p Palette) string { return p.JSONNumber })
		jlit      = cs.c(func(p Palette) string { return p.JSONLit })
		spark     = cs.c(func(p Palette) string { return p.Spark })
	)
	st := lipgloss.NewStyle
	badge := func(c lipgloss.TerminalColor) lipgloss.Style { return st().Foreground(c).Bold(true) }

	s := Styles{Name: name}
	s.Text = st().Foreground(text)
	s.Muted = st().Foreground(muted)
	s.Faint = st().Foreground(faint)
	s.Bold = st().Foreground(text).Bold(true)

	s.HeaderBar = st().Foreground(text)
	s.HeaderTitle = st().Foreground(onAccent).Background(accent).Bold(true).Padding(0, 1)
	s.HeaderLabel = st().Foreground(muted)
	s.HeaderValue = st().Foreground(text)
	s.Crumb = st().Foreground(muted)
	s.CrumbActive = st().Foreground(accent).Bold(true)
	s.CrumbSep = st().Foreground(faint)

	s.TableHeader = st().Foreground(muted).Bold(true)
	s.TableCell = st().Foreground(text)
	s.TableSelected = st().Foreground(onSel).Background(selection).Bold(true)
	s.TableMarker = st().Foreground(accent).Bold(true)
	s.TableEmpty = st().Foreground(muted).Italic(true)

	s.Panel = st().Border(lipgloss.RoundedBorder()).BorderForeground(faint).Padding(0, 1)
	s.PanelTitle = st().Foreground(accent).Bold(true)

	s.Good = st().Foreground(good)
	s.Warn = st().Foreground(warn)
	s.Bad = st().Foreground(bad).Bold(true)
	s.Info = st().Foreground(info)

	s.BadgeDegraded = badge(bad)
	s.BadgeCompacting = badge(warn)
	s.BadgeLive = badge(good)
	s.BadgePaused = badge(warn)
	s.BadgeSealed = st().Foreground(muted)
	s.BadgeActive = badge(good)
	s.BadgeSparse = st().Foreground(info)

	s.StatusBar = st().Foreground(muted)
	s.StatusError = st().Foreground(bad).Bold(true)
	s.Prompt = st().Foreground(accent).Bold(true)
	s.Dialog = st().Border(lipgloss.DoubleBorder()).BorderForeground(warn).Padding(0, 2)
	s.DialogTitle = st().Foreground(warn).Bold(true)
	s.FormLabel = st().Foreground(muted)
	s.FormFocused = st().Foreground(accent).Bold(true)
	s.FormHint = st().Foreground(faint)
	s.Help = help.Styles{
		Ellipsis:       st().Foreground(faint),
		ShortKey:       st().Foreground(info),
		ShortDesc:      st().Foreground(muted),
		ShortSeparator: st().Foreground(faint),
		FullKey:        st().Foreground(info),
		FullDesc:       st().Foreground(muted),
		FullSeparator:  st().Foreground(faint),
	}
	s.HelpSection = st().Foreground(accent).Bold(true)
	s.Spark = st().Foreground(spark)
	s.SparkBaseline = st().Foreground(faint)

	s.JSONKey = st().Foreground(jkey)
	s.JSONString = st().Foreground(jstr)
	s.JSONNumber = st().Foreground(jnum)
	s.JSONLit = st().Foreground(jlit)
	s.JSONPunct = st().Foreground(muted)
	s.HexOffset = st().Foreground(muted)
	s.HexBytes = st().Foreground(text)
	s.HexASCII = st().Foreground(info)
	return s
}
