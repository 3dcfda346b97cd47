package engine

import "github.com/pulselog/pulse/meta"

// Meta is the metadata store, for tests that check what was stored.
func (e *Engine) Meta() *meta.Store { return e.meta }
