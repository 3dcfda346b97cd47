package wire

import (
	"encoding/json"
	"strconv"
)

// ParseFrom parses a subscribe "from": "earliest", "latest", {"offset":N}
// or {"timestamp":ms}. An absent from means latest.
func ParseFrom(raw json.RawMessage) (From, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return From{Kind: FromLatest}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ParseFromText(s)
	}
	var o struct {
		Offset    *int64 `json:"offset"`
		Timestamp *int64 `json:"timestamp"`
	}
	if err := json.Unmarshal(raw, &o); err != nil || (o.Offset == nil) == (o.Timestamp == nil) {
		return From{}, Errorf(CodeInvalidRequest, `from %s: want "earliest", "latest", {"offset":N} or {"timestamp":ms}`, raw)
	}
	if o.Offset != nil {
		if *o.Offset < 0 {
			return From{}, Errorf(CodeOffsetOutOfRange, "from offset %d is negative", *o.Offset)
		}
		return From{Kind: FromOffset, N: *o.Offset}, nil
	}
	return From{Kind: FromTimestamp, N: *o.Timestamp}, nil
}

// ParseFromText parses the text forms used by the tail endpoint's query:
// earliest, latest, an offset, or @ms for a timestamp.
func ParseFromText(s string) (From, error) {
	switch s {
	case "", "latest":
		return From{Kind: FromLatest}, nil
	case "earliest":
		return From{Kind: FromEarliest}, nil
	}
	if len(s) > 1 && s[0] == '@' {
		ms, err := strconv.ParseInt(s[1:], 10, 64)
		if err != nil {
			return From{}, Errorf(CodeInvalidRequest, "from %q: timestamp is not an integer of Unix milliseconds", s)
		}
		return From{Kind: FromTimestamp, N: ms}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return From{}, Errorf(CodeInvalidRequest, "from %q: want earliest, latest, an offset or @timestamp-ms", s)
	}
	if n < 0 {
		return From{}, Errorf(CodeOffsetOutOfRange, "from offset %d is negative", n)
	}
	return From{Kind: FromOffset, N: n}, nil
}

// FromKind is which of the forms of a From it is.
type FromKind int

const (
	FromLatest FromKind = iota
	FromEarliest
	FromOffset
	FromTimestamp
)

// From is a parsed subscribe position: where a subscription, a tail or a
// read starts.
type From struct {
	Kind FromKind
	N    int64 // offset or timestamp
}
