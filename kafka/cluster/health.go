package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// health is what the Source's Kafka clients last saw of each broker they
// dialled: every client of the Source reports its dials to it (a kgo
// HookBrokerConnect), so that the UI can say the cluster is away while the
// clients wait for it, and a produce can fail at once instead of at its
// deadline.
type health struct {
	mu      sync.Mutex
	last    map[string]error // broker address → the error of its last dial, nil when it connected
	changed chan struct{}    // closed, and replaced, when Unreachable's answer may have changed
}

func newHealth() *health {
	return &health{last: map[string]error{}, changed: make(chan struct{})}
}

// OnBrokerConnect records one dial of a broker by one of the Source's
// clients. A dial given up because its request was cancelled or timed out
// says nothing of the broker and is not recorded.
func (h *health) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	h.mu.Lock()
	defer h.mu.Unlock()
	old, had := h.last[addr]
	h.last[addr] = err
	if !had || (old == nil) != (err == nil) {
		close(h.changed)
		h.changed = make(chan struct{})
	}
}

// state returns a channel closed when what Unreachable says may change, and
// what it says.
func (h *health) state() (<-chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var down []string
	for addr, err := range h.last {
		if err != nil {
			down = append(down, addr)
		}
	}
	if len(down) == 0 {
		return h.changed, nil
	}
	slices.Sort(down)
	// The first address's error stands for all of them (one cause, as a
	// rule: the cluster or the network is away).
	cause := h.last[down[0]] // "unable to dial: ...", as kgo says it
	if len(down) < len(h.last) {
		return h.changed, fmt.Errorf("%w: %s: %w", ErrBrokerUnreachable, strings.Join(down, ","), cause)
	}
	return h.changed, fmt.Errorf("%w: %s: %w", ErrUnreachable, strings.Join(down, ","), cause)
}

// Unreachable says whether the cluster is away: nil while the last dial of
// every broker the Source's clients dialled connected; ErrUnreachable,
// naming the brokers and the Kafka client's error of the first, while the
// last dial of every one of them failed; ErrBrokerUnreachable while only
// some did. It changes at the clients' next dials (they dial again on their
// own while they have work, every second or so).
func (s *Source) Unreachable() error {
	_, err := s.health.state()
	return err
}
