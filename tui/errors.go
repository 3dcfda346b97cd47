package tui

import "errors"

// Errors of the UI, matched with errors.Is.
var (
	// ErrNoSource: Options.Source is nil.
	ErrNoSource = errors.New("tui: no source")
	// ErrUnknownCommand: the ":" command line got a command it does not know.
	ErrUnknownCommand = errors.New("unknown command")
	// ErrBadInput: a form or prompt field does not parse.
	ErrBadInput = errors.New("bad input")
	// ErrNotAvailable: the engine does not offer what was asked (an optional
	// interface is missing).
	ErrNotAvailable = errors.New("not available from this engine")
	// ErrNeedsDataDir: a view reads local files and the source (a Kafka
	// cluster) has none.
	ErrNeedsDataDir = errors.New("needs a local data dir")
)
