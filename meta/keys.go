package meta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bucket names (see the package documentation for the key space).
const (
	BucketSchema     = "schema"
	BucketIdentity   = "identity"
	BucketTopics     = "topics"
	BucketPartitions = "partitions"
	BucketCursors    = "cursors"
	BucketReports    = "reports"
)

// buckets lists every bucket Open creates, in key-space order.
var buckets = [...]string{BucketSchema, BucketIdentity, BucketTopics, BucketPartitions, BucketCursors, BucketReports}

// Keys inside the schema and identity buckets.
const (
	keySchemaVersion  = "version"
	keyClusterCurrent = "cluster/current"
	keyBrokerCurrent  = "broker/current"
	clusterPrefix     = "cluster/"
	brokerPrefix      = "broker/"
)

// Limits on names and numbers that become key parts.
const (
	// MaxTopicNameLen is the longest topic name (Kafka's limit, as the engine).
	MaxTopicNameLen = 249
	// MaxConsumerNameLen is the longest consumer name, in bytes.
	MaxConsumerNameLen = 249
	// MaxReportKindLen is the longest report kind.
	MaxReportKindLen = 64
	// MaxPartitions bounds a topic's partition count, so that a bad config
	// cannot make one commit write millions of partition records.
	MaxPartitions = 100000
)

// Report kinds the engine stores. Any kind passing ValidateReportKind is
// accepted; these are the ones Pulse writes.
const (
	ReportRecovery   = "recovery"
	ReportCompaction = "compaction"
	ReportRetention  = "retention"
)

const offsetLen = 8 // cursor value and schema version: int64 big-endian

// ValidateTopicName checks name against Pulse's topic-name rule (Kafka's):
// 1–249 characters of [a-zA-Z0-9._-], not "." or "..". It is the one
// implementation of the rule; engine.ValidateTopicName calls it.
func ValidateTopicName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidTopic)
	}
	if len(name) > MaxTopicNameLen {
		return fmt.Errorf("%w: %d bytes long, at most %d (of a-z A-Z 0-9 . _ -)", ErrInvalidTopic, len(name), MaxTopicNameLen)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidTopic, name)
	}
	for i := 0; i < len(name); i++ {
		if !topicChar(name[i]) {
			// Name the character, not its first byte: a non-ASCII one
			// is several bytes of UTF-8 (or a byte that is no UTF-8).
			r, _ := utf8.DecodeRuneInString(name[i:])
			return fmt.Errorf("%w: %q has character %q at byte %d (allowed: a-z A-Z 0-9 . _ -)", ErrInvalidTopic, name, r, i)
		}
	}
	return nil
}

func topicChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ValidateConsumerName checks a consumer name: 1–249 bytes without '/' or
// NUL. Anything else (spaces, unicode) is allowed.
func ValidateConsumerName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidConsumer)
	}
	if len(name) > MaxConsumerNameLen {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidConsumer, len(name), MaxConsumerNameLen)
	}
	if i := strings.IndexAny(name, "/\x00"); i >= 0 {
		return fmt.Errorf("%w: %q has %q at %d ('/' and NUL are not allowed)", ErrInvalidConsumer, name, name[i], i)
	}
	return nil
}

// ValidateReportKind checks a report kind: 1–64 characters of [a-z0-9-].
func ValidateReportKind(kind string) error {
	if kind == "" {
		return fmt.Errorf("%w: empty", ErrInvalidReportKind)
	}
	if len(kind) > MaxReportKindLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrInvalidReportKind, len(kind), MaxReportKindLen)
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%w: %q has character %q at %d (allowed: a-z 0-9 -)", ErrInvalidReportKind, kind, c, i)
		}
	}
	return nil
}

func validatePartition(p int) error {
	if p < 0 || p >= MaxPartitions {
		return fmt.Errorf("%w: %d (want 0..%d)", ErrInvalidPartition, p, MaxPartitions-1)
	}
	return nil
}

// partitionKey is "<topic>/<p>"; cursor and report keys prepend one more part.
func partitionKey(topic string, p int) []byte {
	return []byte(topic + "/" + strconv.Itoa(p))
}

func cursorKey(consumer, topic string, p int) []byte {
	return []byte(consumer + "/" + topic + "/" + strconv.Itoa(p))
}

func reportKey(kind, topic string, p int) []byte {
	return []byte(kind + "/" + topic + "/" + strconv.Itoa(p))
}

// parsePartitionNumber parses the canonical decimal form written by
// strconv.Itoa: no sign, no leading zeros, below MaxPartitions.
func parsePartitionNumber(s string) (int, error) {
	if s == "" || len(s) > 1 && s[0] == '0' || len(s) > 6 {
		return 0, fmt.Errorf("partition %q is not canonical decimal", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("partition %q is not canonical decimal", s)
		}
	}
	p, _ := strconv.Atoi(s)
	if p >= MaxPartitions {
		return 0, fmt.Errorf("partition %d is not below %d", p, MaxPartitions)
	}
	return p, nil
}

// parsePartitionKey splits "<topic>/<p>".
func parsePartitionKey(k []byte) (topic string, p int, err error) {
	i := bytes.LastIndexByte(k, '/')
	if i < 0 {
		return "", 0, errors.New("want <topic>/<partition>")
	}
	topic = string(k[:i])
	if err := ValidateTopicName(topic); err != nil {
		return "", 0, err
	}
	p, err = parsePartitionNumber(string(k[i+1:]))
	return topic, p, err
}

// parseTripleKey splits "<first>/<topic>/<p>" (cursor and report keys). The
// first part is returned unvalidated.
func parseTripleKey(k []byte) (first, topic string, p int, err error) {
	i := bytes.IndexByte(k, '/')
	if i < 0 {
		return "", "", 0, errors.New("want <name>/<topic>/<partition>")
	}
	topic, p, err = parsePartitionKey(k[i+1:])
	return string(k[:i]), topic, p, err
}

func parseCursorKey(k []byte) (consumer, topic string, p int, err error) {
	consumer, topic, p, err = parseTripleKey(k)
	if err == nil {
		err = ValidateConsumerName(consumer)
	}
	return consumer, topic, p, err
}

func parseReportKey(k []byte) (kind, topic string, p int, err error) {
	kind, topic, p, err = parseTripleKey(k)
	if err == nil {
		err = ValidateReportKind(kind)
	}
	return kind, topic, p, err
}

func encodeInt64(v int64) []byte {
	b := make([]byte, offsetLen)
	binary.BigEndian.PutUint64(b, uint64(v))
	return b
}

// decodeOffset decodes a cursor value: exactly 8 bytes, not negative.
func decodeOffset(v []byte) (int64, error) {
	if len(v) != offsetLen {
		return 0, fmt.Errorf("offset is %d bytes, want %d", len(v), offsetLen)
	}
	off := int64(binary.BigEndian.Uint64(v))
	if off < 0 {
		return 0, fmt.Errorf("offset %d is negative", off)
	}
	return off, nil
}
