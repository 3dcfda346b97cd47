package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/metrics"
	"github.com/pulselog/pulse/wsapi"
)

// apiShutdownWait bounds how long stopping the websocket API waits for
// produces in flight to be acked before connections are cut.
const apiShutdownWait = 10 * time.Second

// apiConfig is how the websocket API is served; `pulse serve` and the
// terminal UI both start it with startAPI.
type apiConfig struct {
	Listen       string   // host:port, default defaultListen
	Token        string   // required from clients when set
	AllowOrigins []string // extra browser origins
	AllowHosts   []string // extra Host header names
	NoAutoCreate bool     // refuse produces to missing topics
	ReadLimit    int64    // largest client message; 0: wsapi's default (1 MiB)
	KafkaListen  string   // Kafka listener address, "" for none (kafka.go)
	KafkaSet     bool     // KafkaListen was given on the command line
	Logger       *slog.Logger
	// Metrics, when set, is served at /metrics and counts what the API
	// produces and reads (openMetered).
	Metrics *metrics.Metrics
	// Limits are the engine's caps (--max-topics, --max-partitions).
	Limits *engineLimits
}

// start is what both serving commands (on a data dir and on a cluster) do
// first: a context that ends on stopSignals, warnings logged to
// stderr, and the token made up when the API needs one (generated says so).
func (c *apiConfig) start(cmd *cobra.Command) (ctx context.Context, stop context.CancelFunc, generated bool, err error) {
	c.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	if generated, err = c.ensureToken(); err != nil {
		return nil, nil, false, err
	}
	ctx, stop = signal.NotifyContext(cmdContext(cmd), stopSignals()...)
	return ctx, stop, generated, nil
}

// stopSignals end pulse serve and the terminal UI as a clean stop (q in the
// UI): SIGINT, SIGTERM, and SIGHUP, which a terminal sends to what runs in
// it when its window closes, unless SIGHUP is ignored (nohup), where
// handling it would undo that.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// ensureToken makes up a random token when the API would listen on a
// non-loopback address without one (wsapi refuses to). It reports whether it
// did, so that the caller can show it.
func (c *apiConfig) ensureToken() (bool, error) {
	if c.Token != "" || isLoopbackListen(c.Listen) {
		return false, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return false, fmt.Errorf("making a token: %w", err)
	}
	c.Token = hex.EncodeToString(b)
	return true, nil
}

// isLoopbackListen reports whether addr ("host:port") names a loopback host.
func isLoopbackListen(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// listenTCP listens on addr as given: on an IPv4 address (0.0.0.0 too) over
// IPv4 only, where "tcp" opens a dual-stack socket for 0.0.0.0 that names
// itself [::] (and takes IPv6 connections the user did not ask for);
// any other address as "tcp" does. The websocket API and the Kafka
// listener both listen with it, and their banners name l.Addr().
func listenTCP(addr string) (net.Listener, error) {
	network := "tcp"
	if h, _, err := net.SplitHostPort(addr); err == nil && !strings.Contains(h, ":") {
		if ip := net.ParseIP(h); ip != nil && ip.To4() != nil {
			network = "tcp4"
		}
	}
	return net.Listen(network, addr)
}

// startAPI serves the websocket API of eng (the engine or a cluster) on cfg.Listen until stop is
// called or ctx is done. stop shuts the server down gracefully (produces in
// flight are acked, new ones refused, clients closed with 1001) within
// apiShutdownWait; it does not close eng. It is safe to call more than once.
func startAPI(ctx context.Context, eng wsapi.Backend, cfg apiConfig) (addr string, stop func() error, err error) {
	if cfg.Listen == "" {
		cfg.Listen = defaultListen
	}
	opts := wsapi.DefaultOptions()
	opts.Token = cfg.Token
	opts.AllowOrigins = cfg.AllowOrigins
	opts.AllowHosts = cfg.AllowHosts
	opts.AutoCreate = !cfg.NoAutoCreate
	if cfg.ReadLimit > 0 {
		opts.ReadLimit = cfg.ReadLimit
	}
	opts.Logger = cfg.Logger
	if !isLoopbackListen(cfg.Listen) && cfg.Token == "" {
		return "", nil, fmt.Errorf("websocket API on %s: %w", cfg.Listen, wsapi.ErrTokenRequired)
	}
	l, err := listenTCP(cfg.Listen)
	if addrInUse(err) {
		return "", nil, fmt.Errorf("websocket API on %s: %w (is another pulse running? use --listen ADDR)", cfg.Listen, err)
	}
	if err != nil {
		// Not an address (a bad port, no port), or one this process
		// may not listen on: the error says which.
		return "", nil, fmt.Errorf("websocket API on %s: %w", cfg.Listen, err)
	}
	// The engine's figures go to /metrics; a cluster has its own.
	b := eng
	local, isLocal := eng.(*engine.Engine)
	if cfg.Metrics != nil {
		opts.Metrics = cfg.Metrics.Handler()
		if isLocal {
			b = cfg.Metrics.Wrap(local)
		}
	}
	srv := wsapi.New(b, opts)
	if cfg.Metrics != nil && isLocal {
		cfg.Metrics.Watch(local, metrics.ServerConnections(srv))
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	var once sync.Once
	var stopErr error
	stop = func() error {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), apiShutdownWait)
			defer cancel()
			stopErr = srv.Shutdown(sctx)
			if err := <-served; err != nil && !errors.Is(err, wsapi.ErrServerClosed) && stopErr == nil {
				stopErr = err
			}
		})
		return stopErr
	}
	if ctx != nil {
		go func() {
			select {
			case <-ctx.Done():
				stop()
			case <-srv.Done():
			}
		}()
	}
	return l.Addr().String(), stop, nil
}

func newServeCmd() *cobra.Command {
	var cfg apiConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the engine and the websocket API without the terminal UI",
		Long: `Opens the data directory and serves the websocket API (docs/websocket.md)
until SIGINT, SIGTERM or SIGHUP (its terminal closed; ignored under nohup).
On shutdown it stops accepting connections, lets every produce it already
accepted be acknowledged, refuses new ones, closes clients with 1001
("going away") and closes the engine.

Listening on a non-loopback address needs a token (--token); without one, a
random token is made up and printed.`,
		Args: cobra.NoArgs,
	}
	data := addDataFlag(cmd)
	kafka := addKafkaFlags(cmd, "kafka", "serve a Kafka cluster (comma-separated bootstrap brokers, env PULSE_KAFKA) instead of the data dir")
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", defaultListen, "address of the websocket API (host:port; pulse serve always serves it)")
	f.StringVar(&cfg.Token, "token", "", "token clients must send (Authorization: Bearer, or ?token=)")
	f.StringSliceVar(&cfg.AllowOrigins, "allow-origin", nil, `extra browser origin allowed (e.g. http://myapp.test:8080, or "*"), repeatable`)
	f.StringSliceVar(&cfg.AllowHosts, "allow-host", nil, "extra Host header name allowed (DNS rebinding protection), repeatable")
	f.BoolVar(&cfg.NoAutoCreate, "no-auto-create", false, "refuse produces to topics that do not exist instead of creating them")
	f.Int64Var(&cfg.ReadLimit, "read-limit", 1<<20, "largest websocket message accepted from a client, in bytes")
	kafkaListen := kafkaFlag(cmd)
	limits := addLimitFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cfg.ReadLimit < 1 {
			return fmt.Errorf("--read-limit %d: want at least 1 byte", cfg.ReadLimit)
		}
		if cfg.Listen == "" || cfg.Listen == "off" {
			return fmt.Errorf("--listen %q: pulse serve always serves the websocket API (want host:port; the terminal UI, pulse, takes off)", cfg.Listen)
		}
		if err := limits.check(); err != nil {
			return err
		}
		cfg.KafkaListen, cfg.KafkaSet = kafkaListen()
		if kafka.enabled() {
			return runServeCluster(cmd, kafka, cfg)
		}
		cfg.Limits = limits
		return runServe(cmd, *data, cfg)
	}
	return cmd
}

// warnOpenProblems writes to w what opening dir found wrong: the engine's
// problems (a meta.db rebuilt, an interrupted delete finished, ...) and
// each partition whose recovery report says it opened degraded, pointing at
// pulse inspect for the whole report.
func warnOpenProblems(w io.Writer, eng *engine.Engine, dir string) {
	for _, p := range eng.Problems() {
		fmt.Fprintf(w, "pulse: warning: %s\n", p)
	}
	degraded := false
	for _, r := range eng.RecoveryReports() {
		if r.Degraded {
			degraded = true
			fmt.Fprintf(w, "pulse: warning: topic %s partition %d opened degraded (corrupt or lost offsets: reads skip them and count what they skip)\n", r.Topic, r.Partition)
		}
	}
	if degraded {
		fmt.Fprintf(w, "pulse: warning: pulse inspect %s prints the recovery report of every partition\n", dir)
	}
}

func runServe(cmd *cobra.Command, dir string, cfg apiConfig) error {
	ctx, stopSignals, generated, err := cfg.start(cmd)
	if err != nil {
		return err
	}
	defer stopSignals()
	eng, m, err := openMetered(dir, cfg.Limits)
	if err != nil {
		return err // names the data dir
	}
	cfg.Metrics = m
	addr, stop, err := startAPI(ctx, eng, cfg)
	if err != nil {
		eng.Close()
		return err
	}
	kafkaAddr, stopKafka, err := startKafka(eng, m.Wrap(eng), cfg.KafkaListen, cfg.KafkaSet, cfg.NoAutoCreate, cfg.Logger, cmd.ErrOrStderr())
	if err != nil {
		stop()
		eng.Close()
		return err
	}
	warnOpenProblems(cmd.ErrOrStderr(), eng, dir)
	banner := fmt.Sprintf("pulse: serving %s on ws://%s/v1/ws", dir, addr)
	if generated {
		banner += " token " + cfg.Token
	} else if cfg.Token != "" {
		banner += " (token required)"
	}
	if kafkaAddr != "" {
		banner += ", Kafka on " + kafkaAddr
	}
	fmt.Fprintln(cmd.OutOrStdout(), banner)

	<-ctx.Done()
	fmt.Fprintln(cmd.ErrOrStderr(), "pulse: shutting down")
	stopKafka()
	serr := stop()
	if cerr := eng.Close(); cerr != nil {
		return errors.Join(serr, fmt.Errorf("closing the engine: %w", cerr))
	}
	if serr != nil {
		return fmt.Errorf("stopping the websocket API: %w", serr)
	}
	return nil
}
