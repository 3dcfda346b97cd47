package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// opTimeout bounds one admin or produce round trip made on behalf of a
// caller that passed no context of its own (the UI and websocket interfaces
// carry none for admin calls).
const opTimeout = 30 * time.Second

// Source is a Kafka cluster seen through Pulse's source interfaces. It is
// safe for concurrent use. Create it with Open, end it with Close.
type Source struct {
	cfg  Config
	opts []kgo.Opt    // shared by every client the Source creates
	cl   *kgo.Client  // produce
	acl  *kgo.Client  // admin: its metadata cache is purged on its own (forgetAltered)
	adm  *kadm.Client // on acl

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	health  *health // what the clients last saw of each broker
	readers *readerPool
	watch   *watcher
	grow    growth // PartitionsChangedC

	mu     sync.Mutex            // guards parts
	parts  map[string]partsEntry // topic → partition count, cached briefly for produce
	closed bool                  // guarded by mu
}

type partsEntry struct {
	n  int
	at time.Time
}

// partsTTL is how long Produce trusts a cached partition count.
const partsTTL = 2 * time.Second

// Open connects to the cluster and checks, within cfg.DialTimeout, that a
// broker answers; an unreachable cluster is an error naming the addresses
// and the cause.
func Open(cfg Config) (*Source, error) {
	cfg = cfg.withDefaults()
	opts, err := cfg.clientOpts()
	if err != nil {
		return nil, err
	}
	h := newHealth()
	opts = append(opts, kgo.WithHooks(h))
	popts := append(append([]kgo.Opt(nil), opts...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(pulsePartitioner{}),
		kgo.ProducerLinger(0),
		kgo.ProducerBatchMaxBytes(16<<20),
		kgo.MaxBufferedRecords(100000),
	)
	cl, err := kgo.NewClient(popts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(cfg.Brokers, ","), err)
	}
	acl, err := kgo.NewClient(opts...)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka admin client for %s: %w", strings.Join(cfg.Brokers, ","), err)
	}
	s := &Source{cfg: cfg, opts: opts, cl: cl, acl: acl, adm: kadm.NewClient(acl), health: h, parts: map[string]partsEntry{}}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		acl.Close()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			err = fmt.Errorf("no broker answered within %s", cfg.DialTimeout)
		case cfg.SASL != "" && (errors.Is(err, io.EOF) || errors.Is(err, kerr.SaslAuthenticationFailed)):
			err = fmt.Errorf("%w (SASL authentication refused or connection closed during it: check the mechanism, user and password)", err)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, strings.Join(cfg.Brokers, ","), err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.readers = newReaderPool(s)
	s.watch = newWatcher(s)
	s.grow.s = s
	return s, nil
}

// Close ends every client of the Source.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.grow.close()
	s.watch.close()
	s.readers.close()
	s.cl.Close()
	s.acl.Close()
	return nil
}

// Brokers returns the bootstrap list the Source was opened with.
func (s *Source) Brokers() []string { return append([]string(nil), s.cfg.Brokers...) }

// Name is how the UI header names the source: "kafka host:port,...".
func (s *Source) Name() string { return "kafka " + strings.Join(s.cfg.Brokers, ",") }

// Client returns the Source's kgo producer client. Callers must not close
// it.
func (s *Source) Client() *kgo.Client { return s.cl }

// opCtx is the context of one admin call: the Source's, bounded.
func (s *Source) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, opTimeout)
}
