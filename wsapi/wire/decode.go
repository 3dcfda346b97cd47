package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// DecodeRecord parses b, one record object of a produce (an element of a
// POST body, a line of NDJSON or of `pulse produce --json`), into r; where
// names the record in errors ("body", "record 3", "line 2"). A value that
// is not an object, bytes that are not UTF-8 (invalid_json naming the
// first bad byte), a field of the wrong type, more text after the object
// and (with strict) a field RecordIn does not have are each an *Error
// saying so in those words (hint follows the one of more text: what to
// send instead); bad JSON is invalid_json with the parser's.
func DecodeRecord(b []byte, r *RecordIn, where string, strict bool, hint string) *Error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Errorf(CodeInvalidRequest, "%s: a record is a JSON object", where)
	}
	if !utf8.Valid(b) {
		// encoding/json would store U+FFFD in place of the bytes: JSON
		// text is UTF-8, as a websocket text frame must be.
		return Errorf(CodeInvalidJSON, "%s: not valid UTF-8 at byte %d (JSON is UTF-8 text: send bytes as key_b64, value_b64 or headers_b64)", where, invalidUTF8At(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(r); err != nil {
		return JSONError(where, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Errorf(CodeInvalidJSON, "%s: more text after the record object (%s)", where, hint)
	}
	return nil
}

// invalidUTF8At is the index of the first byte of b that does not start a
// valid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// JSONError is what encoding/json found wrong decoding where's JSON into a
// request type, in the protocol's words: a field of the wrong type is
// invalid_request naming it (FieldTypeError; after "where: " unless where
// is empty, as in a websocket request, whose fields are its own), a value that is not an
// object invalid_json saying what it is, an unknown field (a strict
// decode) invalid_request naming it, and bad syntax invalid_json.
func JSONError(where string, err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			// An embedded record's fields are the request's own.
			e := FieldTypeError(te, strings.ReplaceAll(te.Field, "RecordIn.", ""))
			if where != "" {
				e.Message = where + ": " + e.Message
			}
			return e
		}
		return Errorf(CodeInvalidJSON, "%s is not a JSON object (got %s)", where, withArticle(te.Value))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return Errorf(CodeInvalidRequest, "%s: unknown field %s", where, name)
	}
	return Errorf(CodeInvalidJSON, "%s: %s", where, strings.TrimPrefix(err.Error(), "json: "))
}

// FieldTypeError is the invalid_request for field, whose value te says is
// of the wrong JSON type: `field "partition": got string, want an integer`.
func FieldTypeError(te *json.UnmarshalTypeError, field string) *Error {
	return Errorf(CodeInvalidRequest, "field %q: got %s, want %s", field, te.Value, jsonKind(te.Type))
}

// withArticle is a JSON kind as encoding/json names it ("array", "number")
// with its article.
func withArticle(kind string) string {
	if kind == "" {
		return "another value"
	}
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// jsonKind names the JSON value that a Go type of a request field takes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return t.String()
}
