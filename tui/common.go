package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/pulselog/pulse/themes"
)

// Common is the context every screen shares: styles, keys, options, the
// engine and the size of the body area. Screens hold a pointer to the one
// Common of the app, so a theme switch or a resize reaches all of them.
type Common struct {
	Styles *themes.Styles
	Keys   KeyMap
	Opts   Options
	Src    Source

	// Away is the source's Unreachable at the last refresh (nil on a
	// source that cannot be away): the header and a live tail say it.
	Away error

	// Width and Height are the size of the body (the terminal minus the
	// header, breadcrumbs, status and help lines).
	Width, Height int

	nextID int
}

func (c *Common) newID() int { c.nextID++; return c.nextID }

// Screen is one page of the UI: a model with its own help and size. Screens
// are pointers and mutate themselves in Update.
type Screen interface {
	// ID identifies the screen; results of its background work carry it.
	ID() int
	Init() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(width, height int)
	// Crumb is the screen's element of the breadcrumbs.
	Crumb() string
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
}

// capturer is a screen that currently takes text input: single-character
// global keys (q, ?, :, /) go to it instead of the app.
type capturer interface{ Capturing() bool }

// filterable is a screen whose rows the "/" prompt filters.
type filterable interface {
	SetFilter(s string)
	Filter() string
}

// closer is a screen with background work to stop when it is popped.
type closer interface{ Close() }

// refresher is a screen that reloads on ctrl+r and on the refresh timer.
type refresher interface{ Refresh() tea.Cmd }

// targeted is a message for one screen: the result of its background work.
type targeted interface{ target() int }

// to is embedded in a screen's result messages.
type to struct{ id int }

func (t to) target() int { return t.id }

// Messages from screens to the app.
type (
	pushMsg struct{ s []Screen }
	popMsg  struct{}
	// popRefreshMsg pops, then reloads the screen it uncovers (after a
	// change that screen shows, so it does not wait for the next tick).
	popRefreshMsg struct{}
	// selectTopicMsg selects a topic in the topics list, under the screens
	// on top of it (the topic they show, once the user goes back to it).
	selectTopicMsg struct{ name string }
	statusMsg      struct {
		text string
		err  bool
	}
	// confirmMsg asks the user a yes/no question; on yes, the app runs yes.
	confirmMsg struct {
		question string
		yes      tea.Cmd
	}
	// gotoTopicMsg resets the stack to Topics and pushes then, or the
	// topic's partitions when then is empty.
	gotoTopicMsg struct {
		topic string
		then  []Screen
	}
)

func push(s ...Screen) tea.Cmd { return func() tea.Msg { return pushMsg{s} } }
func pop() tea.Msg             { return popMsg{} }
func popRefresh() tea.Msg      { return popRefreshMsg{} }

func selectTopic(name string) tea.Cmd {
	return func() tea.Msg { return selectTopicMsg{name: name} }
}

func status(format string, args ...any) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: fmt.Sprintf(format, args...)} }
}

func errStatus(err error) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: err.Error(), err: true} }
}

func confirm(question string, yes tea.Cmd) tea.Cmd {
	return func() tea.Msg { return confirmMsg{question: question, yes: yes} }
}
