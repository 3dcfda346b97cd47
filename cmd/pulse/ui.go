package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/themes"
	"github.com/pulselog/pulse/tui"
	"github.com/pulselog/pulse/wsapi"
)

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
}

// setupRoot makes the bare `pulse` command open the terminal UI on the data
// directory, with the websocket API served from the same process.
func setupRoot(root *cobra.Command) {
	var cfg uiConfig
	data := addDataFlag(root)
	root.Flags().StringVar(&cfg.listen, "listen", defaultListen, "websocket API address (\"\" or \"off\" disables it)")
	root.Flags().StringVar(&cfg.theme, "theme", themes.Auto, "colour theme: "+fmt.Sprint(themes.Names()))
	root.Flags().BoolVar(&cfg.demo, "demo", false, "fill a scratch data dir with demo topics and keep producing to them")
	root.Flags().StringVar(&cfg.topic, "topic", "", "open the UI on this topic's partitions")
	root.Flags().BoolVar(&cfg.noAlt, "no-alt-screen", false, "draw inline instead of on the terminal's alternate screen")
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.dir, cfg.dirSet = *data, cmd.Flags().Changed("data")
		cfg.noListen = cfg.listen == "" || cfg.listen == "off"
		return runUI(cmd.Context(), cfg)
	}
}

// uiShutdownWait bounds how long quitting the UI waits for the websocket
// API's produces in flight to be acked.
const uiShutdownWait = 5 * time.Second

// startUIWebsocket serves the websocket API of e on addr from this process
// (the same server `pulse serve` runs headless, with its default options).
// It returns the address it listens on and a stop function that shuts the
// server down (acking produces in flight) before the engine closes.
func startUIWebsocket(e *engine.Engine, addr string) (string, func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("websocket API on %s: %w (use --listen ADDR, or --listen off)", addr, err)
	}
	if ta, ok := l.Addr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() {
		l.Close()
		return "", nil, fmt.Errorf("websocket API on %s: not a loopback address; the UI serves localhost only (pulse serve --token serves others)", addr)
	}
	srv := wsapi.New(e, wsapi.DefaultOptions())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), uiShutdownWait)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	}
	return l.Addr().String(), stop, nil
}

// uiSource is the engine as the UI sees it: *engine.Engine satisfies
// tui.Source directly; the wrapper adds the optional views the UI looks for.
type uiSource struct {
	*engine.Engine
}

func runUI(ctx context.Context, cfg uiConfig) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Refuse a bad theme before touching the data directory.
	if _, err := themes.New(themes.Options{Name: cfg.theme}); err != nil {
		return fmt.Errorf("--theme: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
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
	e, err := engine.Open(engine.DefaultOptions(dir))
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer e.Close()

	listen := ""
	if !cfg.noListen {
		addr, stopWS, err := startUIWebsocket(e, cfg.listen)
		if err != nil {
			return err
		}
		defer stopWS()
		listen = addr
	}

	if cfg.demo {
		if err := seedDemo(ctx, e); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		demoCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); runDemo(demoCtx, e, defaultDemoRate) }()
		defer func() { cancel(); <-done }()
	}

	m, err := tui.New(tui.Options{
		Source:     uiSource{e},
		Listen:     listen,
		SyncMode:   string(engine.DefaultTopicConfig().SyncMode),
		Theme:      cfg.theme,
		NoColor:    themes.NoColor(),
		StartTopic: cfg.topic,
	})
	if err != nil {
		return err
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithMouseCellMotion()}
	if !cfg.noAlt {
		opts = append(opts, tea.WithAltScreen())
	}
	if _, err := tea.NewProgram(m, opts...).Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}
