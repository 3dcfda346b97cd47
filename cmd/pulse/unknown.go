package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// rejectUnknownSubcommands makes every command that only groups
// subcommands (pulse topics, pulse meta, ...) fail on an unknown one, with
// cobra's suggestion, instead of printing its help and exiting 0. Without
// arguments such a command still prints its help.
func rejectUnknownSubcommands(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if !cmd.HasSubCommands() {
		return
	}
	cmd.SuggestionsMinimumDistance = 2
	if !cmd.HasParent() {
		// The root runs the UI and takes no arguments: any is a mistyped
		// command.
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		}
		return
	}
	if cmd.Run != nil || cmd.RunE != nil {
		return
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownCommand(cmd, args[0])
	}
}

// unknownCommand is the error for name, a subcommand cmd does not have.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if sugg := cmd.SuggestionsFor(name); len(sugg) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", strings.Join(quoteAll(cmd.CommandPath(), sugg), " or "))
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" {
			names = append(names, c.Name())
		}
	}
	return fmt.Errorf("%s (commands: %s)", msg, strings.Join(names, ", "))
}

func quoteAll(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", prefix+" "+n)
	}
	return out
}
