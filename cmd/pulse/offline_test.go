package main

import "github.com/pulselog/pulse/internal/offline"

// What the tests of the commands on a data dir at rest read and build with.

// verifySummary is the document `pulse verify --json` prints.
type verifySummary = offline.VerifySummary
