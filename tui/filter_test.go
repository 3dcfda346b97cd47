package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
)

func TestParseFilter(t *testing.T) {
	rec := tailRec{Record: engine.Record{
		Key:     []byte("User-1"),
		Value:   []byte(`{"user":{"id":42,"name":"ada","tags":["a","b"]},"paid":true,"total":12.5}`),
		Headers: []engine.Header{{Key: "trace", Value: []byte("abc-123")}},
	}}
	for f, want := range map[string]bool{
		"ada": true, "user-1": true, "ABC": true, "nope": false,
		"key:user-1": true, "key:ada": false,
		"h:trace": true, "h:trace=abc": true, "h:trace=zzz": false, "h:span": false,
		".user.id == 42": true, ".user.id != 42": false, ".user.id > 41": true, ".user.id <= 41": false,
		`.user.name == "ada"`: true, `.user.name == "bob"`: false, `.user.tags[1] == "b"`: true,
		".paid == true": true, `.paid == "true"`: false, ".total >= 12.5": true, ".missing == 1": false,
		".missing != 1": true, ".user.tags[9] == 1": false,
		// The operator is the first one in the filter, not one inside the literal.
		`.user.name != "a==b"`: true, `.user.name == "a<b"`: false, `.user.name != "<="`: true,
	} {
		rf, err := parseFilter(f)
		if err != nil {
			t.Errorf("parseFilter(%q): %v", f, err)
			continue
		}
		if got := rf.match(rec); got != want {
			t.Errorf("%q matches %v, want %v", f, got, want)
		}
	}
	for _, bad := range []string{"h:", ".user.id", ".user.id ==", ".user. == 1", ".a[x] == 1", `.a > "x"`, ".a == nope"} {
		if _, err := parseFilter(bad); !errors.Is(err, ErrBadInput) {
			t.Errorf("parseFilter(%q) = %v, want ErrBadInput", bad, err)
		}
	}
	// A value that is not JSON never matches a path.
	if rf, _ := parseFilter(".a == 1"); rf.match(tailRec{Record: engine.Record{Value: []byte("a=1")}}) {
		t.Error("a text value matched a JSON path")
	}
}

// The submitted filter searches the whole log through the engine, far
// beyond the tail's buffer, and keeps the matches in commit-time order.
func TestWholeLogSearch(t *testing.T) {
	e := openEngine(t)
	cfg := engine.DefaultTopicConfig()
	cfg.Partitions = 2
	create(t, e, "big", cfg)
	for b := 0; b < 20; b++ {
		for p := 0; p < 2; p++ {
			recs := make([]engine.Record, 500)
			for i := range recs {
				id := b*1000 + p*500 + i
				recs[i] = engine.Record{Key: []byte(fmt.Sprintf("k%d", id)), Value: []byte(fmt.Sprintf(`{"user":{"id":%d},"pad":"%s"}`, id%1000, strings.Repeat("x", 200)))}
			}
			produce(t, e, "big", p, recs...)
		}
	}
	opts := testOptions(e)
	opts.TailRecords = 300 // the buffer holds 300; the log 20,000
	s := newTestTail(t, opts, "big", allPartitions)
	cmd := s.SubmitFilter(".user.id == 7")
	for cmd != nil {
		msg := run(t, cmd)
		cmd = s.Update(msg)
	}
	if s.search == nil || s.search.running || s.search.full {
		t.Fatalf("search state %+v", s.search)
	}
	// id%1000 == 7: one record in every batch of p0 (ids b*1000+7), none in p1.
	if s.search.matches != 20 || s.rowCount() != 20 || s.search.done != 20000 {
		t.Fatalf("%d matches, %d rows, %d of 20000 offsets read", s.search.matches, s.rowCount(), s.search.done)
	}
	for i := 0; i < s.rowCount(); i++ {
		r := s.rowRecord(i)
		if r.P != 0 || r.Offset != int64(i*500+7) {
			t.Fatalf("match %d is p%d@%d", i, r.P, r.Offset)
		}
	}
	// A new filter drops the old search's results in flight.
	cmd = s.SubmitFilter("key:k1")
	s.SetFilter("")
	if msg := run(t, cmd); s.Update(msg) != nil || s.search != nil {
		t.Fatal("a search went on after its filter was cleared")
	}
}

// Whatever is typed after / parses or gets ErrBadInput, and never panics
// on any value.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"ada", "key:u", "h:trace=abc", ".user.id == 42", `.a[0].b != "x"`, ".a >= -1e3", ".[", ".a[99999999999999999999] == 1", "h:=", ".a == {"} {
		f.Add(s, `{"a":[{"b":"x"}],"user":{"id":42}}`)
	}
	f.Fuzz(func(t *testing.T, filter, value string) {
		rf, err := parseFilter(filter)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("parseFilter(%q): %v", filter, err)
			}
			return
		}
		rf.match(tailRec{Record: engine.Record{Key: []byte(value), Value: []byte(value), Headers: []engine.Header{{Key: value, Value: []byte(value)}}}})
	})
}
