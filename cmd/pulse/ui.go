package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/internal/demo"
	"github.com/pulselog/pulse/kafka"
	"github.com/pulselog/pulse/kafka/cluster/clusterinfo"
	"github.com/pulselog/pulse/themes"
	"github.com/pulselog/pulse/tui"
)

// localSource is the engine plus the consumer groups its Kafka listener
// coordinates (tui.GroupLister), so that ":groups" shows them, with the
// websocket consumers' cursors, on a local data dir.
type localSource struct {
	*engine.Engine
	kafka *kafka.Server
}

// Groups is the Kafka listener's read-only snapshot (kafka.Server.GroupSnapshot).
func (s localSource) Groups() ([]clusterinfo.Group, error) { return s.kafka.GroupSnapshot(), nil }

// uiConfig is what the bare `pulse` command runs with.
type uiConfig struct {
	dir      string
	dirSet   bool // --data given explicitly
	listen   string
	theme    string
	demo     bool
	topic    string
	noAlt    bool
	noListen bool
	kafka    string // Kafka listener address, "" for none
	kafkaSet bool   // --kafka-listen given
	limits   *engineLimits
}

// setupRoot makes the bare `pulse` command open the terminal UI on the data
// directory, with the websocket API served from the same process.
func setupRoot(root *cobra.Command) {
	var cfg uiConfig
	data := addDataFlag(root)
	kafka := addKafkaFlags(root, "kafka", "browse a Kafka cluster (comma-separated bootstrap brokers, env PULSE_KAFKA) instead of the data dir")
	root.Flags().StringVar(&cfg.listen, "listen", defaultListen, "websocket API address (\"\" or \"off\" disables it)")
	root.Flags().StringVar(&cfg.theme, "theme", themes.Auto, "colour theme: "+fmt.Sprint(themes.Names()))
	root.Flags().BoolVar(&cfg.demo, "demo", false, "fill a scratch data dir with demo topics and keep producing to them")
	root.Flags().StringVar(&cfg.topic, "topic", "", "open the UI on this topic's partitions")
	root.Flags().BoolVar(&cfg.noAlt, "no-alt-screen", false, "draw inline instead of on the terminal's alternate screen")
	root.Args = cobra.NoArgs
	kafkaListen := kafkaFlag(root)
	cfg.limits = addLimitFlags(root)
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cfg.limits.check(); err != nil {
			return err
		}
		if cfg.topic != "" {
			if err := engine.ValidateTopicName(cfg.topic); err != nil {
				return fmt.Errorf("--topic %q: %w", cfg.topic, err)
			}
		}
		cfg.kafka, cfg.kafkaSet = kafkaListen()
		cfg.dir, cfg.dirSet = *data, cmd.Flags().Changed("data")
		cfg.noListen = cfg.listen == "" || cfg.listen == "off"
		if kafka.enabled() {
			return runUICluster(cmd.Context(), kafka, cfg)
		}
		return runUI(cmd.Context(), cfg)
	}
}

// displayPath shortens a path under the home directory to ~/...
func displayPath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel) {
		if rel == "." {
			return "~"
		}
		return "~/" + rel
	}
	return p
}

func runUI(ctx context.Context, cfg uiConfig) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Refuse a bad theme before touching the data directory.
	if _, err := themes.New(themes.Options{Name: cfg.theme}); err != nil {
		return fmt.Errorf("--theme: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, stopSignals()...)
	defer stop()

	dir := cfg.dir
	if cfg.demo && !cfg.dirSet {
		tmp, err := os.MkdirTemp("", "pulse-demo-")
		if err != nil {
			return fmt.Errorf("demo data dir: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	e, met, err := openMetered(dir, cfg.limits)
	if err != nil {
		return err // names the data dir
	}
	defer e.Close()

	listen := ""
	if !cfg.noListen {
		// The same server `pulse serve` runs headless, on loopback only
		// (the UI has no --token: pulse serve is for other addresses).
		addr, stopAPI, err := startAPI(ctx, e, apiConfig{Listen: cfg.listen, Metrics: met})
		if err != nil {
			return err
		}
		defer stopAPI()
		listen = addr
	}
	kafkaAddr, kafkaSrv, stopKafka, err := startKafkaServer(e, met.Wrap(e), cfg.kafka, cfg.kafkaSet, false, nil, os.Stderr)
	if err != nil {
		return err
	}
	defer stopKafka()
	kafkaOff := ""
	if kafkaAddr == "" && cfg.kafka != "" && cfg.kafka != "off" {
		kafkaOff = cfg.kafka + " in use" // the default address, taken (warned on stderr)
	}
	var src tui.Source = e
	if kafkaSrv != nil {
		src = localSource{Engine: e, kafka: kafkaSrv}
	}

	if cfg.demo {
		if err := demo.Seed(ctx, e); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		demoCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); demo.Run(demoCtx, e, demo.DefaultRate) }()
		defer func() { cancel(); <-done }()
	}

	m, err := tui.New(tui.Options{
		Source:      src,
		DataDirName: displayPath(dir),
		Listen:      listen,
		KafkaListen: kafkaAddr,
		KafkaOff:    kafkaOff,
		Theme:       cfg.theme,
		NoColor:     themes.NoColor(),
		StartTopic:  cfg.topic,
	})
	if err != nil {
		return err
	}
	defer m.Close() // stops the tail's long-poll before the engine closes
	return runProgram(ctx, m, cfg.noAlt)
}

// runProgram runs the terminal UI m until it quits or ctx is done, which
// the caller's stopSignals handler does: a signal ends the UI as q
// does, with no error. Bubble Tea's own signal handler is left out: it
// would answer SIGINT with an error, and when ctx ends the program first it
// blocks forever handing a SIGTERM to the event loop that has gone.
func runProgram(ctx context.Context, m tea.Model, noAlt bool) error {
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithMouseCellMotion(), tea.WithoutSignalHandler()}
	if !noAlt {
		opts = append(opts, tea.WithAltScreen())
	}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}
