//go:build !linux

package bench

import (
	"errors"
	"time"
)

// errNotThisOS is why the figures read from /proc are missing elsewhere.
var errNotThisOS = errors.New("not measured on this OS")

func processCPU(pid int) (time.Duration, error)        { return 0, errNotThisOS }
func processIO(pid int) (read, write int64, err error) { return 0, 0, errNotThisOS }
func listenerPID(addr string) (int, error)             { return 0, errNotThisOS }
func dropPageCache() error                             { return errNotThisOS }
