// Package doctest runs the documentation as tests: every sh, bash, js,
// html and python code block of README.md and docs/*.md is extracted and
// run verbatim against a fresh `pulse serve` on the default address
// (127.0.0.1:7450), as a user who copies it would run it. A block that
// fails fails `go test ./...`.
//
// HTML comments on the lines right before a block say how it is judged
// (they do not show in rendered Markdown):
//
//	<!-- not-a-test: reason -->   the block is not run (the reason is required)
//	<!-- test-expect: REGEXP -->  its output must match REGEXP (repeatable); a
//	                              block that runs until stopped passes once
//	                              every expectation matched, and is then stopped
//	<!-- test-then: JS -->        browser blocks: JS runs after the block
//	                              (e.g. a click that the example reacts to)
//
// Without test-expect a block must exit with status 0. How each kind runs:
//
//   - sh, bash: `bash -e -o pipefail`, with the built pulse binary first on
//     PATH, in an empty directory, HOME a fresh directory.
//   - js that imports the "ws" package: Node.js, with the ws package of
//     wsapi/testdata/node.
//   - other js: in headless Chromium, as a module script of a page served
//     from http://127.0.0.1:<port> (console output and uncaught errors are
//     reported back to the test); on Node.js 22 and later also with Node's
//     built-in WebSocket when the block uses no browser-only API.
//   - html: the block is the page, in headless Chromium.
//   - python: /usr/bin/python3 (Debian's python3-websockets).
//
// PULSE_DOCTEST_BINARY=/path/to/pulse runs the documentation against that
// binary instead of a fresh build of this tree.
//
// The blocks run one at a time (a lock file serialises test processes on
// the machine, since they share port 7450).
package doctest
