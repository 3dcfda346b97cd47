package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this pulse binary (as --version does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}

// versionString describes this binary from the build information the Go
// toolchain embeds: the module version, the VCS revision and commit time
// when it was built from a checkout, the Go version and the target, e.g.
// "pulse v0.0.0-20261201134500-bfb82e0a1b2c+dirty (revision bfb82e0a1b2c,
// modified, 2026-12-01T13:40:00Z) go1.26.8 linux/amd64".
func versionString() string {
	version, details := "unknown", []string(nil)
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		var rev, at string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			details = append(details, "revision "+rev)
			if modified {
				details = append(details, "modified")
			}
		}
		if at != "" {
			details = append(details, at)
		}
	}
	s := "pulse " + version
	if len(details) > 0 {
		s += " (" + strings.Join(details, ", ") + ")"
	}
	return s + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
