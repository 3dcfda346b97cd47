//go:build !windows

package main

import (
	"errors"
	"syscall"
)

// addrInUse reports whether err is a listen that failed because the
// address is taken.
func addrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
