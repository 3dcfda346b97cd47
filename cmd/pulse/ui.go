package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// setupRoot makes the bare `pulse` command open the terminal UI.
func setupRoot(root *cobra.Command) {
	root.RunE = func(cmd *cobra.Command, args []string) error {
		fmt.Fprintln(cmd.OutOrStdout(), "pulse: the terminal UI is not built yet; see `pulse --help` for the commands that are")
		return nil
	}
}
