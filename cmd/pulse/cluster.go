package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/kafka/cluster"
	"github.com/pulselog/pulse/themes"
	"github.com/pulselog/pulse/tui"
)

// kafkaFlags are the --kafka* flags of `pulse`, `pulse serve` and
// `pulse mirror`: how to reach a Kafka or Redpanda cluster.
type kafkaFlags struct {
	flag     string // the flag of the bootstrap list: "kafka" or "to"
	brokers  string
	tls      bool
	ca       string
	cert     string
	key      string
	sasl     string
	clientID string
}

// addKafkaFlags adds the connection flags; prefix is "kafka" (pulse,
// pulse serve) or "to" (pulse mirror --to BROKERS).
func addKafkaFlags(cmd *cobra.Command, brokersFlag, brokersHelp string) *kafkaFlags {
	k := &kafkaFlags{flag: brokersFlag}
	f := cmd.Flags()
	f.StringVar(&k.brokers, brokersFlag, os.Getenv("PULSE_KAFKA"), brokersHelp)
	f.BoolVar(&k.tls, "kafka-tls", false, "connect to the cluster with TLS (system roots unless --kafka-ca)")
	f.StringVar(&k.ca, "kafka-ca", "", "PEM file of the CA that signed the brokers' certificates (implies --kafka-tls)")
	f.StringVar(&k.cert, "kafka-cert", "", "PEM client certificate for the cluster (with --kafka-key; implies --kafka-tls)")
	f.StringVar(&k.key, "kafka-key", "", "PEM private key of --kafka-cert")
	f.StringVar(&k.sasl, "kafka-sasl", "", "SASL as mechanism:user:password, mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (env PULSE_KAFKA_SASL)")
	f.StringVar(&k.clientID, "kafka-client-id", "pulse", "Kafka client id")
	return k
}

// errExclusive: --data and --kafka name two different sources.
var errExclusive = errors.New("--data and --kafka exclude each other: Pulse shows either a data dir or a cluster")

func (k *kafkaFlags) enabled() bool { return k != nil && k.brokers != "" }

func (k *kafkaFlags) config() cluster.Config {
	if k.sasl == "" {
		k.sasl = os.Getenv("PULSE_KAFKA_SASL") // read here, so --help never prints it
	}
	return cluster.Config{
		Brokers: cluster.ParseBrokers(k.brokers), TLS: k.tls, CAFile: k.ca, CertFile: k.cert, KeyFile: k.key,
		SASL: k.sasl, ClientID: k.clientID,
	}
}

// open connects to the cluster, failing within a few seconds when no
// broker answers; the error names the flag of the bootstrap list.
func (k *kafkaFlags) open() (*cluster.Source, error) {
	src, err := cluster.Open(k.config())
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", k.flag, err)
	}
	return src, nil
}

// runServeCluster is `pulse serve --kafka`: the websocket API on a cluster.
func runServeCluster(cmd *cobra.Command, k *kafkaFlags, cfg apiConfig) error {
	if cmd.Flags().Changed("data") {
		return errExclusive
	}
	ctx, stopSignals, generated, err := cfg.start(cmd)
	if err != nil {
		return err
	}
	defer stopSignals()
	src, err := k.open()
	if err != nil {
		return err
	}
	defer src.Close()
	addr, stop, err := startAPI(ctx, src, cfg)
	if err != nil {
		return err
	}
	banner := fmt.Sprintf("pulse: serving %s on ws://%s/v1/ws", src.Name(), addr)
	if generated {
		banner += " token " + cfg.Token
	} else if cfg.Token != "" {
		banner += " (token required)"
	}
	fmt.Fprintln(cmd.OutOrStdout(), banner)
	<-ctx.Done()
	fmt.Fprintln(cmd.ErrOrStderr(), "pulse: shutting down")
	if err := stop(); err != nil {
		return fmt.Errorf("stopping the websocket API: %w", err)
	}
	return nil
}

// runUICluster is `pulse --kafka`: the terminal UI and the websocket API
// on a cluster.
func runUICluster(ctx context.Context, k *kafkaFlags, cfg uiConfig) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.demo {
		return errors.New("--demo fills a local data dir; it cannot be combined with --kafka")
	}
	if cfg.dirSet {
		return errExclusive
	}
	if _, err := themes.New(themes.Options{Name: cfg.theme}); err != nil {
		return fmt.Errorf("--theme: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, stopSignals()...)
	defer stop()
	src, err := k.open()
	if err != nil {
		return err
	}
	defer src.Close()
	listen := ""
	if !cfg.noListen {
		addr, stopAPI, err := startAPI(ctx, src, apiConfig{Listen: cfg.listen})
		if err != nil {
			return err
		}
		defer stopAPI()
		listen = addr
	}
	m, err := tui.New(tui.Options{
		Source:      src,
		DataDirName: src.Name(),
		Listen:      listen,
		Theme:       cfg.theme,
		NoColor:     themes.NoColor(),
		StartTopic:  cfg.topic,
	})
	if err != nil {
		return err
	}
	defer m.Close()
	return runProgram(ctx, m, cfg.noAlt)
}
