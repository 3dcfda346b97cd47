package wsapi

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/pulselog/pulse/wsapi/internal/wiretest"
)

// The server's fast request decoder may refuse anything and fall back to
// encoding/json, so a differential check alone passes even when it refuses
// everything: wiretest.Gen builds requests inside its documented scope,
// which it must accept and read as encoding/json does. (The client's fast
// parsers have theirs in package wsclient.)

// TestFastPathsAcceptTheirScope runs the in-scope check of FuzzFastDecode
// on fixed inputs, so that `go test` alone catches a fast path that stopped
// accepting what it is for.
func TestFastPathsAcceptTheirScope(t *testing.T) {
	for i := range 300 {
		in := []byte(strconv.Itoa(i * 7919))
		checkFastDecodeScope(t, in)
	}
}

func checkFastDecodeScope(t *testing.T, in []byte) {
	t.Helper()
	g := wiretest.NewGen(in)
	msg := g.Request()
	var fast, slow request
	if !fastDecode(msg, &fast) {
		t.Fatalf("fastDecode refused %s, a request of its shape", msg)
	}
	if err := json.Unmarshal(msg, &slow); err != nil {
		t.Fatalf("encoding/json refuses the generated %s: %v", msg, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast and slow decoders differ on %s:\nfast %+v\nslow %+v", msg, fast, slow)
	}
}
