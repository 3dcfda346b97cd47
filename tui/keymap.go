package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key binding of the UI. Screens match input only with
// key.Matches against these bindings, and build their help from them.
// Nothing here uses ctrl+s or ctrl+q, which terminals and tmux swallow.
type KeyMap struct {
	// Navigation, in every table.
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Enter    key.Binding
	Back     key.Binding

	// Global.
	Help      key.Binding
	Filter    key.Binding
	Command   key.Binding
	Refresh   key.Binding
	Quit      key.Binding
	ForceQuit key.Binding

	// Screens reached from a selection.
	Tail    key.Binding
	Produce key.Binding
	Create  key.Binding
	Delete  key.Binding
	// Edit opens the topic configuration form.
	Edit key.Binding
	// Recovery opens the recovery inspector of the selected partition.
	Recovery key.Binding
	// CrashLab opens the crash lab on the selected partition.
	CrashLab key.Binding
	// Frames opens the frame browser of the selected segment.
	Frames key.Binding
	// Expose makes a partition's hidden tail visible (recovery screen).
	Expose key.Binding

	// Segments screen.
	CompactNow key.Binding
	RetainNow  key.Binding

	// Tail screen.
	Pause      key.Binding
	JumpOffset key.Binding
	JumpTime   key.Binding
	Earliest   key.Binding
	Latest     key.Binding
	NextPart   key.Binding
	PrevPart   key.Binding
	// Partition is NextPart and PrevPart together, for the footer.
	Partition key.Binding

	// Record detail.
	Hex  key.Binding
	Copy key.Binding

	// Forms and dialogs.
	NextField key.Binding
	PrevField key.Binding
	Submit    key.Binding
	Confirm   key.Binding
	Cancel    key.Binding
}

// DefaultKeyMap returns Pulse's bindings: vi keys and arrows, k9s habits
// (? help, / filter, : command, esc back).
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:       b("↑/k", "up", "up", "k"),
		Down:     b("↓/j", "down", "down", "j"),
		PageUp:   b("pgup/ctrl+b", "page up", "pgup", "ctrl+b", "ctrl+u"),
		PageDown: b("pgdn/ctrl+f", "page down", "pgdown", "ctrl+f", "ctrl+d"),
		Top:      b("g/home", "top", "g", "home"),
		Bottom:   b("G/end", "bottom", "G", "end"),
		Enter:    b("enter", "open", "enter"),
		Back:     b("esc", "back", "esc"),

		Help:      b("?", "help", "?"),
		Filter:    b("/", "filter", "/"),
		Command:   b(":", "command", ":"),
		Refresh:   b("ctrl+r", "refresh", "ctrl+r"),
		Quit:      b("q", "quit", "q"),
		ForceQuit: b("ctrl+c", "quit", "ctrl+c"),

		Tail:     b("t", "tail", "t"),
		Produce:  b("p", "produce", "p"),
		Create:   b("n", "new topic", "n"),
		Delete:   b("d", "delete topic", "d"),
		Edit:     b("e", "edit config", "e"),
		Recovery: b("R", "recovery", "R"),
		CrashLab: b("L", "crash lab", "L"),
		Frames:   b("f", "frames", "f"),
		Expose:   b("E", "expose hidden tail", "E"),

		CompactNow: b("C", "compact now", "C"),
		RetainNow:  b("X", "retention now", "X"),

		Pause:      b("space", "pause/resume", " "),
		JumpOffset: b("o", "jump to offset", "o"),
		JumpTime:   b("@", "jump to time", "@"),
		Earliest:   b("e", "earliest", "e"),
		Latest:     b("l", "latest", "l"),
		NextPart:   b("]", "next partition", "]"),
		PrevPart:   b("[", "prev partition", "["),
		Partition:  b("[/]", "partition", "[", "]"),

		Hex:  b("x", "hex/text", "x"),
		Copy: b("c", "copy (OSC 52)", "c"),

		NextField: b("tab", "next field", "tab"),
		PrevField: b("shift+tab", "prev field", "shift+tab"),
		Submit:    b("alt+enter/ctrl+g", "submit", "alt+enter", "ctrl+g"),
		Confirm:   b("y", "yes", "y"),
		Cancel:    b("n/esc", "no", "n", "esc"),
	}
}
