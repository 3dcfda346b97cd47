package engine

import "fmt"

// MaxTopicNameLen is the longest topic name accepted (Kafka's limit).
const MaxTopicNameLen = 249

// ValidateTopicName checks a topic name against Kafka's rule: 1–249
// characters of [a-zA-Z0-9._-], and neither "." nor "..". A name that passes
// is safe to use as a single path element.
func ValidateTopicName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidTopic)
	}
	if len(name) > MaxTopicNameLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrInvalidTopic, len(name), MaxTopicNameLen)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidTopic, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return fmt.Errorf("%w: %q has character %q at %d (allowed: a-z A-Z 0-9 . _ -)", ErrInvalidTopic, name, c, i)
		}
	}
	return nil
}
