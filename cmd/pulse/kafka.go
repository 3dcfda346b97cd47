package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/kafka"
)

// defaultKafkaListen is where the Kafka listener listens unless
// --kafka-listen says otherwise.
const defaultKafkaListen = "127.0.0.1:9092"

// kafkaFlag adds --kafka-listen to cmd and returns a function giving the
// address and whether it was set explicitly.
func kafkaFlag(cmd *cobra.Command) func() (string, bool) {
	var listen string
	cmd.Flags().StringVar(&listen, "kafka-listen", defaultKafkaListen, `Kafka wire-protocol listener address ("" or "off" disables it; see docs/kafka.md)`)
	return func() (string, bool) { return listen, cmd.Flags().Changed("kafka-listen") }
}

// startKafka serves the Kafka protocol of eng on listen, its produces and
// fetches going through records when it is not nil (the metered engine).
// An empty listen disables it. When the address is taken, an explicit --kafka-listen is an
// error, the default one a warning on warn (Pulse runs without it). stop
// closes the listener and its connections; it does not close eng.
func startKafka(eng *engine.Engine, records kafka.RecordPath, listen string, explicit, noAutoCreate bool, logger *slog.Logger, warn io.Writer) (addr string, stop func(), err error) {
	addr, _, stop, err = startKafkaServer(eng, records, listen, explicit, noAutoCreate, logger, warn)
	return addr, stop, err
}

// startKafkaServer is startKafka that also returns the listener's server
// (nil when none was started), for the terminal UI's consumer groups.
func startKafkaServer(eng *engine.Engine, records kafka.RecordPath, listen string, explicit, noAutoCreate bool, logger *slog.Logger, warn io.Writer) (addr string, srv *kafka.Server, stop func(), err error) {
	stop = func() {}
	if listen == "" || listen == "off" {
		return "", nil, stop, nil
	}
	l, err := listenTCP(listen)
	if err != nil {
		if !explicit {
			fmt.Fprintf(warn, "pulse: warning: Kafka listener not started: %v (use --kafka-listen ADDR, or --kafka-listen off)\n", err)
			return "", nil, stop, nil
		}
		return "", nil, nil, fmt.Errorf("kafka listener on %s: %w", listen, err)
	}
	opts := kafka.DefaultOptions()
	opts.AutoCreate = !noAutoCreate
	opts.Records = records
	if logger != nil {
		opts.Logger = logger
	}
	srv = kafka.New(eng, opts)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	stop = func() {
		srv.Close()
		if err := <-served; err != nil && !errors.Is(err, kafka.ErrServerClosed) && logger != nil {
			logger.Error("kafka listener", "err", err)
		}
	}
	return l.Addr().String(), srv, stop, nil
}
