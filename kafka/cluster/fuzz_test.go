package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// FuzzParseSASL: any setting is accepted as one of the three mechanisms or
// refused with ErrBadSASL, and a refusal never echoes the password.
func FuzzParseSASL(f *testing.F) {
	for _, s := range []string{"PLAIN:u:p", "scram-sha-256:alice:s3:cr:et", "SCRAM-SHA-512:a:", "GSSAPI:u:pw", "PLAIN::pw", "nocolon", "", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSASL(s)
		if err != nil {
			if m != nil {
				t.Fatalf("%q: mechanism and error", s)
			}
			// The error is one of two texts, neither holding the password:
			// the setting with the password cut off, or the mechanism.
			mech, _, _ := strings.Cut(s, ":")
			if e := err.Error(); e != fmt.Sprintf("%v (got %q)", ErrBadSASL, redact(s)) && e != fmt.Sprintf("%v (mechanism %q)", ErrBadSASL, mech) {
				t.Fatalf("%q: error %q", s, e)
			}
			if _, rest, _ := strings.Cut(redact(s), ":"); strings.Count(rest, ":") > 1 {
				t.Fatalf("%q: redacted to %q", s, redact(s))
			}
			return
		}
		switch m.Name() {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			t.Fatalf("%q: mechanism %q", s, m.Name())
		}
	})
}

// FuzzMirroredOffset: headers of any record on the cluster (untrusted) are
// read without panicking, and the mirror's own headers read back exactly.
func FuzzMirroredOffset(f *testing.F) {
	f.Add(0, int64(0), "3", "42")
	f.Add(7, int64(1<<40), "", "-1")
	f.Add(1, int64(5), "1", "9223372036854775808")
	f.Fuzz(func(t *testing.T, p int, off int64, hp, ho string) {
		rec := engine.Record{Headers: []engine.Header{{Key: HeaderMirrorPartition, Value: []byte(hp)}, {Key: HeaderMirrorOffset, Value: []byte(ho)}}}
		mirroredOffset(rec, p)
		if p < 0 || off < 0 {
			return
		}
		got, ok := mirroredOffset(engine.Record{Headers: mirrorHeaders(p, off)}, p)
		if !ok || got != off {
			t.Fatalf("round trip of %d/%d: %d %v", p, off, got, ok)
		}
		if _, ok := mirroredOffset(engine.Record{Headers: mirrorHeaders(p, off)}, p+1); ok {
			t.Fatalf("headers of partition %d read as partition %d", p, p+1)
		}
	})
}
