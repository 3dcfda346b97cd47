// Command pulse is a local event log for development: a Kafka-style storage
// engine on one data directory, a terminal UI and a websocket API on localhost.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// subcommands are the constructors of pulse's subcommands, each in its
// command's file.
var subcommands = []func() *cobra.Command{
	newBenchCmd,
	newConsumersCmd,
	newCrashlabCmd,
	newDumpCmd,
	newInspectCmd,
	newMetaCmd,
	newMirrorCmd,
	newProduceCmd,
	newServeCmd,
	newTailCmd,
	newTopicsCmd,
	newVerifyCmd,
	newVersionCmd,
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "pulse",
		Short:         "A local event log for development",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(), // --version, as `pulse version`
	}
	root.SetVersionTemplate("{{.Version}}\n")
	setupRoot(root)
	addProfileFlag(root)
	for _, c := range subcommands {
		root.AddCommand(c())
	}
	rejectUnknownSubcommands(root)
	return root
}

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "pulse:", err)
		os.Exit(1)
	}
}
