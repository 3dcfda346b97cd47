package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfileFlag adds the hidden --cpuprofile flag: any command writes a Go
// CPU profile of its whole run to the file (for `go tool pprof`), which is
// how the figures of `pulse bench --ws` are taken apart between the bench
// client and a `pulse serve`.
func addProfileFlag(root *cobra.Command) {
	var path string
	var f *os.File
	root.PersistentFlags().StringVar(&path, "cpuprofile", "", "write a CPU profile of this run to `file`")
	root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if path == "" {
			return nil
		}
		var err error
		if f, err = os.Create(path); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("cpu profile %s: %w", path, err)
		}
		return nil
	}
	root.PersistentPostRunE = func(cmd *cobra.Command, args []string) error {
		if f == nil {
			return nil
		}
		pprof.StopCPUProfile()
		return f.Close()
	}
}
