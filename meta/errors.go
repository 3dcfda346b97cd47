package meta

import (
	"errors"
	"fmt"
)

// Errors returned by the metadata store, matched with errors.Is. They are
// grouped by when they occur.
var (
	// Opening meta.db.

	// ErrLocked is returned by Open when another process (or another Store in
	// this process) holds meta.db and the lock was not released within
	// Options.OpenTimeout.
	ErrLocked = errors.New("meta.db is in use by another process")
	// ErrSchemaTooNew is returned by Open when meta.db was written by a newer
	// Pulse whose schema version this build does not know. Nothing is written.
	ErrSchemaTooNew = errors.New("meta.db schema is newer than this pulse supports")
	// ErrNotInitialized is returned by a read-only Store whose meta.db was
	// never initialised (a writable Open initialises it).
	ErrNotInitialized = errors.New("meta.db is not initialised")
	// ErrDamaged is returned by Open when meta.db exists but cannot be a
	// bbolt file: empty, truncated, without a valid meta page, or with a
	// damaged free list page; nothing is written, and bbolt never maps it.
	// Any method returns it when bbolt meets a damaged page (its panic or
	// fault, turned into this error; the transaction is rolled back). The
	// error names the file.
	ErrDamaged = errors.New("meta.db is damaged")
	// ErrClosed is returned by every method of a closed Store.
	ErrClosed = errors.New("meta store is closed")
	// ErrReadOnly is returned by the write methods of a Store opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("meta store is read-only")

	// Stored values.

	// ErrCorrupt is wrapped by *CorruptError: a stored key or value that does
	// not decode. It names the bucket and the key.
	ErrCorrupt = errors.New("corrupt metadata")

	// Topics and partitions.

	// ErrInvalidTopic: a topic name outside 1–249 characters of [a-zA-Z0-9._-],
	// or "." / "..".
	ErrInvalidTopic = errors.New("invalid topic name")
	// ErrTopicNotFound: no topic of that name (a topic being deleted is also
	// not found for cursors, reports and config changes; see ErrTopicDeleting).
	ErrTopicNotFound = errors.New("topic not found")
	// ErrTopicExists: PutTopic of a name that is taken, including by a topic
	// still being deleted.
	ErrTopicExists = errors.New("topic already exists")
	// ErrTopicDeleting: the topic is marked deleting. It is always returned
	// together with ErrTopicNotFound (errors.Is matches both).
	ErrTopicDeleting = errors.New("topic is being deleted")
	// ErrTopicNotDeleting: DeleteTopic of a topic that was not first marked
	// with MarkTopicDeleting.
	ErrTopicNotDeleting = errors.New("topic is not marked deleting")
	// ErrInvalidPartition: a partition count outside 1..MaxPartitions or a
	// partition number outside the topic's range.
	ErrInvalidPartition = errors.New("invalid partition")
	// ErrInvalidConfig: a topic config that is not valid JSON.
	ErrInvalidConfig = errors.New("invalid topic config")

	// Cursors.

	// ErrInvalidConsumer: a consumer name outside 1–249 bytes, or holding '/'
	// or NUL (consumer names are parts of cursor keys).
	ErrInvalidConsumer = errors.New("invalid consumer name")
	// ErrInvalidOffset: a negative cursor offset.
	ErrInvalidOffset = errors.New("invalid offset")
	// ErrConsumerNotFound: DeleteConsumer of a consumer with no cursor.
	ErrConsumerNotFound = errors.New("consumer not found")

	// Reports.

	// ErrInvalidReportKind: a report kind outside 1–64 characters of [a-z0-9-].
	ErrInvalidReportKind = errors.New("invalid report kind")
)

// CorruptError is a stored key or value that does not decode. It matches
// ErrCorrupt and its cause with errors.Is.
type CorruptError struct {
	Bucket string // bucket holding the key
	Key    string // the key, as stored
	Err    error  // what is wrong with it
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("meta.db: corrupt metadata in bucket %q at key %q: %v", e.Bucket, e.Key, e.Err)
}

// Unwrap returns ErrCorrupt and the cause.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

func corrupt(bucket string, key []byte, format string, args ...any) error {
	return &CorruptError{Bucket: bucket, Key: string(key), Err: fmt.Errorf(format, args...)}
}
