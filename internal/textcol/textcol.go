// Package textcol lays lines of plain text out in columns, for reports
// printed side by side (the crash lab's healthy and faulted copies, in pulse
// crashlab and the terminal UI).
package textcol

import "strings"

// SideBySide lays two reports' lines out in two columns, left at least
// width cells wide (0: as wide as its longest line), with a title above
// each.
func SideBySide(leftTitle string, left []string, rightTitle string, right []string, width int) []string {
	w := max(width, len(leftTitle))
	if width <= 0 {
		for _, l := range left {
			w = max(w, len([]rune(l)))
		}
	}
	cut := func(s string) string {
		r := []rune(s)
		if len(r) > w {
			return string(r[:w-1]) + "…"
		}
		return s + strings.Repeat(" ", w-len(r))
	}
	out := []string{cut(leftTitle) + " │ " + rightTitle}
	for i := 0; i < max(len(left), len(right)); i++ {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out = append(out, strings.TrimRight(cut(l)+" │ "+r, " "))
	}
	return out
}
