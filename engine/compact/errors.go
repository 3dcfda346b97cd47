package compact

import "errors"

// Errors of a compaction pass. None is returned by Run: a full dedupe map
// ends the pass with OutcomeKeyCap, and other failures are wrapped I/O,
// codec (*codec.CorruptError) or engine/plog errors, matched with errors.Is.
var (
	// errKeyCap: the log holds more distinct keys than Options.MaxKeys.
	errKeyCap = errors.New("dedupe map full")
)
