// Command pulse is a local event log for development: a Kafka-style storage
// engine on one data directory, a terminal UI and a websocket API on localhost.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// commands holds the constructors of the subcommands; each command's file
// registers itself from init().
var commands []func() *cobra.Command

func register(newCmd func() *cobra.Command) { commands = append(commands, newCmd) }

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
	for _, c := range commands {
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
