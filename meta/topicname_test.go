package meta

import (
	"errors"
	"strings"
	"testing"
)

// A name too long says how long it is in the unit the limit counts: bytes,
// which are characters for every name the rule allows, and not for the
// unicode name it refuses.
func TestTopicNameTooLongCountsBytes(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{strings.Repeat("a", 250), "250 bytes long, at most 249"},
		{strings.Repeat("é", 125), "250 bytes long, at most 249"},
	} {
		err := ValidateTopicName(c.name)
		if !errors.Is(err, ErrInvalidTopic) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a name of %d bytes: %v, want %q", len(c.name), err, c.want)
		}
	}
	if err := ValidateTopicName(strings.Repeat("a", 249)); err != nil {
		t.Errorf("249 bytes: %v", err)
	}
}
