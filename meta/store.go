package meta

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
)

// FileName is the name of the metadata file inside a data directory.
const FileName = layout.MetaFile

// SchemaVersion is the version of the key space this build reads and writes.
// A meta.db with a higher version refuses to open (ErrSchemaTooNew).
const SchemaVersion int64 = 1

// Options configure Open. The zero value is not the default: start from
// DefaultOptions.
type Options struct {
	// OpenTimeout is how long Open waits for the file lock when another
	// Store holds meta.db. Default 1s. Zero means do not wait at all (one
	// attempt). bbolt's "wait forever" is never used.
	OpenTimeout time.Duration
	// ReadOnly opens meta.db with a shared lock for inspection (pulse meta
	// check/dump). The file must exist and nothing is ever written; write
	// methods return ErrReadOnly. Default false.
	ReadOnly bool
	// Now returns the time recorded as created_at. Default time.Now.
	Now func() time.Time
}

// DefaultOptions returns the defaults documented on each Options field.
func DefaultOptions() Options {
	return Options{OpenTimeout: time.Second, Now: time.Now}
}

// Store is an open meta.db. All methods are safe for concurrent use; each one
// is a single bbolt transaction.
type Store struct {
	db   *bolt.DB
	path string
	opts Options
}

// Cluster is the identity of the cluster a data directory belongs to.
type Cluster struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// Broker is the identity of the broker owning a data directory.
type Broker struct {
	ID        string    `json:"id"`
	ClusterID string    `json:"cluster_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Identity is the cluster and broker identity, created once when meta.db is
// initialised and stable across restarts.
type Identity struct {
	Cluster Cluster `json:"cluster"`
	Broker  Broker  `json:"broker"`
}

// Path returns the path of meta.db inside dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Open opens <dataDir>/meta.db, creating and initialising it when it does not
// exist (unless opts.ReadOnly). A store written by a newer schema is refused
// with ErrSchemaTooNew; a store held by another process with ErrLocked.
func Open(dataDir string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenTimeout < 0 {
		return nil, fmt.Errorf("meta: negative open timeout %s", opts.OpenTimeout)
	}
	path := Path(dataDir)
	_, statErr := os.Stat(path)
	if opts.ReadOnly && statErr != nil {
		// Inspecting a data dir must not create meta.db: say it is missing.
		return nil, fmt.Errorf("meta: no readable %s in %s: %w", FileName, dataDir, statErr)
	}
	created := errors.Is(statErr, fs.ErrNotExist)
	if statErr == nil {
		if err := checkFile(path); err != nil {
			return nil, err
		}
	}
	timeout := opts.OpenTimeout
	if timeout == 0 {
		timeout = time.Nanosecond // one attempt: bbolt treats 0 as forever
	}
	db, err := openBolt(path, &bolt.Options{
		Timeout:      timeout,
		ReadOnly:     opts.ReadOnly,
		FreelistType: bolt.FreelistArrayType,
		// NoSync stays false: every Update commit is fsynced.
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s (waited %s)", ErrLocked, path, opts.OpenTimeout)
		}
		return nil, fmt.Errorf("meta: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, opts: opts}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	if created {
		// A new file's directory entry is durable only once the
		// directory is synced.
		if err := fsutil.SyncDir(dataDir); err != nil {
			db.Close()
			return nil, fmt.Errorf("meta: %w", err)
		}
	}
	return s, nil
}

// openBolt is bolt.Open with a panic on a damaged page (the free list's,
// read as the file opens) turned into ErrDamaged.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damagedOnPanic(path, &err)
	return bolt.Open(path, 0o600, o)
}

// Close closes meta.db, waiting for transactions in flight.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("meta: close %s: %w", s.path, err)
	}
	return nil
}

// Path returns the path of meta.db.
func (s *Store) Path() string { return s.path }

// init checks the schema version and, on a writable store, creates what is
// missing (buckets, version, identity) in one synced commit. A store that is
// too new is refused before anything is written.
func (s *Store) init() error {
	var version int64
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		version, err = readSchemaVersion(tx)
		return err
	})
	if err != nil {
		if s.opts.ReadOnly && errors.Is(err, ErrCorrupt) {
			// Let inspection open it: Check reports the version.
			return nil
		}
		return err
	}
	if version > SchemaVersion {
		return fmt.Errorf("%w: %s has schema version %d, this pulse supports up to %d", ErrSchemaTooNew, s.path, version, SchemaVersion)
	}
	if s.opts.ReadOnly {
		return nil
	}
	// version < SchemaVersion would run migrations here; version 1 is the
	// first, so 0 (a fresh file) just gets initialised.
	return s.update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		if version != SchemaVersion {
			if err := tx.Bucket([]byte(BucketSchema)).Put([]byte(keySchemaVersion), encodeInt64(SchemaVersion)); err != nil {
				return err
			}
		}
		return s.ensureIdentity(tx)
	})
}

// readSchemaVersion returns 0 for a store that was never initialised.
func readSchemaVersion(tx *bolt.Tx) (int64, error) {
	b := tx.Bucket([]byte(BucketSchema))
	if b == nil {
		return 0, nil
	}
	v := b.Get([]byte(keySchemaVersion))
	if v == nil {
		return 0, nil
	}
	if len(v) != offsetLen {
		return 0, corrupt(BucketSchema, []byte(keySchemaVersion), "schema version is %d bytes, want %d", len(v), offsetLen)
	}
	version := int64(binary.BigEndian.Uint64(v))
	if version < 1 {
		return 0, corrupt(BucketSchema, []byte(keySchemaVersion), "schema version %d", version)
	}
	return version, nil
}

// SchemaVersion returns the schema version stored in meta.db.
func (s *Store) SchemaVersion() (int64, error) {
	var v int64
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		v, err = readSchemaVersion(tx)
		return err
	})
	return v, err
}

// ensureIdentity creates the cluster and broker identity when the pointers
// are missing: record and pointer in the same commit.
func (s *Store) ensureIdentity(tx *bolt.Tx) error {
	b := tx.Bucket([]byte(BucketIdentity))
	now := s.opts.Now().UTC()
	clusterID := b.Get([]byte(keyClusterCurrent))
	if clusterID == nil {
		c := Cluster{ID: newID(), CreatedAt: now}
		if err := putJSON(b, clusterPrefix+c.ID, c); err != nil {
			return err
		}
		if err := b.Put([]byte(keyClusterCurrent), []byte(c.ID)); err != nil {
			return err
		}
		clusterID = []byte(c.ID)
	}
	if b.Get([]byte(keyBrokerCurrent)) == nil {
		br := Broker{ID: newID(), ClusterID: string(clusterID), CreatedAt: now}
		if err := putJSON(b, brokerPrefix+br.ID, br); err != nil {
			return err
		}
		if err := b.Put([]byte(keyBrokerCurrent), []byte(br.ID)); err != nil {
			return err
		}
	}
	return nil
}

// newID returns a random RFC 4122 version 4 UUID.
func newID() string {
	var u [16]byte
	rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Identity returns the cluster and broker identity.
func (s *Store) Identity() (Identity, error) {
	var id Identity
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		id, err = readIdentity(tx)
		return err
	})
	return id, err
}

func readIdentity(tx *bolt.Tx) (Identity, error) {
	var id Identity
	b := tx.Bucket([]byte(BucketIdentity))
	if b == nil {
		return id, ErrNotInitialized
	}
	cid := b.Get([]byte(keyClusterCurrent))
	bid := b.Get([]byte(keyBrokerCurrent))
	if cid == nil || bid == nil {
		return id, fmt.Errorf("%w: no identity", ErrNotInitialized)
	}
	ckey := []byte(clusterPrefix + string(cid))
	if err := getJSON(b, BucketIdentity, ckey, &id.Cluster); err != nil {
		return id, err
	}
	bkey := []byte(brokerPrefix + string(bid))
	if err := getJSON(b, BucketIdentity, bkey, &id.Broker); err != nil {
		return id, err
	}
	if id.Cluster.ID != string(cid) {
		return id, corrupt(BucketIdentity, ckey, "record id %q does not match its key", id.Cluster.ID)
	}
	if id.Broker.ID != string(bid) {
		return id, corrupt(BucketIdentity, bkey, "record id %q does not match its key", id.Broker.ID)
	}
	return id, nil
}

// putJSON marshals v under key.
func putJSON(b *bolt.Bucket, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	return b.Put([]byte(key), data)
}

// getJSON unmarshals the value at key into v; a missing or undecodable value
// is a *CorruptError (callers check for absence first when it is allowed).
func getJSON(b *bolt.Bucket, bucket string, key []byte, v any) error {
	data := b.Get(key)
	if data == nil {
		return corrupt(bucket, key, "missing")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return corrupt(bucket, key, "%v", err)
	}
	return nil
}

// view runs fn in a read transaction.
func (s *Store) view(fn func(tx *bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damagedOnPanic(s.path, &err)
	return s.mapErr(s.db.View(fn))
}

// update runs fn in a read-write transaction whose commit is fsynced.
func (s *Store) update(fn func(tx *bolt.Tx) error) (err error) {
	if s.opts.ReadOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, s.path)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damagedOnPanic(s.path, &err)
	return s.mapErr(s.db.Update(fn))
}

// damagedOnPanic, deferred around a bbolt call, turns a panic into
// ErrDamaged naming path: bbolt asserts on the pages it reads (their type)
// and panics on a damaged one, and a damaged element count makes it read
// past the file's mapping, a fault that debug.SetPanicOnFault (set around
// every call) makes a panic too. bbolt's own deferred rollback has already
// ended the transaction, so nothing of it was committed.
func damagedOnPanic(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("meta: %s: %w: %v", path, ErrDamaged, r)
	}
}

func (s *Store) mapErr(err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("%w: %s", ErrClosed, s.path)
	}
	return err
}

// bucket returns a bucket that init created; in a read-only store that was
// never initialised it may be missing.
func bucket(tx *bolt.Tx, name string) (*bolt.Bucket, error) {
	b := tx.Bucket([]byte(name))
	if b == nil {
		return nil, fmt.Errorf("%w: bucket %s missing", ErrNotInitialized, name)
	}
	return b, nil
}
