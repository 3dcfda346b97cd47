package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// defaultListen is where the websocket API listens unless --listen says otherwise.
const defaultListen = "127.0.0.1:7450"

// defaultDataDir is $PULSE_DATA, else $XDG_DATA_HOME/pulse, else
// ~/.local/share/pulse.
func defaultDataDir() string {
	if d := os.Getenv("PULSE_DATA"); d != "" {
		return d
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "pulse")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "pulse")
	}
	return "pulse-data"
}

// addDataFlag adds --data to cmd and returns where its value lands.
func addDataFlag(cmd *cobra.Command) *string {
	return cmd.Flags().String("data", defaultDataDir(), "data directory (env PULSE_DATA)")
}
